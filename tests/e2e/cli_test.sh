#!/usr/bin/env bash
# Drives the built torchx binary and checks stdout, stderr and exit codes.
# Usage: cli_test.sh <torchx binary> <source dir>
set -u
TORCHX=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

check() {  # check <name> <expected rc> <expected stdout/stderr substring> -- cmd...
  local name=$1 want_rc=$2 want=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc -eq $want_rc && "$out" == *"$want"* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $name: rc=$rc (want $want_rc), output:"
    echo "$out" | head -20
    echo "(wanted substring: $want)"
  fi
}

check "version flag" 0 "torchx-" -- "$TORCHX" --version
check "version verb" 0 "torchx-" -- "$TORCHX" version
check "no subcommand prints help, exits 1" 1 "Subcommands" -- "$TORCHX"
check "unknown verb is a usage error" 2 "" -- "$TORCHX" frobnicate
check "dryrun prints application" 0 "=== APPLICATION ===" -- "$TORCHX" run --dryrun "$SRC/examples/echo.yaml"
check "dryrun expands macros per replica" 0 "echo/1:" -- "$TORCHX" run --dryrun "$SRC/examples/echo.yaml"
out=$("$TORCHX" run --dryrun "$SRC/examples/echo.yaml")
if [[ "$out" == *'"replica", "1"'* && "$out" != *'${replica_id}", '* ]]; then pass=$((pass + 1)); else
  fail=$((fail + 1)); echo "FAIL: replica_id macro not substituted in dry run"; fi

echo '{"name": "x", "roles": [{"name": "r", "entrypoint": "true", "num_replicas": 0, "resource": "cpu.small"}]}' > "$TMP/bad.json"
check "invalid spec names field, exits 2" 2 "num_replicas: must be >= 1" -- "$TORCHX" run --dryrun "$TMP/bad.json"
echo '{"name": "x", "rolez": []}' > "$TMP/typo.json"
check "unknown field suggests" 2 "Did you mean \`roles\`?" -- "$TORCHX" run --dryrun "$TMP/typo.json"
check "missing spec file" 2 "cannot be read" -- "$TORCHX" run --dryrun "$TMP/nope.json"
check "run without a scheduler says so" 1 "not available in this build yet" -- "$TORCHX" run "$SRC/examples/echo.yaml"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

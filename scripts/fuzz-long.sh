#!/usr/bin/env bash
# The long fuzzing run (issue 20): each target (all, or those named) runs until it has executed RUNS
# inputs (default 10 million), exploring from a fresh seed on a scratch copy of its corpus. The
# grown corpus is then minimized (-merge=1) back into tests/fuzz/corpus/<target>/, so every CI run
# (scripts/fuzz.sh) replays what the long run found under ASan + UBSan. The targets are built with
# the `fuzz-long` preset (UBSan only: more executions per second than with ASan) unless
# PRESET=fuzz. A crash stops the run and leaves its input in build/<preset>/artifacts/. The
# executions per target are printed as a Markdown table for docs/reliability.md. Not part of CI:
# run it by hand or from a scheduled job; on a 2-core machine, two runs over disjoint targets.
#   usage: scripts/fuzz-long.sh [target...]      RUNS=10000000 PRESET=fuzz-long by default
#   FUZZ_FLAGS adds libFuzzer flags, e.g. FUZZ_FLAGS=-max_len=512 for a one-line input (cfg_string)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10000000}
PRESET=${PRESET:-fuzz-long}
cmake --preset "$PRESET" >/dev/null
cmake --build --preset "$PRESET"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for corpus in tests/fuzz/corpus/*/; do targets+=("$(basename "$corpus")"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "build/$PRESET/artifacts"
rows=()
for name in "${targets[@]}"; do
  fuzzer=build/$PRESET/tests/fuzz/${name}_fuzz
  [ -x "$fuzzer" ] || { echo "fuzz-long: no target \`$name\` (have: $(ls tests/fuzz/corpus | tr '\n' ' '))" >&2; exit 2; }
  cp -r "tests/fuzz/corpus/$name" "$work/$name"
  echo "fuzz-long: $name for $RUNS executions" >&2
  start=$(date +%s)
  # shellcheck disable=SC2086  # FUZZ_FLAGS is a list of flags
  "$fuzzer" -runs="$RUNS" -seed=0 -rss_limit_mb=2048 -print_final_stats=1 ${FUZZ_FLAGS:-} \
    -artifact_prefix="build/$PRESET/artifacts/${name}-" "$work/$name" > "$work/$name.log" 2>&1 \
    || { tail -40 "$work/$name.log"; echo "fuzz-long: $name FAILED" >&2; exit 1; }
  seconds=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
  # Minimize: the merge keeps the inputs that add coverage, old seeds first.
  mkdir "$work/$name.min"
  "$fuzzer" -merge=1 -rss_limit_mb=2048 "$work/$name.min" "tests/fuzz/corpus/$name" "$work/$name" \
    > "$work/$name.merge.log" 2>&1 || { tail -20 "$work/$name.merge.log"; exit 1; }
  # Named inputs (seeds, regressions) stay under their names; the merge names what it keeps by
  # content hash, so a named input's hashed copy is dropped.
  for f in "tests/fuzz/corpus/$name"/*; do
    base=$(basename "$f")
    [[ $base =~ ^[0-9a-f]{40}$ ]] && continue
    rm -f "$work/$name.min/$(sha1sum < "$f" | cut -c1-40)"
    cp "$f" "$work/$name.min/$base"
  done
  rm -rf "tests/fuzz/corpus/$name"
  mv "$work/$name.min" "tests/fuzz/corpus/$name"
  kept=$(ls "tests/fuzz/corpus/$name" | wc -l)
  rows+=("| $name | $execs | ${seconds} s | $kept |")
  echo "fuzz-long: $name ran $execs inputs in ${seconds}s, clean; corpus minimized to $kept inputs" >&2
done
echo "| target | executions | time | corpus kept |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"

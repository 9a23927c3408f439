#!/usr/bin/env bash
# Runs TorchX's own unit tests of its public API against an installed `torchx` Python package (in a
# virtual environment: TorchX itself, e.g. torchx-nightly, or this project's), from outside any
# source tree, and prints pass/total per test file and in all, with the failure causes ranked.
#
# Usage: run_compat.sh [VENV] [-s TORCHX_SRC] [-l SELECTION|all] [-o OUTDIR] [-t SECONDS] [-p] [-P] [-S FILE]
#   VENV  a virtual environment (or prefix with bin/python) holding `torchx` and pytest (default:
#         $TORCHX_VENV, this project's env, scripts/venv.sh)
#   -s    a TorchX source tree: the directory holding torchx/ with its test/ folders
#         (default: $TORCHX_SRC; see README.md for how to get one)
#   -l    a file of pytest node ids, one a line, '#' comments allowed (default: selection.txt beside
#         this script); `all`: every test file under torchx/{specs,components,runner,plugins,schedulers,cli,workspace}/test
#   -o    where the test tree, raw log and results go (default: a new directory under /tmp)
#   -t    per-test time limit in seconds (default 120)
#   -p    stub private names: where a test file imports, at module level, a private torchx name (or
#         from a private module) that the package lacks, put a stub there so that the file's public
#         tests can load (the stubs raise if used; the summary lists them)
#   -P    also probe the whole missing API surface (every torchx name each selected test uses,
#         checked in the package; pytest only shows a file's first failing import): OUTDIR/probe.txt
#   -S    after the run, write FILE: the tests that passed and reach no private internals (use with
#         -l all on the reference package to make a selection)
#
# How the tests see the package: only TorchX's test/ folders are copied, into OUTDIR/tree/torchx/...
# A pytest plugin imports the installed torchx (and its subpackages) first, then appends the copied
# folders to their __path__, so test modules keep their own names (torchx.specs.test.api_test) and
# their helpers (torchx.test.fixtures, torchx.specs.test.components) resolve, while every non-test
# module comes from the installed package. The tree's torchx/__init__.py files are placeholders that
# raise, so a subpackage the package lacks shows up as "No module named 'torchx.X'".
# Outputs in OUTDIR: pytest.log (raw), results.json (per-test outcome and failure message),
# summary.txt (what is printed), probe.txt (-P).
set -euo pipefail

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
if [[ $# -ge 1 && $1 != -* ]]; then
  VENV=$(cd "$1" && pwd)
  shift
elif [[ -n ${TORCHX_VENV:-} ]]; then
  VENV=$(cd "$TORCHX_VENV" && pwd)  # this project's env (scripts/venv.sh)
else
  usage
fi
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${TORCHX_SRC:-}
SEL="$HERE/selection.txt"
OUTDIR="" PER_TEST=120 STUB=0 PROBE=0 WRITE_SEL=""
while getopts "s:l:o:t:pPS:h" opt; do
  case $opt in
    s) SRC=$OPTARG ;; l) SEL=$OPTARG ;; o) OUTDIR=$OPTARG ;; t) PER_TEST=$OPTARG ;;
    p) STUB=1 ;; P) PROBE=1 ;; S) WRITE_SEL=$OPTARG ;; *) usage ;;
  esac
done
PY="$VENV/bin/python"
[[ -x $PY ]] || { echo "run_compat: no $PY" >&2; exit 2; }
[[ -n $SRC && -d $SRC/torchx ]] || { echo "run_compat: no TorchX source tree at $SRC (want $SRC/torchx)" >&2; exit 2; }
"$PY" -c 'import pytest' 2>/dev/null || { echo "run_compat: pytest is not installed in $VENV" >&2; exit 2; }
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "run_compat: needs Python >= 3.11 (PYTHONSAFEPATH)" >&2; exit 2; }
if [[ $SEL != all ]]; then
  SEL=$(cd "$(dirname "$SEL")" && pwd)/$(basename "$SEL")
  [[ -f $SEL ]] || { echo "run_compat: no selection file $SEL" >&2; exit 2; }
fi
[[ -n $OUTDIR ]] || OUTDIR=$(mktemp -d /tmp/torchx-compat.XXXXXX)
mkdir -p "$OUTDIR"; OUTDIR=$(cd "$OUTDIR" && pwd)

AREAS="specs components runner plugins schedulers cli workspace"
TREE="$OUTDIR/tree" TOOLS="$HERE"
rm -rf "$TREE" "$OUTDIR/home" "$OUTDIR/results.json" "$OUTDIR/probe.txt"
mkdir -p "$TREE/torchx" "$OUTDIR/home"

# 1. The test tree: TorchX's test folders (and the test-helper packages torchx/test, torchx/util/test)
#    under placeholder package directories.
placeholder() {
  echo "raise ModuleNotFoundError(\"No module named '$1' (not in the installed package; this is a placeholder of the compat test tree)\", name=\"$1\")"
}
placeholder torchx >"$TREE/torchx/__init__.py"
for d in $AREAS util; do
  mkdir -p "$TREE/torchx/$d"; placeholder "torchx.$d" >"$TREE/torchx/$d/__init__.py"
done
for d in test util/test $(printf '%s/test ' $AREAS); do
  if [[ -d $SRC/torchx/$d ]]; then mkdir -p "$TREE/torchx/$d"; cp -R "$SRC/torchx/$d/." "$TREE/torchx/$d/"; fi
done
find "$TREE" -name __pycache__ -prune -exec rm -rf {} +
printf '[pytest]\npython_files = *_test.py\naddopts = -p no:cacheprovider\n' >"$TREE/pytest.ini"


# 2. The pytest plugin and the helpers (summary, classify, select, probe) sit beside this script.

# 3. Run pytest in the tree on the selection's files; the plugin keeps the selection's tests.
#    PYTHONSAFEPATH: the tree's placeholder torchx must never come before the installed one.
if [[ $SEL == all ]]; then
  ARGS=(); for d in $AREAS; do [[ -d $TREE/torchx/$d/test ]] && ARGS+=("torchx/$d/test"); done
else
  mapfile -t ARGS < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/::.*//' "$SEL" | grep -v '^$' | sort -u)
fi
printf '%s\n' "${ARGS[@]}" >"$OUTDIR/args.txt"
set +e
( cd "$TREE" && env HOME="$OUTDIR/home" PYTHONSAFEPATH=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$TOOLS" \
    TORCHX_COMPAT_TREE="$TREE" TORCHX_COMPAT_RESULTS="$OUTDIR/results.json" TORCHX_COMPAT_PER_TEST="$PER_TEST" \
    TORCHX_COMPAT_SELECTION="$([[ $SEL == all ]] || echo "$SEL")" TORCHX_COMPAT_STUB_PRIVATE="$STUB" \
    "$PY" -m pytest -p torchx_compat_plugin -q -rfE --continue-on-collection-errors --tb=short "@$OUTDIR/args.txt" ) \
  >"$OUTDIR/pytest.log" 2>&1
RC=$?
set -e
if [[ ! -f $OUTDIR/results.json ]]; then
  echo "run_compat: pytest wrote no results (exit $RC); see $OUTDIR/pytest.log" >&2
  tail -20 "$OUTDIR/pytest.log" >&2; exit 1
fi

# 4. Summary, and on request the probe and a new selection.
"$PY" "$TOOLS/compat_tools.py" summary "$OUTDIR/results.json" "$SEL" >"$OUTDIR/summary.txt"
cat "$OUTDIR/summary.txt"
if [[ $PROBE == 1 ]]; then
  if [[ $SEL == all ]]; then "$PY" -c 'import json,sys; print("\n".join(sorted(json.load(open(sys.argv[1]))["tests"])))' \
      "$OUTDIR/results.json" >"$OUTDIR/all-ids.txt"; PSEL="$OUTDIR/all-ids.txt"; else PSEL=$SEL; fi
  ( cd "$OUTDIR" && env HOME="$OUTDIR/home" PYTHONSAFEPATH=1 "$PY" "$TOOLS/compat_tools.py" probe "$TREE" "$PSEL" ) \
    >"$OUTDIR/probe.txt" 2>"$OUTDIR/probe.err" || echo "run_compat: probe failed, see $OUTDIR/probe.err" >&2
  echo; sed -n '1,/^per test/p' "$OUTDIR/probe.txt" | sed '$d'
fi
if [[ -n $WRITE_SEL ]]; then
  "$PY" "$TOOLS/compat_tools.py" select "$TREE" "$OUTDIR/results.json" "$WRITE_SEL"
fi
echo "run_compat: raw log $OUTDIR/pytest.log, results $OUTDIR/results.json" >&2

#!/usr/bin/env bash
# Runs NeMo-Run's own test suite (github.com/NVIDIA-NeMo/Run, PyPI `nemo-run`) against a chosen
# `torchx`, from outside any source tree, and prints the pass/fail/error/skip counts and the failing
# test ids with the first line of each failure.
#
# Usage: run_nemo_run.sh -s NEMO_RUN_SRC -t TORCHX_SPEC [-o OUTDIR] [-c COMMIT] [-e EXTRAS]
#                        [-p PYTHON] [-T SECONDS] [-b REF_OUTDIR] [-r] [-- PYTEST_ARGS...]
#   -s  a NeMo-Run source tree (test/, pyproject.toml, uv.lock): a clone, or `git archive | tar -x`
#   -t  the torchx under test:  torchx==0.7.0 (any pip requirement; 0.7.0 is what uv.lock pins)
#         | /path/to/checkout   this project's tree, built into the venv by `pip install
#                               --no-build-isolation` (C++, minutes; build dir under OUTDIR)
#         | site:PREFIX         the torchx already installed in the Python at PREFIX (e.g.
#                               site:/root/.pyenv/versions/3.11.7), copied unchanged: every file its
#                               dist-info RECORD lists (package, .so, bin/ programs); no rebuild
#   -o  output directory (default: a new /tmp/nemo-run-compat.XXXXXX); the venv is OUTDIR/venv
#   -c  the NeMo-Run commit, for the summary (default: `git rev-parse HEAD` in the tree, if a clone)
#   -e  NeMo-Run extras from uv.lock, comma-separated (default: skypilot, as NeMo-Run's CI syncs)
#   -p  the Python for the venv (default: PREFIX/bin/python for site:, else python3.11)
#   -T  per-test limit in seconds, via pytest-timeout (default 300; 0: none)
#   -b  the OUTDIR of a reference run: also list the tests that passed there and do not here
#   -r  reuse OUTDIR/venv's dependencies (skip the lock install; torchx is still re-installed)
#   PYTEST_ARGS replace the default `test` (paths are relative to the copied tree; e.g. -- test/run -x)
# Steps: (1) venv; (2) uv installs the lock (`uv export --frozen`: default groups incl. dev, plus
# the extras) with --no-deps, as `uv sync` would, then NeMo-Run itself from the tree (not editable),
# and pytest-timeout; (3) the torchx under test replaces the locked one with --no-deps; only its
# missing requirements are added, every locked package pinned (--overrides), and `torchx.__file__`
# must lie in the venv; (4) test/ and pyproject.toml (its [tool.pytest] options: -m "not slow") are
# copied to OUTDIR/tree, so `nemo_run` can only be the installed one; pytest runs there with HOME,
# NEMORUN_HOME and the pytest temp dir inside OUTDIR.
# Outputs in OUTDIR: summary.txt (what is printed), pytest.log (raw), results.xml (junit xunit1),
# results.tsv (node id, outcome, first line), install.log, torchx.txt, pip-check.txt.
set -euo pipefail

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
SRC="" SPEC="" OUTDIR="" COMMIT="" EXTRAS=skypilot PYTHON="" PER_TEST=300 BASE="" REUSE=0
while getopts "s:t:o:c:e:p:T:b:rh" opt; do
  case $opt in
    s) SRC=$OPTARG ;; t) SPEC=$OPTARG ;; o) OUTDIR=$OPTARG ;; c) COMMIT=$OPTARG ;; e) EXTRAS=$OPTARG ;;
    p) PYTHON=$OPTARG ;; T) PER_TEST=$OPTARG ;; b) BASE=$(cd "$OPTARG" && pwd) ;; r) REUSE=1 ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
die() { echo "run_nemo_run: $*" >&2; exit 2; }
step() { echo "run_nemo_run: $*" >&2; }
[[ -n $SRC && -n $SPEC ]] || usage
SRC=$(cd "$SRC" && pwd)
[[ -d $SRC/test && -f $SRC/pyproject.toml && -f $SRC/uv.lock ]] || die "no test/, pyproject.toml, uv.lock in $SRC"
[[ -n $COMMIT ]] || COMMIT=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ $SPEC == site:* ]]; then
  PYTHON=${PYTHON:-${SPEC#site:}/bin/python}
  "$PYTHON" -c 'import importlib.metadata as m; m.distribution("torchx")' 2>/dev/null || die "no torchx in $SPEC"
elif [[ -d $SPEC ]]; then SPEC=$(cd "$SPEC" && pwd); fi
PYTHON=${PYTHON:-python3.11}
[[ -n $OUTDIR ]] || OUTDIR=$(mktemp -d /tmp/nemo-run-compat.XXXXXX)
mkdir -p "$OUTDIR"; OUTDIR=$(cd "$OUTDIR" && pwd)
VENV=$OUTDIR/venv VPY=$OUTDIR/venv/bin/python LOG=$OUTDIR/install.log LOCK=$OUTDIR/requirements.lock.txt
: >"$LOG"; T0=$SECONDS

# uv stays outside the test venv: $UV, else uv on PATH, else a private venv in OUTDIR.
UV=${UV:-$(command -v uv || true)}
if [[ -z $UV ]]; then
  UV=$OUTDIR/uv-venv/bin/uv
  [[ -x $UV ]] || { "$PYTHON" -m venv "$OUTDIR/uv-venv" && "$OUTDIR/uv-venv/bin/pip" -q install uv; } >>"$LOG" 2>&1
fi
uvpip() { "$UV" pip "$1" --python "$VPY" "${@:2}" >>"$LOG" 2>&1 || { tail -20 "$LOG" >&2; die "uv pip $1 failed, see $LOG"; }; }

# 1-2. The venv, exactly the locked dependencies, NeMo-Run itself.
if [[ $REUSE == 0 || ! -x $VPY || ! -f $LOCK ]]; then
  step "venv + locked dependencies (extras: ${EXTRAS:-none})"
  rm -rf "$VENV"; "$PYTHON" -m venv "$VENV"
  EX=(); IFS=, read -ra XS <<<"$EXTRAS"; for x in "${XS[@]}"; do EX+=(--extra "$x"); done
  "$UV" export --project "$SRC" --frozen --no-hashes --no-emit-project "${EX[@]}" -o "$LOCK" >>"$LOG" 2>&1 \
    || die "uv export failed, see $LOG"
  uvpip install --no-deps -r "$LOCK"
  uvpip install --no-deps --reinstall-package nemo-run "$SRC"
  uvpip install pytest-timeout
fi

# 3. The torchx under test, over the locked one.
step "torchx under test: $SPEC"
VSP=$("$VPY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
if [[ $SPEC == site:* ]]; then
  uvpip uninstall torchx
  "$VPY" - "$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" "$VSP" <<'EOF' >>"$LOG" 2>&1
import csv, glob, os, shutil, sys   # copy each RECORD file to the same place relative to site-packages
src, dst = sys.argv[1:]
(record,) = glob.glob(os.path.join(src, "torchx-*.dist-info", "RECORD"))
for row in csv.reader(open(record)):
    s, d = (os.path.normpath(os.path.join(p, row[0])) for p in (src, dst))
    if os.path.isfile(s) and "__pycache__" not in s:
        os.makedirs(os.path.dirname(d), exist_ok=True); shutil.copy2(s, d)
EOF
elif [[ -d $SPEC ]]; then
  uvpip install scikit-build-core pybind11 pip
  "$VENV/bin/pip" install --no-build-isolation --force-reinstall --no-deps -C build-dir="$OUTDIR/torchx-build" \
    "$SPEC" >>"$LOG" 2>&1 || die "building $SPEC failed, see $LOG"
else
  uvpip install --no-deps --reinstall-package torchx "$SPEC"
fi
# Its own requirements where missing; nothing locked moves (the lock overrides 0.7.0's urllib3<1.27).
"$VPY" -c 'import importlib.metadata as m; print("\n".join(r for r in m.requires("torchx") or [] if "extra ==" not in r))' >"$OUTDIR/torchx-requires.txt"
grep -v '^torchx==' "$LOCK" >"$OUTDIR/overrides.txt" || true
[[ ! -s $OUTDIR/torchx-requires.txt ]] || uvpip install --overrides "$OUTDIR/overrides.txt" -r "$OUTDIR/torchx-requires.txt"
( cd "$OUTDIR" && "$VPY" -c 'import torchx, importlib.metadata as m; print(torchx.__file__, m.version("torchx"))' ) \
  >"$OUTDIR/torchx.txt" || die "import torchx failed in $VENV"
read -r GOT _ <"$OUTDIR/torchx.txt"
[[ $GOT == "$VSP/torchx/__init__.py" ]] || die "torchx comes from $GOT, not $VSP/torchx"
"$UV" pip check --python "$VPY" >"$OUTDIR/pip-check.txt" 2>&1 || true   # for information only
INSTALL_S=$((SECONDS - T0))

# 4. The tree (NeMo-Run's test/ and pytest options only) and the run. A fresh HOME has no git
#    identity and the tests' git fixtures commit, so they get one.
step "pytest (install took ${INSTALL_S}s)"
rm -rf "$OUTDIR/tree" "$OUTDIR/home"; mkdir -p "$OUTDIR/tree" "$OUTDIR/home"
cp -R "$SRC/test" "$SRC/pyproject.toml" "$OUTDIR/tree/"
find "$OUTDIR/tree" -name __pycache__ -prune -exec rm -rf {} +
TMO=(); if [[ $PER_TEST != 0 ]] && "$VPY" -c 'import pytest_timeout' 2>/dev/null; then TMO=(--timeout "$PER_TEST"); fi
[[ $# -gt 0 ]] || set -- test
T1=$SECONDS
set +e
( cd "$OUTDIR/tree" && env HOME="$OUTDIR/home" NEMORUN_HOME="$OUTDIR/home/.nemo_run" PYTHONDONTWRITEBYTECODE=1 \
    GIT_AUTHOR_NAME=compat GIT_AUTHOR_EMAIL=compat@example.com GIT_COMMITTER_NAME=compat GIT_COMMITTER_EMAIL=compat@example.com \
    "$VPY" -m pytest -p no:cacheprovider -p no:sugar -rfE --tb=short "${TMO[@]}" --basetemp="$OUTDIR/tmp" \
    -o junit_family=xunit1 --junitxml="$OUTDIR/results.xml" "$@" ) >"$OUTDIR/pytest.log" 2>&1
RC=$?
set -e
PYTEST_S=$((SECONDS - T1))
[[ -f $OUTDIR/results.xml ]] || { tail -20 "$OUTDIR/pytest.log" >&2; die "pytest wrote no results (exit $RC)"; }

# 5. Summary from the junit file: node id = file + class + name; the cause is the failure's first
#    line, plus the first raised error where exceptions were chained (junit counts xfail as skipped).
"$VPY" - "$OUTDIR" "$BASE" "$SRC@$COMMIT" "$SPEC" "$INSTALL_S" "$PYTEST_S" "$RC" <<'EOF' >"$OUTDIR/summary.txt"
import sys, xml.etree.ElementTree as ET
out, base, src, spec, t_inst, t_test, rc = sys.argv[1:]
print("NeMo-Run: %s\ntorchx:   %s -> %s" % (src, spec, open(out + "/torchx.txt").read().strip()))
rows = []
for tc in ET.parse(out + "/results.xml").iter("testcase"):
    f, cls, name = tc.get("file"), tc.get("classname") or "", tc.get("name")
    rest = cls[len(f[:-3].replace("/", ".")):].lstrip(".") if f else ""
    nid = "::".join([f] + ([rest.replace(".", "::")] if rest else []) + [name]) if f else f"{cls}.{name}".strip(".")
    kind = next((c for t in ("failure", "error", "skipped") for c in tc if c.tag == t), None)
    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[kind.tag] if kind is not None else "passed"
    msg = ((kind.get("message") or kind.text or "").strip().splitlines() or [""])[0] if kind is not None else ""
    text = (kind.text or "") if kind is not None else ""
    if "During handling of the above exception" in text:
        first = next((l[1:].strip() for l in text.splitlines() if l.startswith("E ")), "")
        if first and first not in msg: msg += "  [first raised: %s]" % first
    rows.append((nid, outcome, msg[:400]))
open(out + "/results.tsv", "w").writelines("\t".join(r) + "\n" for r in rows)
n = {o: sum(r[1] == o for r in rows) for o in ("passed", "failed", "error", "skipped")}
print("total %d: passed %d, failed %d, errors %d, skipped %d   (install %ss, pytest %ss, exit %s)"
      % (len(rows), n["passed"], n["failed"], n["error"], n["skipped"], t_inst, t_test, rc))
bad = [r for r in rows if r[1] in ("failed", "error")]
print("\nfailing (%d):" % len(bad) if bad else "", *("  %-5s %s\n        %s" % (o, i, m) for i, o, m in bad), sep="\n")
if base:
    ref = dict(l.rstrip("\n").split("\t")[:2] for l in open(base + "/results.tsv"))
    reg = [r for r in rows if ref.get(r[0]) == "passed" and r[1] != "passed"]
    print("vs %s: %d pass there and not here" % (base, len(reg)), *("  %s (%s)\n        %s" % r for r in reg), sep="\n")
EOF
cat "$OUTDIR/summary.txt"
grep -E '^=+ .* in [0-9.]+s' "$OUTDIR/pytest.log" | tail -1 | sed 's/^/pytest: /'
echo "run_nemo_run: raw log $OUTDIR/pytest.log, results $OUTDIR/results.xml, $OUTDIR/results.tsv" >&2

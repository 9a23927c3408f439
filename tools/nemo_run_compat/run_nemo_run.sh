#!/usr/bin/env bash
# Runs NeMo-Run's own test suite (github.com/NVIDIA-NeMo/Run, PyPI `nemo-run`) against a chosen
# `torchx`, from outside any source tree, installed as NeMo-Run's users install it, and prints the
# pass/fail/error/skip counts and the failing test ids with the first line of each failure.
#
# Usage: run_nemo_run.sh -s NEMO_RUN_SRC -t TORCHX_SPEC [-o OUTDIR] [-c COMMIT] [-e EXTRAS]
#                        [-P PINS] [-p PYTHON] [-T SECONDS] [-b REF_OUTDIR] [-r] [-- PYTEST_ARGS...]
#   -s  a NeMo-Run source tree (test/, pyproject.toml): a clone, or `git archive | tar -x`
#   -t  the torchx under test:  torchx==0.7.0 (any pip requirement)
#         | /path/to/checkout   this project's tree, built into the venv by `pip install
#                               --no-build-isolation` (C++, minutes; build dir under OUTDIR)
#         | site:PREFIX         the torchx already installed in the Python at PREFIX (e.g.
#                               site:/root/.pyenv/versions/3.11.7), copied unchanged: every file its
#                               dist-info RECORD lists (package, .so, bin/ programs); no rebuild
#   -o  output directory (default: a new /tmp/nemo-run-compat.XXXXXX); the venv is OUTDIR/venv
#   -c  the NeMo-Run commit, for the summary (default: `git rev-parse HEAD` in the tree, if a clone)
#   -e  NeMo-Run extras, comma-separated (default: none, as `pip install nemo-run`; e.g. skypilot)
#   -P  pip constraints for that install, comma-separated (default: PINS below; '' for none)
#   -p  the Python for the venv (default: PREFIX/bin/python for site:, else python3.11)
#   -T  per-test limit in seconds, via pytest-timeout (default 300; 0: none)
#   -b  the OUTDIR of a reference run: also list the tests that passed there and do not here
#   -r  reuse OUTDIR/venv's dependencies (skip steps 1-2; torchx is still re-installed)
#   PYTEST_ARGS replace the default `test` (paths are relative to the copied tree; e.g. -- test/run -x)
# Steps, all with plain pip (no uv, no uv.lock): (1) a fresh venv; (2) `pip install NEMO_RUN_SRC`:
# NeMo-Run (not editable) and its declared dependencies as pip resolves them today (under -P),
# torchx included; then the test tools and the test-only imports below (TEST_DEPS), with everything from
# (2) held where it is (-c the freeze); (3) the torchx under test replaces whatever torchx (2) pulled
# in (--no-deps; the packages the old one brought stay, as after a user's `pip install -U torchx`);
# only its missing requirements are added, nothing installed moves, and `torchx.__file__` must lie
# in the venv; (4) test/ and pyproject.toml (its [tool.pytest] options: -m "not slow") are copied
# to OUTDIR/tree, so `nemo_run` can only be the installed one; pytest runs there with HOME,
# NEMORUN_HOME and the pytest temp dir inside OUTDIR.
# Outputs in OUTDIR: summary.txt (what is printed), pytest.log (raw), results.xml (junit xunit1),
# results.tsv (node id, outcome, first line), install.log, freeze-nemo-run.txt (after `pip install
# NEMO_RUN_SRC`), freeze.txt (as tested), torchx.txt, schedulers.txt, pip-check.txt.
set -euo pipefail

# What NeMo-Run's test files (and the conftest) need that `pip install nemo-run` does not bring.
# Derived from test/**/*.py imports and pyproject's [dependency-groups] dev, at 9339e127; keep short.
TEST_DEPS=(
  pytest            # dev group (pytest>=8.2.0)
  pytest-mock       # dev group: the `mocker` fixture (test_api.py, cli/, devspace/, schedulers/)
  pytest-timeout    # ours, for -T; not NeMo-Run's
  ipython           # dev group via ipykernel: cli/test_api.py patches "IPython.embed"
  kubernetes        # extras kubeflow/ray only: core/execution/test_kubeflow.py, run/ray/test_kuberay.py
  docker            # core/execution/test_docker.py imports docker.errors; torchx 0.7.0 requires it,
                    # torchx >= 0.8 only as its [docker] extra
  importlib-metadata  # cli/test_api.py (and nemo_run/cli/api.py) import importlib_metadata, which
                      # NeMo-Run does not declare; torchx 0.7.0 brings it, torchx >= 0.8 does not
)
# What a user of NeMo-Run 9339e127 has to add to `pip install nemo-run` today for `import nemo_run`
# to work at all (applied as -c constraints to that install; -P overrides):
PINS="leptonai<0.47"  # leptonai 0.47 dropped leptonai.api.v1 (now v2), which nemo_run imports
# Not installed: skypilot (an extra: without it 31 skypilot tests fail and schedulers/test_api.py
# does not collect; -e skypilot adds it), pytest-sugar (-p no:sugar), pytest-cov/coverage (not in
# addopts), ruff, pre-commit, jupyter.

usage() { sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
SRC="" SPEC="" OUTDIR="" COMMIT="" EXTRAS="" PYTHON="" PER_TEST=300 BASE="" REUSE=0
while getopts "s:t:o:c:e:P:p:T:b:rh" opt; do
  case $opt in
    s) SRC=$OPTARG ;; t) SPEC=$OPTARG ;; o) OUTDIR=$OPTARG ;; c) COMMIT=$OPTARG ;; e) EXTRAS=$OPTARG ;; P) PINS=$OPTARG ;;
    p) PYTHON=$OPTARG ;; T) PER_TEST=$OPTARG ;; b) BASE=$(cd "$OPTARG" && pwd) ;; r) REUSE=1 ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
die() { echo "run_nemo_run: $*" >&2; exit 2; }
step() { echo "run_nemo_run: $*" >&2; }
[[ -n $SRC && -n $SPEC ]] || usage
SRC=$(cd "$SRC" && pwd)
[[ -d $SRC/test && -f $SRC/pyproject.toml ]] || die "no test/, pyproject.toml in $SRC"
[[ -n $COMMIT ]] || COMMIT=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
if [[ $SPEC == site:* ]]; then
  PYTHON=${PYTHON:-${SPEC#site:}/bin/python}
  "$PYTHON" -c 'import importlib.metadata as m; m.distribution("torchx")' 2>/dev/null || die "no torchx in $SPEC"
elif [[ -d $SPEC ]]; then SPEC=$(cd "$SPEC" && pwd); fi
PYTHON=${PYTHON:-python3.11}
[[ -n $OUTDIR ]] || OUTDIR=$(mktemp -d /tmp/nemo-run-compat.XXXXXX)
mkdir -p "$OUTDIR"; OUTDIR=$(cd "$OUTDIR" && pwd)
VENV=$OUTDIR/venv VPY=$OUTDIR/venv/bin/python LOG=$OUTDIR/install.log HELD=$OUTDIR/freeze-nemo-run.txt
: >"$LOG"; T0=$SECONDS
pip_() { echo "+ pip $*" >>"$LOG"; "$VPY" -m pip "$@" >>"$LOG" 2>&1 || { tail -20 "$LOG" >&2; die "pip $1 failed, see $LOG"; }; }
# The freeze as pip constraints: name==version lines only (NeMo-Run itself is `name @ file://`).
held() { "$VPY" -m pip freeze --all | grep -E '^[A-Za-z0-9._-]+==' | grep -viE "^($1)==" || true; }

# 1-2. The venv, NeMo-Run as `pip install <tree>` resolves it, then the test tools next to it.
if [[ $REUSE == 0 || ! -x $VPY || ! -f $HELD ]]; then
  step "venv + pip install $SRC${EXTRAS:+[$EXTRAS]}${PINS:+ -c <$PINS>} + test deps"
  rm -rf "$VENV"; "$PYTHON" -m venv "$VENV"
  tr , '\n' <<<"$PINS" >"$OUTDIR/pins.txt"
  pip_ install -c "$OUTDIR/pins.txt" "$SRC${EXTRAS:+[$EXTRAS]}"
  "$VPY" -m pip freeze --all >"$HELD"
  held pip >"$OUTDIR/held.txt"
  pip_ install -c "$OUTDIR/held.txt" "${TEST_DEPS[@]}"
fi

# 3. The torchx under test, over the one pip pulled in.
step "torchx under test: $SPEC"
VSP=$("$VPY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
if [[ $SPEC == site:* ]]; then
  pip_ uninstall -y torchx
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
  pip_ install scikit-build-core pybind11
  pip_ install --no-build-isolation --force-reinstall --no-deps -C build-dir="$OUTDIR/torchx-build" "$SPEC"
else
  pip_ install --force-reinstall --no-deps "$SPEC"
fi
# Its own requirements where missing; nothing installed moves (a conflict stops here).
"$VPY" -c 'import importlib.metadata as m; print("\n".join(r for r in m.requires("torchx") or [] if "extra ==" not in r))' >"$OUTDIR/torchx-requires.txt"
held 'pip|torchx' >"$OUTDIR/held.txt"
[[ ! -s $OUTDIR/torchx-requires.txt ]] || pip_ install -c "$OUTDIR/held.txt" -r "$OUTDIR/torchx-requires.txt"
( cd "$OUTDIR" && "$VPY" -c 'import torchx, importlib.metadata as m; print(torchx.__file__, m.version("torchx"))' ) \
  >"$OUTDIR/torchx.txt" || die "import torchx failed in $VENV"
read -r GOT _ <"$OUTDIR/torchx.txt"
[[ $GOT == "$VSP/torchx/__init__.py" ]] || die "torchx comes from $GOT, not $VSP/torchx"
# The scheduler registry with NeMo-Run's entry points (its `skypilot` factories need SkyPilot):
# listing them must not raise. For information; the tests decide.
( cd "$OUTDIR" && "$VPY" -c 'from torchx.schedulers import get_scheduler_factories as f; print(sorted(f()))' ) \
  >"$OUTDIR/schedulers.txt" 2>&1 || sed -i '1s/^/FAILED: /' "$OUTDIR/schedulers.txt"
"$VPY" -m pip check >"$OUTDIR/pip-check.txt" 2>&1 || true   # for information only
"$VPY" -m pip freeze --all >"$OUTDIR/freeze.txt"
INSTALL_S=$((SECONDS - T0))

# 4. The tree (NeMo-Run's test/ and pytest options only) and the run. A fresh HOME has no git
#    identity and the tests' git fixtures commit, so they get one. Without SkyPilot one module
#    (schedulers/test_api.py: SkypilotExecutor() in a parametrize list) fails to collect; the
#    others still run (--continue-on-collection-errors) and it counts as one error.
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
    --continue-on-collection-errors \
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
print("schedulers: %s" % open(out + "/schedulers.txt").read().strip().splitlines()[-1])
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

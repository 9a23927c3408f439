#!/usr/bin/env bash
# The README's test command (and `.ci/run`): installs what is missing, lints, builds with warnings
# as errors and runs every test, in stages from the quickest to the slowest, printing each stage's
# time as it ends and all of them at the end (docs/testing.md says what each costs).
#   deps      scripts/install-deps.sh
#   lint      tools/lint.sh: clang-format, clang-tidy (changed files), ruff, mypy, layer checks
#   package   the wheel (scripts/build-wheel.sh: extension, CLI, helpers, the libraries they load),
#             installed into the project's venv (.venv) the suites import, and the sdist
#   cleanroot that wheel installed and used in a minimal Debian 12 root with no compiler, and the
#             sdist failing there with what it lacks (tests/install/clean_root.sh)
#   build     the `ci` preset: clang, ASan + UBSan, every test and each fuzz corpus's replay
#   unit      unit and fuzz-replay tests (no engine, seconds)
#   clifuzz   mutated command lines over every verb (tests/fuzz/cli/cli_fuzz.py, 100 s)
#   engines   Slurm (three nodes), dockerd, podman, Ray (two nodes), started from scripts/engines/
#   suites    everything else in the same build: conformance (every back-end), e2e, Python,
#             the real DDP job, Ax, Slurm, containers, kubernetes (API server fake), the dashboard
#             in Chromium, pipelines, faults
#   bystander a Ray cluster on Ray's defaults, started before the engines with a job on it, is
#             still there with its job (the project's engines stop only their own processes)
#   tsan      the `tsan` preset: ThreadSanitizer over the threaded code's suites (label tsan)
#   fuzz      libFuzzer on each target for TORCHX_FUZZ_SECONDS (default 0: replays only)
# Fails on any failing test and when no test ran.
#   TORCHX_SKIP_TSAN=1     skip the ThreadSanitizer stage (quicker local loop)
#   TORCHX_WITH_SLURM=0, TORCHX_WITH_CONTAINERS=0, TORCHX_WITH_RAY=0   leave those engines (and their suites) out
#   TORCHX_WITH_CLEAN_ROOT=0   skip the clean-root stage
#   TORCHX_VENV            the project's Python environment (default .venv; scripts/venv.sh)
#   TORCHX_CTEST_JOBS      tests run at once (default 2, the CI machine's cores)
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${TORCHX_CTEST_JOBS:-2}
stage_names=()
stage_secs=()
suite_start=$(date +%s)
report() {
  local rc=$?
  echo "test.sh: stage times" >&2
  for i in "${!stage_names[@]}"; do
    printf 'test.sh:   %-8s %5ss\n' "${stage_names[$i]}" "${stage_secs[$i]}" >&2
  done
  if [[ -n "$running" ]]; then
    printf 'test.sh:   %-8s %5ss  FAILED\n' "$running" "$(($(date +%s) - running_since))" >&2
  fi
  printf 'test.sh:   %-8s %5ss\n' total "$(($(date +%s) - suite_start))" >&2
  # shellcheck disable=SC2086
  for s in "${stop_engines[@]}"; do bash $s >/dev/null 2>&1 || true; done
  return $rc
}
stop_engines=()
running=""
running_since=0
trap report EXIT
# stage NAME COMMAND...: runs COMMAND, then prints and records how long it took.
stage() {
  local name=$1
  shift
  echo "test.sh: == $name ==" >&2
  running=$name
  running_since=$(date +%s)
  "$@"
  running=""
  stage_names+=("$name")
  stage_secs+=("$(($(date +%s) - running_since))")
  echo "test.sh: == $name done in ${stage_secs[-1]}s ==" >&2
}

stage deps bash scripts/install-deps.sh
# Every python3 from here on, the tests' included, is the project's venv's (scripts/venv.sh).
# shellcheck source=venv.sh
. scripts/venv.sh
stage lint bash tools/lint.sh
# The wheel (extension, CLI, helpers, back-end modules, the libraries they load), installed into
# the venv for the python and ax suites; and the sdist.
stage package bash scripts/build-python.sh
# The same wheel in a minimal Debian 12 root without a compiler or a -dev package, and the sdist
# there, which must name what it lacks (tests/install/clean_root.sh; TORCHX_WITH_CLEAN_ROOT=0 skips).
if [[ "${TORCHX_WITH_CLEAN_ROOT:-1}" == "1" ]]; then
  stage cleanroot bash tests/install/clean_root.sh "$(ls dist/torchx-*-manylinux_*.whl | head -1)"
fi

build_ci() {
  cmake --preset ci -DPython3_EXECUTABLE="$TORCHX_PYTHON" >/dev/null
  cmake --build --preset ci
}
stage build build_ci

# Sanitizer settings for every process of the ci build the tests start (the CLI, the supervisor,
# the test binaries); leaks are errors.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
stage unit ctest --preset ci -j "$jobs" -L "unit|fuzz"
# Mutated command lines over every verb for TORCHX_CLI_FUZZ_SECONDS (100), before any engine is up
# (the lines reach none anyway); a finding is kept in build/ci/cli-fuzz-findings.
clifuzz() {
  TORCHX_BIN="$PWD/build/ci/cli/torchx" python3 tests/fuzz/cli/cli_fuzz.py --seconds "${TORCHX_CLI_FUZZ_SECONDS:-100}" \
    --workers "$jobs" --findings build/ci/cli-fuzz-findings
}
stage clifuzz clifuzz

# Engines the tests need are installed above, so their tests must run, not skip.
engines=torch,ax,pjrt,python
[[ "${TORCHX_WITH_BROWSER:-1}" == "1" ]] && engines+=,browser
[[ "${TORCHX_WITH_KFP:-1}" == "1" ]] && engines+=,kfp
start_engines() {
  # A real three-node Slurm cluster on this host for the slurm scheduler's tests.
  if [[ "${TORCHX_WITH_SLURM:-1}" == "1" ]]; then
    bash scripts/engines/slurm-up.sh
    stop_engines+=(scripts/engines/slurm-down.sh)
    engines+=,slurm
  fi
  # Container engines for local_docker: dockerd and podman (Docker Engine API on unix sockets,
  # busybox imported from a local rootfs; no registry).
  if [[ "${TORCHX_WITH_CONTAINERS:-1}" == "1" ]]; then
    bash scripts/engines/dockerd-up.sh
    stop_engines+=(scripts/engines/dockerd-down.sh)
    bash scripts/engines/podman-up.sh
    stop_engines+=(scripts/engines/podman-down.sh)
    engines+=,docker,podman
  fi
  # A live Ray cluster (a head and a worker node on this host) for the ray scheduler, on ports and
  # a temp dir of its own (ray-env.sh): a Ray cluster of the user's on Ray's defaults is left
  # alone. The tests reach it through these.
  if [[ "${TORCHX_WITH_RAY:-1}" == "1" ]]; then
    # A cluster of "the user's own" on Ray's defaults, with a job running: checked untouched after
    # the suites (tests/integration/ray/bystander_cluster.sh).
    stop_engines+=("tests/integration/ray/bystander_cluster.sh stop")  # before: a failed start is stopped too
    bash tests/integration/ray/bystander_cluster.sh start
    bash scripts/engines/ray-up.sh
    stop_engines+=(scripts/engines/ray-down.sh)
    engines+=,ray
    # shellcheck source=engines/ray-env.sh
    . scripts/engines/ray-env.sh
    export TORCHX_RAY_DASHBOARD TORCHX_RAY_GCS="127.0.0.1:$TORCHX_RAY_GCS_PORT" RAY_ADDRESS="http://$TORCHX_RAY_DASHBOARD"
  fi
}
stage engines start_engines
export TORCHX_REQUIRE_ENGINES=$engines
stage suites ctest --preset ci -j "$jobs" -LE "unit|fuzz"
if [[ "${TORCHX_WITH_RAY:-1}" == "1" ]]; then
  stage bystander bash tests/integration/ray/bystander_cluster.sh check
fi

if [[ "${TORCHX_SKIP_TSAN:-0}" != "1" ]]; then
  run_tsan() {
    cmake --preset tsan -DPython3_EXECUTABLE="$TORCHX_PYTHON" >/dev/null
    # Only what the threaded suites need: their test binaries and the CLI the dashboard test runs.
    cmake --build --preset tsan --target tsan_suites
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
      ctest --preset tsan -j "$jobs" -L tsan
  }
  stage tsan run_tsan
fi

fuzz_seconds=${TORCHX_FUZZ_SECONDS:-0}
if [[ "$fuzz_seconds" != "0" ]]; then
  stage fuzz bash scripts/fuzz.sh "$fuzz_seconds"
fi
echo "test.sh: all suites passed"

#!/usr/bin/env bash
# The README's test command: installs what is missing, builds with warnings as errors, and runs
# every test: unit, conformance, e2e, python, and integration against real local processes and a
# real PyTorch DDP job (debug); the same except the DDP job under ASan + UBSan; and each fuzz
# target briefly.
# Fails on any failing test and when no test ran.
#   TORCHX_FUZZ_SECONDS  seconds per fuzz target (default 10; 0 skips fuzzing)
#   TORCHX_SKIP_ASAN=1   skip the sanitizer build (quicker local loop)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
# The Python package (extension + CLI) the python and ax suites import.
bash scripts/build-python.sh

# A real three-node Slurm cluster on this host for the slurm scheduler's tests (the project's own
# copy of the set-up; stopped again when this script exits). TORCHX_WITH_SLURM=0 skips it.
engines=torch,ax,pjrt
[[ "${TORCHX_WITH_BROWSER:-1}" == "1" ]] && engines+=,browser
[[ "${TORCHX_WITH_KFP:-1}" == "1" ]] && engines+=,kfp
stop_engines=()
trap 'for s in "${stop_engines[@]}"; do bash "$s" >/dev/null 2>&1 || true; done' EXIT
if [[ "${TORCHX_WITH_SLURM:-1}" == "1" ]]; then
  bash scripts/engines/slurm-up.sh
  stop_engines+=(scripts/engines/slurm-down.sh)
  engines+=,slurm
fi
# Container engines for local_docker: dockerd and podman (Docker Engine API on unix sockets,
# busybox imported from a local rootfs; no registry). TORCHX_WITH_CONTAINERS=0 skips them.
if [[ "${TORCHX_WITH_CONTAINERS:-1}" == "1" ]]; then
  bash scripts/engines/dockerd-up.sh
  stop_engines+=(scripts/engines/dockerd-down.sh)
  bash scripts/engines/podman-up.sh
  stop_engines+=(scripts/engines/podman-down.sh)
  engines+=,docker,podman
fi

# Engines the tests need are installed above, so their tests must run, not skip.
export TORCHX_REQUIRE_ENGINES=$engines

cmake --preset debug
cmake --build --preset debug
ctest --preset debug

if [[ "${TORCHX_SKIP_ASAN:-0}" != "1" ]]; then
  cmake --preset asan
  cmake --build --preset asan
  # The DDP job, the Ax experiment and the Slurm jobs are already covered above (their processes
  # are not sanitized); under ASan the suites check memory errors.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -LE "torch|ax|slurm|docker|browser"
fi

fuzz_seconds=${TORCHX_FUZZ_SECONDS:-10}
if [[ "$fuzz_seconds" != "0" ]]; then
  bash scripts/fuzz.sh "$fuzz_seconds"
fi
echo "test.sh: all suites passed"

#!/usr/bin/env bash
# The README's test command: installs what is missing, builds with warnings as errors, and runs
# every test: unit + e2e (debug), the same under ASan + UBSan, and each fuzz target briefly.
# Fails on any failing test and when no test ran.
#   TORCHX_FUZZ_SECONDS  seconds per fuzz target (default 10; 0 skips fuzzing)
#   TORCHX_SKIP_ASAN=1   skip the sanitizer build (quicker local loop)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

cmake --preset debug
cmake --build --preset debug
ctest --preset debug

if [[ "${TORCHX_SKIP_ASAN:-0}" != "1" ]]; then
  cmake --preset asan
  cmake --build --preset asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan
fi

fuzz_seconds=${TORCHX_FUZZ_SECONDS:-10}
if [[ "$fuzz_seconds" != "0" ]]; then
  bash scripts/fuzz.sh "$fuzz_seconds"
fi
echo "test.sh: all suites passed"

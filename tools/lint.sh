#!/usr/bin/env bash
# The lint stage of `.ci/run` (and a quick local check before a commit):
#   clang-format (check mode) on every tracked C++ file      .clang-format
#   clang-tidy on the C++ files changed since BASE            .clang-tidy
#   ruff (lint) and mypy (the package's types)               pyproject.toml
#   the include layers; no import cycle in the Python package  docs/architecture.md, docs/python.md
# BASE is $TORCHX_TIDY_BASE, else the merge base with origin/main, else HEAD~1 (on a clone of
# main itself: the latest commit's files). `tools/lint.sh --fix` rewrites the formatting instead.
# Exit 0 when everything is clean; each failing tool says what and where.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
step() { echo "lint: $*" >&2; }

mapfile -t cxx < <(git ls-files '*.cc' '*.h' '*.cpp')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${cxx[@]}"
  ruff check --fix -q python tools tests bench || true
  exit 0
fi

step "clang-format --dry-run on ${#cxx[@]} files"
clang-format --dry-run --Werror "${cxx[@]}" || { fail=1; step "clang-format: run tools/lint.sh --fix"; }

step "ruff check"
ruff check -q python tools tests bench || fail=1

step "mypy"
mypy --no-error-summary || fail=1

step "include layers"
python3 tools/check_layers.py || fail=1
step "Python import cycles"
python3 tools/check_py_layers.py || fail=1

base=${TORCHX_TIDY_BASE:-}
if [[ -z "$base" ]]; then
  base=$(git merge-base HEAD origin/main 2>/dev/null || true)
  [[ -z "$base" || "$base" == "$(git rev-parse HEAD)" ]] && base=$(git rev-parse HEAD~1 2>/dev/null || true)
fi
mapfile -t changed < <(git diff --name-only --diff-filter=AM "$base" -- '*.cc' 2>/dev/null | grep -v '^tests/fuzz/')
if ((${#changed[@]})); then
  # A compilation database without the unity build, so that each file has its own entry;
  # configuring takes seconds and builds nothing. The extension's files are in it too (pybind11
  # is installed for the package build).
  cmake -S . -B build/tidy -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DTORCHX_BUILD_TESTS=ON \
    -DTORCHX_BUILD_PYTHON=ON -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" >/dev/null || fail=1
  step "clang-tidy on ${#changed[@]} files changed since ${base:0:12}"
  clang-tidy -p build/tidy --quiet "${changed[@]}" 2>/dev/null || fail=1
fi

((fail)) && step "FAILED" || step "clean"
exit $fail

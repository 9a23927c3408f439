#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS (default 10) on a
# scratch copy of its seed corpus, so the checked-in corpus stays small. Any crash fails the run
# and leaves the reproducer in build/fuzz/artifacts/. Longer runs: docs/fuzzing.md.
# The mutation seed is fixed (TORCHX_FUZZ_SEED, default 1) so that a CI run repeats the inputs a
# longer local run with the same seed already covered; exploring new inputs is for long runs with
# TORCHX_FUZZ_SEED=0 (a fresh seed each run), whose finds go into the corpus as regressions.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-10}
SEED=${TORCHX_FUZZ_SEED:-1}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p build/fuzz/artifacts
for corpus in tests/fuzz/corpus/*/; do
  name=$(basename "$corpus")
  cp -r "$corpus" "$work/$name"
  echo "fuzz: $name for ${SECONDS_EACH}s" >&2
  # -rss_limit_mb keeps a runaway input from exhausting the 24 GiB machine.
  build/fuzz/tests/fuzz/${name}_fuzz -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -seed="$SEED" \
    -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/${name}- "$work/$name" \
    2> "$work/$name.log" || { tail -40 "$work/$name.log"; echo "fuzz: $name FAILED" >&2; exit 1; }
  grep -E "stat::number_of_executed_units" "$work/$name.log" | sed "s/^/fuzz: $name /" >&2
done
echo "fuzz: all targets ran clean" >&2

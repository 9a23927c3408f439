#!/usr/bin/env bash
# The README's main command: installs what is missing, builds the release CLI, and shows what
# `torchx run` submits for the example app (a dry run: the local scheduler lands with issue 4).
set -euo pipefail
cd "$(dirname "$0")/.."
TORCHX_WITH_FUZZ=0 bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
build/release/cli/torchx run --dryrun examples/echo.yaml

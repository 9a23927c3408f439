#!/usr/bin/env bash
# Builds the package's wheel once (scripts/build-wheel.sh: the extension, the CLI, the helpers and
# the back-end modules, with the libraries they load carried inside it) and installs that wheel into
# the project's virtual env (scripts/venv.sh), as a user's `pip install` of it would. The test
# command's package stage; the suites import this install and the clean-root stage gets the same file.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=venv.sh
. scripts/venv.sh
TORCHX_PYTHON=$TORCHX_PYTHON bash scripts/build-wheel.sh dist
wheel=$(ls dist/torchx-*-manylinux_*.whl | head -1)
python3 -m pip install -q "$wheel"                                # its dependencies, when missing
python3 -m pip install -q --force-reinstall --no-deps "$wheel"    # this build's files, same version or not
python3 -c "import torchx._torchx, torchx.runner" # fails loudly if the install is unusable
echo "build-python: installed $(basename "$wheel") into $TORCHX_VENV" >&2

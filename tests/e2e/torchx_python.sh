#!/usr/bin/env bash
# The torchx command through the Python package's entry point (`python -m torchx.cli.main`), so
# that cli_test.sh can drive it exactly as it drives the binary.
exec "${PYTHON:-python3}" -m torchx.cli.main "$@"

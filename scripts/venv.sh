# Sourced by the scripts (install-deps.sh, build-python.sh, run-example.sh, test.sh): the project's
# one Python environment. Every Python package these scripts install goes into it, never into the
# system interpreter, and every `python3` they and the tests run is its interpreter.
#   TORCHX_VENV        where it is (default: .venv in the checkout); made when missing
#   TORCHX_BASE_PYTHON the interpreter it is made from (default: python3)
# Exports VIRTUAL_ENV, PATH (its bin/ first) and TORCHX_PYTHON, as `. .venv/bin/activate` would.
torchx_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TORCHX_VENV=${TORCHX_VENV:-$torchx_root/.venv}
if [[ ! -x $TORCHX_VENV/bin/python ]]; then
  echo "venv: making $TORCHX_VENV (${TORCHX_BASE_PYTHON:-python3} -m venv)" >&2
  "${TORCHX_BASE_PYTHON:-python3}" -m venv "$TORCHX_VENV" || {
    echo "venv: cannot make $TORCHX_VENV; on Debian: sudo apt-get install python3-venv" >&2
    return 1 2>/dev/null || exit 1
  }
fi
export TORCHX_VENV VIRTUAL_ENV=$TORCHX_VENV TORCHX_PYTHON=$TORCHX_VENV/bin/python
[[ $PATH == "$TORCHX_VENV/bin:"* ]] || export PATH="$TORCHX_VENV/bin:$PATH"
unset torchx_root

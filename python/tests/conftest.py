import os
import pathlib
import shutil
import tempfile

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent


def pytest_configure(config):
    # The package under test is the installed one (`pip install .` builds its extension); a
    # source checkout on sys.path would shadow it without the extension.
    try:
        import torchx._torchx  # noqa: F401
    except ImportError as e:
        raise pytest.UsageError(f"the torchx package with its extension is not installed ({e}): run `pip install .`") from e


@pytest.fixture(scope="session", autouse=True)
def state_dir():
    """Every app the suite submits lives in a temp state dir, removed at the end."""
    d = tempfile.mkdtemp(prefix="torchx-pytest-state-")
    old = os.environ.get("TORCHX_STATE_DIR")
    os.environ["TORCHX_STATE_DIR"] = d
    yield d
    if old is None:
        os.environ.pop("TORCHX_STATE_DIR", None)
    else:
        os.environ["TORCHX_STATE_DIR"] = old
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def torchx_bin() -> str:
    """The CLI: $TORCHX_BIN, else the installed `torchx`, else build/debug/cli/torchx."""
    path = os.environ.get("TORCHX_BIN") or shutil.which("torchx") or str(REPO / "build" / "debug" / "cli" / "torchx")
    if not os.access(path, os.X_OK):
        pytest.fail(f"torchx binary not found at {path}: build first or set TORCHX_BIN")
    return path


@pytest.fixture
def app_env() -> dict:
    """Environment for a job's process."""
    return dict(os.environ)

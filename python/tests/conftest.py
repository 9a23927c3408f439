import os
import pathlib
import shutil

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parent.parent
REPO = PYTHON_DIR.parent


@pytest.fixture(scope="session")
def torchx_bin() -> str:
    """The built CLI: $TORCHX_BIN, else build/debug/cli/torchx."""
    path = os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")
    if not os.access(path, os.X_OK):
        pytest.fail(f"torchx binary not found at {path}: build first or set TORCHX_BIN")
    return path


@pytest.fixture
def app_env() -> dict:
    """Environment for a job's process: this package importable, as it is once installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH", "")]))
    return env

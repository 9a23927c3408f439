"""Two installs side by side: a virtual env made from an interpreter that has another build of
torchx installed. A venv's python is the base interpreter's binary (copied or linked), so what lies
beside the interpreter belongs to the other install: the extension must load the back-end modules
and helpers of its own install, never those (issue: "comes from another build of torchx")."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import torchx

STALE = os.environ.get("TORCHX_STALE_BACKEND", "")


@pytest.fixture
def other_install(tmp_path):
    """An interpreter whose prefix holds another build's back-end modules, where an install of
    torchx would put them for its CLI (lib/torchx/backends) and beside its binary (bin/backends)."""
    if not STALE:
        pytest.skip("TORCHX_STALE_BACKEND (a back-end module of another build) is set by the ctest")
    prefix = tmp_path / "other"
    subprocess.run([sys.executable, "-m", "venv", "--copies", "--without-pip", str(prefix)], check=True, timeout=120)
    for d in (prefix / "lib" / "torchx" / "backends", prefix / "bin" / "backends"):
        d.mkdir(parents=True)
        for name in ("torchx_backend_kubernetes.so", "torchx_backend_docker.so"):
            shutil.copy(STALE, d / name)
    return prefix


def run(argv, cwd, **env):
    full = dict(os.environ, **env)
    full.pop("TORCHX_BACKEND_PATH", None)
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


def test_the_extension_loads_its_own_installs_back_ends(other_install, tmp_path):
    site = pathlib.Path(torchx.__file__).resolve().parent.parent
    code = (
        "from torchx.runner import get_runner\n"
        "r = get_runner()\n"
        "for s in ('kubernetes', 'local_docker'):\n"
        "    print(s, len(r.scheduler_run_opts(s)))\n"
    )
    python = other_install / "bin" / "python"
    out = run([python, "-c", code], tmp_path, PYTHONPATH=str(site))
    assert out.returncode == 0, out.stderr
    assert "another build" not in out.stderr
    assert out.stdout.startswith("kubernetes ") and "local_docker " in out.stdout
    # The runopts verb through the package's CLI entry point too.
    out = run([python, "-m", "torchx.cli.main", "runopts", "kubernetes"], tmp_path, PYTHONPATH=str(site))
    assert out.returncode == 0, out.stderr
    assert "queue" in out.stdout


def test_the_cli_never_looks_relative_to_the_working_directory(tmp_path, torchx_bin):
    if not STALE:
        pytest.skip("TORCHX_STALE_BACKEND is set by the ctest")
    (tmp_path / "backends").mkdir()
    shutil.copy(STALE, tmp_path / "backends" / "torchx_backend_kubernetes.so")
    bin_dir = pathlib.Path(torchx_bin).resolve().parent
    out = run(["torchx", "runopts", "kubernetes"], tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert out.returncode == 0, out.stderr
    assert "queue" in out.stdout

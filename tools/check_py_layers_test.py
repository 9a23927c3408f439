"""tools/check_py_layers.py: it passes on the package and fails on a cycle, hidden or not."""

import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent / "check_py_layers.py"


def run(root, *args):
    return subprocess.run([sys.executable, str(TOOL), "--root", str(root), *args], capture_output=True, text=True)


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_package_has_no_import_cycle():
    res = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "no import cycle" in res.stdout


def test_a_cycle_held_together_by_a_function_local_import_fails(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "def f():\n    from pkg.high import g\n    return g()\n",
        "pkg/high.py": "from pkg.low import f\n\ndef g():\n    return 1\n",
    })
    res = run(tmp_path, "--package", "pkg")
    assert res.returncode == 1
    assert "import cycle among 2 modules" in res.stdout
    assert "pkg.low -> pkg.high   (pkg/low.py:2)" in res.stdout
    assert "pkg.high -> pkg.low   (pkg/high.py:1)" in res.stdout


@pytest.mark.parametrize("low", [
    # the provider pattern: a lower layer reaches a higher one by module name at run time
    "import importlib\n\ndef f():\n    return importlib.import_module('pkg.high').g()\n",
    # a package's __init__ importing its children is not a cycle with them
    "from pkg import high\n",
])
def test_what_is_not_a_cycle(tmp_path, low):
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.low import *\n",
        "pkg/low.py": low,
        "pkg/high.py": "from pkg.other import x\n\ndef g():\n    return x\n",
        "pkg/other.py": "x = 1\n",
    })
    res = run(tmp_path, "--package", "pkg")
    assert res.returncode == 0, res.stdout


def test_relative_imports_and_extensions(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "from .a import x\n",
        "pkg/sub/a.py": "from .. import _ext\nfrom ..sub import b\nx = 1\n",
        "pkg/sub/b.py": "def f():\n    from . import a\n",
    })
    res = run(tmp_path, "--package", "pkg", "--extension", "pkg._ext")
    assert res.returncode == 1
    assert "pkg.sub.a -> pkg.sub.b" in res.stdout and "pkg.sub.b -> pkg.sub.a" in res.stdout


def test_a_cycle_through_a_package_init_fails(tmp_path):
    # tracker -> runner.config runs runner/__init__, which imports runner.api -> tracker
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/runner/__init__.py": "from pkg.runner.api import run\n",
        "pkg/runner/api.py": "import pkg.tracker\n\ndef run():\n    pass\n",
        "pkg/runner/config.py": "x = 1\n",
        "pkg/tracker.py": "def configured():\n    from pkg.runner.config import x\n    return x\n",
    })
    res = run(tmp_path, "--package", "pkg")
    assert res.returncode == 1
    assert "pkg.tracker -> pkg.runner   (pkg/tracker.py:2)" in res.stdout

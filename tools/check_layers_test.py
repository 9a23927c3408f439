"""Tests of tools/check_layers.py: it passes on the project and fails on an upward include."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import check_layers  # noqa: E402

TABLE = """# Architecture

## Layers
| layer | paths | may include |
|---|---|---|
| base | `src/core/` | |
| low | `include/torchx/low/`, `src/low/` | base |
| high | `src/high/` | low |
| backend_a | `src/schedulers/a/` | low |
| backend_b | `src/schedulers/b/` | low |

## Modules
"""


def make_tree(tmp_path: Path, files: dict) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "architecture.md").write_text(TABLE)
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


CLEAN = {
    "src/core/status.h": "#pragma once\n",
    "include/torchx/low/low.h": '#include "core/status.h"\n',
    "src/low/low.cc": '#include "torchx/low/low.h"\n#include <vector>\n',
    "src/high/high.cc": '#include "torchx/low/low.h"\n#include "core/status.h"\n',
    "src/schedulers/a/a.cc": '#include "torchx/low/low.h"\n',
    "src/high/high_test.cc": '#include "schedulers/a/a.cc"\n',  # tests are not checked
}


def test_the_project_respects_its_layers():
    assert check_layers.main(["--root", str(ROOT)]) == 0


def test_a_clean_tree_passes_and_transitive_includes_are_allowed(tmp_path):
    root = make_tree(tmp_path, CLEAN)
    assert check_layers.check(root, root / "docs" / "architecture.md") == []


def test_an_upward_include_fails_naming_the_file_and_the_layers(tmp_path):
    root = make_tree(tmp_path, {**CLEAN, "src/low/upward.cc": '#include "high/high.cc"\n'})
    problems = check_layers.check(root, root / "docs" / "architecture.md")
    assert len(problems) == 1
    assert "src/low/upward.cc: layer low includes \"high/high.cc\" of layer high" in problems[0]
    assert "[base, low]" in problems[0]
    # And the command exits 1 with the message on stderr.
    run = subprocess.run([sys.executable, str(HERE / "check_layers.py"), "--root", str(root)],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "src/low/upward.cc" in run.stderr


def test_back_ends_may_not_include_each_other(tmp_path):
    root = make_tree(tmp_path, {**CLEAN, "src/schedulers/b/b.cc": '#include "schedulers/a/a.cc"\n'})
    problems = check_layers.check(root, root / "docs" / "architecture.md")
    assert [p.split(":")[0] for p in problems] == ["src/schedulers/b/b.cc"]


def test_a_file_in_no_layer_is_reported(tmp_path):
    root = make_tree(tmp_path, {**CLEAN, "src/stray/x.cc": "\n"})
    problems = check_layers.check(root, root / "docs" / "architecture.md")
    assert problems == ["src/stray/x.cc: in no layer; add its path to the Layers table in architecture.md"]


def test_a_table_naming_an_unknown_layer_is_refused(tmp_path):
    root = make_tree(tmp_path, CLEAN)
    doc = root / "docs" / "architecture.md"
    doc.write_text(TABLE.replace("| high | `src/high/` | low |", "| high | `src/high/` | lowe |"))
    with pytest.raises(check_layers.TableError, match="unknown layer lowe"):
        check_layers.check(root, doc)
    assert check_layers.main(["--root", str(root)]) == 2


def test_the_real_scheduler_base_including_a_back_end_is_caught(tmp_path):
    # The regression this check exists for: the scheduler base reaching a back-end.
    for top in ("include", "src", "cli", "python", "docs"):
        shutil.copytree(ROOT / top, tmp_path / top, ignore=shutil.ignore_patterns("build*", "__pycache__"))
    base = tmp_path / "src" / "schedulers" / "scheduler.cc"
    base.write_text('#include "schedulers/slurm/slurm_scheduler.h"\n' + base.read_text())
    problems = check_layers.check(tmp_path, tmp_path / "docs" / "architecture.md")
    assert len(problems) == 1 and "layer scheduler_api includes" in problems[0]

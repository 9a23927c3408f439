"""torchx.sweeps.run / dryrun / status: a sweep given as a file or a dict, through the core, its
trials reporting through TorchX's tracker API (the ``fsspec`` tracker, shipped here with TorchX's
layout), and its handle answered by the Runner like any app's."""

import base64
import json
import sys

import pytest

from torchx import sweeps
from torchx.runner import get_runner
from torchx.specs import AppState
from torchx.tracker.backend.fsspec import FsspecTracker, create

REPORT = """
import os, sys
from torchx.tracker import app_run_from_env
x = float(sys.argv[1])
run = app_run_from_env()
run.add_metadata(loss=x * 10, step=1)
run.add_metadata(loss=(x - 0.3) ** 2, step=2)
"""


def test_a_dict_sweep_runs_reports_and_finds_its_best(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.py").write_text(REPORT)
    sweep = {
        "name": "pysweep",
        "component": "utils.sh",
        "args": [sys.executable, "report.py", "@{x}"],
        "max_parallel": 2,
        "objective": {"metric": "loss", "direction": "minimize"},
        "space": {"parameters": {"x": [0.1, 0.3, 0.5]}},
    }
    handle = sweeps.run(sweep)
    assert handle.startswith("sweep://torchx/pysweep-")
    status = get_runner().wait(handle, wait_interval=0.2)
    assert status.state == AppState.SUCCEEDED, status
    view = sweeps.status(handle)
    assert view["best"] == 1  # x=0.3: its last report is 0
    assert [t["index"] for t in view["trials"]][0] == 1
    by_index = {t["index"]: t for t in view["trials"]}
    assert by_index[0]["objective"] == pytest.approx(0.04) and by_index[0]["metrics"]["step"] == 2
    assert by_index[2]["values"] == {"x": 0.5}
    assert any(a.app_handle == handle for a in get_runner().list("sweep"))


def test_dryrun_matches_the_cli_spaces_and_bad_sweeps_raise_value_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = sweeps.dryrun({"component": "utils.echo", "args": ["--msg", "@{m}"],
                          "space": {"parameters": {"m": ["a", "b"]}}})
    assert "trial 0: m=a\ntrial 1: m=b" in text
    with pytest.raises(ValueError, match=r"space.parameters.zz: `zz` is neither a parameter of component utils.echo"):
        sweeps.run({"component": "utils.echo", "space": {"parameters": {"zz": [1]}}})
    with pytest.raises(ValueError, match=r"space.type: invalid value `bayes`"):
        sweeps.run({"component": "utils.echo", "space": {"type": "bayes", "parameters": {"m": [1]}}})


def test_the_fsspec_tracker_keeps_every_report_in_torchxs_layout(tmp_path):
    conf = tmp_path / "tracker.conf"
    conf.write_text(f"# the sweep writes one like this\nprotocol=file\nroot_path={tmp_path / 'runs'}\n")
    tracker = create(str(conf))
    assert isinstance(tracker, FsspecTracker)
    run = "local_cwd://torchx/app-1"
    tracker.add_metadata(run, loss=1.0)
    tracker.add_metadata(run, loss=0.5, step=2)
    assert tracker.metadata(run) == {"loss": 0.5, "step": 2}
    files = sorted((tmp_path / "runs" / base64.b32encode(run.encode()).decode() / "metadata").iterdir())
    assert [json.loads(f.read_text()) for f in files] == [{"metadata": {"loss": 1.0}},
                                                          {"metadata": {"loss": 0.5, "step": 2}}]
    tracker.add_artifact(run, "model", "/tmp/m.pt", {"epoch": 3})
    assert tracker.artifacts(run)["model"].path == "/tmp/m.pt"
    tracker.add_source(run, "local_cwd://torchx/parent", "data")
    assert [(s.source_run_id, s.artifact_name) for s in tracker.sources(run)] == [("local_cwd://torchx/parent", "data")]
    assert list(tracker.run_ids(parent_run_id="local_cwd://torchx/parent")) == [run]
    with pytest.raises(ValueError, match="missing root_path"):
        bad = tmp_path / "bad.conf"
        bad.write_text("protocol=file\n")
        create(str(bad))

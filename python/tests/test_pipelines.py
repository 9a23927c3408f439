"""torchx.pipelines.run / dryrun: a pipeline given as a file or a dict, through the core, and its
handle answered by the Runner like any app's (status, wait, log_lines, cancel, list)."""

import pytest

from torchx.pipelines import dryrun, run
from torchx.runner import get_runner
from torchx.specs import AppState


def test_a_dict_pipeline_runs_and_the_runner_answers_for_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pipeline = {
        "name": "pyflow",
        "steps": {
            "write": {"component": "utils.sh", "args": ["sh", "-c", "echo from-write > f.txt"]},
            "read": {"component": "utils.sh", "args": ["cat", "f.txt"], "depends_on": ["write"]},
        },
    }
    handle = run(pipeline)
    assert handle.startswith("pipeline://torchx/pyflow-")
    runner = get_runner()
    status = runner.wait(handle, wait_interval=0.2)
    assert status.state == AppState.SUCCEEDED, status
    assert [r.role for r in status.roles] == ["write", "read"]
    assert list(runner.log_lines(handle, "read")) == ["from-write\n"]
    assert any(a.app_handle == handle for a in runner.list("pipeline"))


def test_a_file_pipeline_and_cancel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(
        "steps:\n  a: {component: utils.sh, args: [sleep, '60']}\n"
        "  b: {component: utils.sh, args: [touch, b-ran], depends_on: a}\n")
    handle = run(tmp_path / "p.yaml", name="cancelme")
    runner = get_runner()
    runner.cancel(handle)
    status = runner.wait(handle, wait_interval=0.2)
    assert status.state == AppState.CANCELLED
    assert "b not run" in status.msg
    assert not (tmp_path / "b-ran").exists()


def test_dryrun_submits_nothing_and_bad_pipelines_raise_value_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = dryrun({"steps": {"a": {"component": "utils.echo", "args": ["--msg", "hi"]}}}, cfg={"log_dir": str(tmp_path)})
    assert "=== STEP a on local_cwd ===" in text
    with pytest.raises(ValueError, match=r"dependency cycle a -> b -> a"):
        run({"steps": {"a": {"component": "utils.echo", "depends_on": "b"},
                       "b": {"component": "utils.echo", "depends_on": "a"}}})
    with pytest.raises(ValueError, match=r"steps.a: utils.echo: unrecognized argument '--nope'"):
        run({"steps": {"a": {"component": "utils.echo", "args": ["--nope", "1"]}}})

"""torchx.cli: `python -m torchx.cli.main` is the `torchx` command (the binary, but for the
Python-only tracker verb and entry-point verbs; tests/e2e runs the whole CLI suite through it),
and `torchx.cli.main.main(argv)` runs TorchX's verb classes in-process: Runner verbs over the
core's Runner, run/builtins through the binary. Trackers: configured, injected into jobs,
recorded from the job and listed by `torchx tracker`."""

import os
import pathlib
import subprocess
import sys

import pytest

FIXTURES = pathlib.Path(__file__).resolve().parent / "plugin_fixtures_local"


@pytest.fixture
def cli(tmp_path):
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"), PYTHONPATH=str(FIXTURES))
    env.pop("TORCHX_TRACKERS", None)

    def run(*args, extra_env=None, in_process=False):
        entry = ["-c", "import sys; from torchx.cli.main import main; main(sys.argv[1:])"] if in_process else \
            ["-m", "torchx.cli.main"]
        return subprocess.run([sys.executable, *entry, *args], env={**env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)

    return run


def test_the_default_scheduler_is_the_first_plugin(cli, tmp_path):
    # TorchX #1448: plugins come first, so a scheduler plugin (here plugin_fixtures_local's
    # demo_inline and wrapped_local) becomes where `torchx run` goes without -s; .torchxconfig still wins.
    import json

    dry = cli("run", "--dryrun", "--json", "utils.echo")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["scheduler"] in ("demo_inline", "wrapped_local")  # the fixture's two
    (tmp_path / ".torchxconfig").write_text("[cli:run]\nscheduler = local_cwd\n")
    dry = cli("run", "--dryrun", "--json", "utils.echo")
    assert dry.returncode == 0 and json.loads(dry.stdout)["scheduler"] == "local_cwd", dry.stderr


def test_version_dryrun_and_bad_input(cli):
    assert cli("--version").stdout.startswith("torchx-")
    dry = cli("run", "--dryrun", "utils.echo", "--msg", "hi there")
    assert dry.returncode == 0, dry.stderr
    assert "hi there" in dry.stdout
    bad = cli("run", "--dryrun", "utils.echo", "--msgg", "x")
    assert bad.returncode == 2 and "--msgg" in bad.stderr
    missing = cli("status", "local_cwd://torchx/nope-123", in_process=True)
    assert missing.returncode == 1 and "nope-123" in missing.stderr
    assert cli("log", "not-a-handle", in_process=True).returncode == 1
    assert cli("log", "not-a-handle").returncode == 2  # the binary's usage error
    for in_process in (False, True):
        listing = cli("builtins", in_process=in_process)
        assert listing.returncode == 0 and "utils.echo" in listing.stdout


def test_run_then_follow_with_python_verbs(cli):
    run = cli("run", "-s", "local_cwd", "--wait", "utils.echo", "--msg", "from python")
    assert run.returncode == 0, run.stderr
    handle = next(line for line in run.stdout.splitlines() if line.startswith("local_cwd://"))
    status = cli("status", handle, in_process=True)
    assert status.returncode == 0 and "SUCCEEDED" in status.stdout
    assert "echo/0 from python" in cli("log", handle, in_process=True).stdout
    assert handle in cli("list", "-s", "local_cwd", in_process=True).stdout
    assert "'name': 'echo'" in cli("describe", handle, in_process=True).stdout
    assert cli("delete", handle, in_process=True).returncode == 0
    assert cli("status", handle, in_process=True).returncode == 1


def test_tracker_configured_injected_and_listed(cli, tmp_path):
    store = tmp_path / "tracker.json"
    trackers = {"TORCHX_TRACKERS": "demo_json", "TORCHX_TRACKER_DEMO_JSON_CONFIG": str(store)}
    script = "from torchx.tracker import app_run_from_env as r; r().add_metadata(lr=0.1)"
    run = cli("run", "-s", "local_cwd", "--wait", "utils.python", "-c", script, extra_env=trackers)
    assert run.returncode == 0, run.stderr
    handle = next(line for line in run.stdout.splitlines() if line.startswith("local_cwd://"))
    jobs = cli("tracker", "list", "jobs", extra_env=trackers)
    assert jobs.returncode == 0, jobs.stderr
    assert jobs.stdout.split() == [handle]
    assert "lr" in cli("tracker", "list", "metadata", handle, extra_env=trackers).stdout
    nothing = cli("tracker", "list", "jobs")
    assert nothing.returncode != 0 and "no tracker is configured" in nothing.stderr


EXTENDED_RUN = '''
import json, sys
from torchx.cli.cmd_run import CmdRun
from torchx.cli.main import get_sub_cmds, run_main


class TeamRun(CmdRun):  # what a tool adds to `torchx run` (TorchX's options stay)
    def add_arguments(self, subparser):
        super().add_arguments(subparser)
        subparser.add_argument("--team", default="ml")

    def run(self, args):
        print(json.dumps({"team": args.team, "scheduler": args.scheduler, "dryrun": args.dryrun}), flush=True)
        super().run(args)


cmds = get_sub_cmds()
cmds["run"] = TeamRun()
run_main(cmds, sys.argv[1:])
'''


def test_a_tool_extends_torchx_runs_parser(cli, tmp_path):
    from torchx.cli.cmd_run import CmdRun

    parser = __import__("argparse").ArgumentParser()
    CmdRun().add_arguments(parser)
    dests = {a.dest for a in parser._actions}
    assert {"scheduler", "scheduler_args", "dryrun", "wait", "log", "workspace", "parent_run_id", "tee_logs",
            "stdin", "json", "component_name_and_args"} <= dests

    script = tmp_path / "team_run.py"
    script.write_text(EXTENDED_RUN)
    out = subprocess.run([sys.executable, str(script), "run", "--team", "vision", "-s", "local_cwd", "--dryrun",
                          "--json", "utils.echo", "--msg", "hi"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert __import__("json").loads(first) == {"team": "vision", "scheduler": "local_cwd", "dryrun": True}
    dry = __import__("json").loads(second)  # the binary's `run --dryrun --json`, from the parsed options
    assert dry["scheduler"] == "local_cwd" and dry["app"]["roles"][0]["args"] == ["hi"]


def test_run_from_stdin_json(cli):
    import json

    request = {"component_name": "utils.echo", "scheduler": "local_cwd", "scheduler_args": {},
               "dryrun": True, "component_args": {"msg": "from stdin"}}
    out = subprocess.run([sys.executable, "-c", "import sys; from torchx.cli.main import main; main(sys.argv[1:])",
                          "run", "--stdin", "--json"], input=json.dumps(request), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["app"]["roles"][0]["args"] == ["from stdin"]


def test_stdin_run_args_become_cfg_text_the_core_parses_back():
    from torchx import specs
    from torchx.cli.cmd_run import TorchXRunArgs, _argv_of

    args = TorchXRunArgs(component_name="utils.echo", scheduler="x",
                         scheduler_args={"tags": ["a", "b"], "labels": {"k": "v", "j": "w"}, "n": 3},
                         component_args={"env": {"A": "1"}, "msg": "hi"})
    argv = _argv_of(args, json_output=False)
    cfg_text = argv[argv.index("--scheduler_args") + 1]
    opts = specs.runopts()
    opts.add("tags", type_=list[str], default=[], help="")
    opts.add("labels", type_=dict[str, str], default={}, help="")
    opts.add("n", type_=int, default=0, help="")
    assert opts.cfg_from_str(cfg_text) == {"tags": ["a", "b"], "labels": {"k": "v", "j": "w"}, "n": 3}
    assert argv[-4:] == ["--env", "A=1", "--msg", "hi"]

"""torchx.plugins: registration, fractionals, discovery (namespace packages, entry points),
the diagnostic report, and Python plugins used by the runner and by the C++ CLI."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from torchx import plugins, specs
from torchx.plugins import register

FIXTURES = pathlib.Path(__file__).resolve().parent / "plugin_fixtures"


def run_py(code, tmp_path, extra_env=None, pythonpath=(str(FIXTURES),)):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath), DEMO_INLINE_DIR=str(tmp_path / "inline"),
               TORCHX_STATE_DIR=str(tmp_path / "state"), **(extra_env or {}))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_register_tags_functions():
    @register.scheduler()
    def my_sched(session_name, **kwargs):
        return None

    @register.scheduler(name="custom")
    def other(session_name, **kwargs):
        return None

    @register(plugins.PluginType.TRACKER)
    def tracker():
        return None

    assert my_sched._plugin_type == plugins.PluginType.SCHEDULER and my_sched._plugin_name == "my_sched"
    assert other._plugin_name == "custom" and tracker._plugin_type == plugins.PluginType.TRACKER
    assert plugins.PluginType.NAMED_RESOURCE.value == "torchx.named_resources"
    assert (plugins.WHOLE, plugins.HALF, plugins.QUARTER, plugins.EIGHTH, plugins.SIXTEENTH) == (
        1.0, 0.5, 0.25, 0.125, 0.0625)
    with pytest.raises(ValueError, match="fractional"):
        @register.named_resource(fractionals={1.0: "1"})
        def no_fraction_param() -> specs.Resource:
            return specs.Resource(cpu=1, gpu=0, memMB=1)


def test_fractional_helpers():
    assert register.powers_of_two_gpus(specs.Resource(cpu=96, gpu=8, memMB=1024)) == {
        1.0: "8", 0.5: "4", 0.25: "2", 0.125: "1"}
    for gpu in (0, 3):
        with pytest.raises(ValueError, match="power of two"):
            register.powers_of_two_gpus(specs.Resource(cpu=1, gpu=gpu, memMB=1024))
    halve = register.halve_mem_down_to(minGiB=8)
    assert halve(specs.Resource(cpu=1, gpu=0, memMB=64 * 1024)) == {1.0: "64", 0.5: "32", 0.25: "16", 0.125: "8"}
    with pytest.raises(ValueError, match="odd part"):
        register.halve_mem_down_to(minGiB=2)(specs.Resource(cpu=1, gpu=0, memMB=96 * 1024))
    with pytest.raises(ValueError, match="GiB"):
        halve(specs.Resource(cpu=1, gpu=0, memMB=1000))


def test_namespace_plugins_are_discovered_and_used(tmp_path):
    out = run_py(
        """
        import json
        from torchx import plugins, specs
        from torchx.runner import get_runner
        from torchx.components import utils
        reg = plugins.registry()
        assert reg is plugins.registry()
        scheds = reg.get(plugins.PluginType.SCHEDULER)
        res = reg.get(plugins.PluginType.NAMED_RESOURCE)
        info = reg.info()
        info[plugins.PluginType.SCHEDULER].clear()  # a copy: the registry keeps its own
        r = get_runner()
        h = r.run(utils.echo(msg="plugged in"), "demo_inline", cfg={"greeting": "hello"})
        print(json.dumps({
            "scheds": sorted(scheds), "gpu2": res["demo_gpu_2"]().gpu, "alias": res["dgpu"]().gpu,
            "mem": sorted(n for n in res if n.startswith("demo_mem")),
            "lookup": specs.named_resources["demo_gpu_1"].cpu,
            "still": sorted(reg.get(plugins.PluginType.SCHEDULER)),
            "trackers": sorted(reg.get(plugins.PluginType.TRACKER)),
            "state": r.status(h).state.name, "log": list(r.log_lines(h, "echo")),
            "report": str(reg),
        }))
        """,
        tmp_path,
    )
    got = json.loads(out)
    assert got["scheds"] == ["demo_inline", "kubernetes", "local", "local_cwd", "local_docker", "managed", "pipeline", "ray", "slurm", "sweep"] == got["still"]
    assert got["gpu2"] == 2 and got["alias"] == 4 and got["lookup"] == 8
    assert got["mem"] == ["demo_mem", "demo_mem_16", "demo_mem_32", "demo_mem_64"]
    assert got["trackers"] == ["demo_tracker", "fsspec"]  # fsspec: torchx.tracker.backend.fsspec, as TorchX
    assert got["state"] == "SUCCEEDED" and got["log"] == ["plugged in\n"]
    report = got["report"]
    assert "demo_inline                  python:torchx_plugins.schedulers.demo_inline" in report
    assert "[python] python:torchx_plugins.broken.bad_plugin: RuntimeError: this plugin is broken on purpose" in report
    assert "local_cwd                    builtin" in report


def test_scheduler_listings_agree_on_builtin_native_and_python_plugins(tmp_path):
    # One registry behind every listing: get_scheduler_factories(), SchedulerInfo.run_opts() and
    # the Runner see the built-ins, a native plugin and a torchx_plugins.* plugin alike.
    example = os.environ.get("TORCHX_EXAMPLE_PLUGIN", "")
    if not os.path.isfile(example):
        pytest.skip("TORCHX_EXAMPLE_PLUGIN (the example native plugin, built by ctest's plugins.example_build) not set")
    out = run_py(
        """
        import json
        from torchx.runner import get_runner
        from torchx.schedulers import get_default_scheduler_name, get_scheduler_factories
        factories = get_scheduler_factories()
        opts = {n: sorted(k for k, _ in factories[n]("s").run_opts()) for n in ("local_cwd", "example_nohup", "demo_inline")}
        print(json.dumps({"factories": list(factories), "runner": get_runner().scheduler_backends(), "opts": opts,
                          "default": get_default_scheduler_name()}))
        """,
        tmp_path,
        extra_env={"TORCHX_PLUGIN_PATH": example},
    )
    got = json.loads(out)
    assert got["factories"] == got["runner"]
    assert {"local_cwd", "local_docker", "slurm", "kubernetes", "example_nohup", "demo_inline"} <= set(got["factories"])
    # TorchX #1448: plugins first (the native one is loaded first), so the default is a plugin.
    assert got["factories"][0] == got["default"] == "example_nohup"
    assert got["factories"].index("demo_inline") < got["factories"].index("local_cwd")
    assert "root" in got["opts"]["example_nohup"] and "greeting" in got["opts"]["demo_inline"]
    assert "log_dir" in got["opts"]["local_cwd"]


def test_runner_drives_python_scheduler_hooks_once(tmp_path):
    # The core's template describes before a cancel and resolves the cfg before a dry run; the
    # plugin's hooks must be all that runs in Python, so neither happens twice.
    out = run_py(
        """
        import json
        from torchx.components import utils
        from torchx.runner import get_runner
        from torchx.specs import AppState, api
        from torchx_plugins.schedulers import demo_inline

        calls = {"describe": 0, "cancel_existing": [], "resolve": 0, "cfg": None}
        cls = demo_inline.DemoInlineScheduler
        describe, submit, resolve = cls.describe, cls._submit_dryrun, api.runopts.resolve

        def counting_describe(self, app_id):
            calls["describe"] += 1
            d = describe(self, app_id)
            d.state = AppState.RUNNING  # still live, so the core goes on to cancel it
            return d

        def recording_submit(self, app, cfg):
            calls["cfg"] = dict(cfg)
            return submit(self, app, cfg)

        def counting_resolve(self, cfg):
            calls["resolve"] += 1
            return resolve(self, cfg)

        cls.describe, cls._submit_dryrun, api.runopts.resolve = counting_describe, recording_submit, counting_resolve
        cls._cancel_existing = lambda self, app_id: calls["cancel_existing"].append(app_id)
        r = get_runner()
        h = r.run(utils.echo(msg="x"), "demo_inline")
        calls["describe"] = 0
        r.cancel(h)
        print(json.dumps({**calls, "app_id": h.rsplit("/", 1)[1]}))
        """,
        tmp_path,
    )
    got = json.loads(out)
    assert got["describe"] == 1
    assert got["cancel_existing"] == [got["app_id"]]
    assert got["resolve"] == 0 and got["cfg"] == {"greeting": "hi"}  # resolved by the core alone


def test_direct_python_scheduler_calls_keep_torchx_template():
    from torchx.schedulers.api import DescribeAppResponse, Scheduler

    class Fake(Scheduler):
        def __init__(self, state):
            super().__init__("fake", "s")
            self.state, self.cancelled, self.cfgs = state, [], []

        def _run_opts(self):
            opts = specs.runopts()
            opts.add("n", type_=int, help="a number", default=3)
            return opts

        def _submit_dryrun(self, app, cfg):
            self.cfgs.append(cfg)
            return specs.AppDryRunInfo(app.name)

        def schedule(self, dryrun_info):
            return f"id-of-{dryrun_info.request}"

        def describe(self, app_id):
            return None if app_id == "unknown" else DescribeAppResponse(app_id=app_id, state=self.state)

        def list(self, cfg=None):
            return []

        def _cancel_existing(self, app_id):
            self.cancelled.append(app_id)

    class Tagged(specs.Role):
        def pre_proc(self, scheduler, dryrun_info):
            dryrun_info.request += f"+{scheduler}"
            return dryrun_info

    # TorchX's template: cancel and delete act on any app that exists (describe is not None).
    live = Fake(specs.AppState.RUNNING)
    live.cancel("a")
    live.cancel("unknown")
    live.delete("b")
    assert live.cancelled == ["a", "b"]
    app = specs.AppDef(name="app", roles=[Tagged(name="r", image="i")])
    info = live.submit_dryrun(app, {})
    assert live.cfgs == [{"n": 3}] and info.cfg == {"n": 3} and info._scheduler == "fake" and info.app is app
    assert info.request == "app+fake"  # each role's pre_proc ran after _submit_dryrun
    assert live.submit(app, {"n": 4}) == "id-of-app+fake"
    with pytest.raises(TypeError):  # abstract methods missing
        type("Partial", (Scheduler,), {})("x", "s")
    with pytest.raises(ValueError, match="does not support workspaces"):
        live.submit(app, {}, workspace="/tmp")


def test_named_resource_variants_are_named_by_the_core():
    reg = plugins.PluginRegistry(load_entrypoints=False)

    @register.named_resource(aliases=["t"], fractionals={0.5: "half"})
    def table(fractional: float = 1.0) -> specs.Resource:
        return specs.Resource(cpu=int(8 * fractional), gpu=0, memMB=1024)

    @register.named_resource(fractionals=lambda whole: {0.25: f"{whole.cpu // 4}cpu"})
    def custom(fractional: float = 1.0) -> specs.Resource:
        return specs.Resource(cpu=int(8 * fractional), gpu=0, memMB=1024)

    @register.named_resource(fractionals=register.powers_of_two_gpus)
    def no_gpus(fractional: float = 1.0) -> specs.Resource:
        return specs.Resource(cpu=8, gpu=0, memMB=1024)

    found = {}
    for fn in (table, custom, no_gpus):
        reg._add(found, plugins.PluginType.NAMED_RESOURCE, fn, "python:test")
    assert sorted(found) == ["custom", "custom_2cpu", "no_gpus", "t", "table", "table_half"]
    assert found["table_half"][0]().cpu == 4 and found["t"][0]().cpu == 8 and found["custom_2cpu"][0]().cpu == 2
    # TorchX's resource_tags on every registered resource: an alias carries its base's name.
    half, alias, whole = found["table_half"][0](), found["t"][0](), found["table"][0]()
    assert (half.get_resource_name(), half.is_fractional()) == ("table_half", True)
    assert (alias.get_resource_name(), alias.is_fractional()) == ("table", False)
    assert (whole.get_resource_name(), whole.is_fractional()) == ("table", False)
    # A rule that cannot apply keeps the whole resource and reports why.
    assert [e[2] for e in reg._errors] == [
        "named resource no_gpus: powers_of_two_gpus: resource.gpu must be a power of two greater than 0 "
        "(1, 2, 4, 8, ...), got 0"]


def test_entry_points_are_merged_unless_disabled(tmp_path):
    site = tmp_path / "site"
    (site / "ep_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "ep_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-plugin\nVersion: 1.0\n")
    (site / "ep_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[torchx.named_resources]\nep_res = ep_module:ep_res\nbad_res = ep_module:missing\n")
    (site / "ep_module.py").write_text(
        "from torchx.specs import Resource\ndef ep_res():\n    return Resource(cpu=3, gpu=0, memMB=300)\n")
    code = """
        import json, warnings
        warnings.simplefilter("ignore")
        from torchx import plugins
        print(json.dumps({
            "default": sorted(n for n in plugins.registry().get(plugins.PluginType.NAMED_RESOURCE) if n.startswith("ep_")),
            "off": sorted(n for n in plugins.PluginRegistry(load_entrypoints=False).get(plugins.PluginType.NAMED_RESOURCE)
                          if n.startswith("ep_")),
            "report": str(plugins.registry()),
        }))
    """
    got = json.loads(run_py(code, tmp_path, pythonpath=(str(site),)))
    assert got["default"] == ["ep_res"] and got["off"] == []
    assert "ep_res                       entrypoint:ep-plugin" in got["report"]
    assert "bad_res = ep_module:missing" in got["report"]
    disabled = json.loads(run_py(code, tmp_path, {"TORCHX_NO_ENTRYPOINTS": "1"}, pythonpath=(str(site),)))
    assert disabled["default"] == []


def sky_plugin_site(tmp_path, more_entry_points=""):
    """A site directory with an installed distribution whose `[torchx.schedulers]` entry point
    `skyish` raises when its factory is called (NeMo-Run's `skypilot` without SkyPilot)."""
    site = tmp_path / "site"
    info = site / "sky_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sky-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[torchx.schedulers]\nskyish = sky_module:create_scheduler\n"
                                           + more_entry_points)
    (site / "sky_module.py").write_text(
        "def create_scheduler(session_name, **kwargs):\n    raise ModuleNotFoundError('Skypilot is not installed')\n")
    return site


def test_scheduler_factories_construct_no_plugin_and_take_group_and_skip_defaults(tmp_path):
    # NeMo-Run's `skypilot` entry point raises when built without SkyPilot installed; listing the
    # factories (what nemo_run.Experiment does first) must not build it. Plugins come first;
    # skip_defaults lists them alone; another group's entry points are returned as loaded.
    site = sky_plugin_site(tmp_path, "[my.schedulers]\nmine = sky_module:create_scheduler\n")
    code = """
        import json, warnings
        warnings.simplefilter("ignore")
        from torchx.schedulers import get_scheduler_factories
        import sky_module
        every = list(get_scheduler_factories())
        only = list(get_scheduler_factories(skip_defaults=True))
        other = get_scheduler_factories(group="my.schedulers")
        print(json.dumps({"every": every, "only": only, "other": list(other),
                          "other_is_the_entry_point": other["mine"] is sky_module.create_scheduler,
                          "other_only": list(get_scheduler_factories(group="my.schedulers", skip_defaults=True))}))
    """
    got = json.loads(run_py(code, tmp_path, pythonpath=(str(site),)))
    assert got["every"][0] == "skyish" and "local_cwd" in got["every"], got
    assert not {"pipeline", "sweep", "managed"} & set(got["every"]), got
    assert got["only"] == ["skyish"], got
    assert got["other"][0] == "mine" and "local_cwd" in got["other"] and "skyish" not in got["other"], got
    assert got["other_is_the_entry_point"] and got["other_only"] == ["mine"], got


def test_registration_errors_load_errors_clear_and_plugin_sources(tmp_path):
    """TorchX HEAD's registry API: errors (what discovery so far recorded), load_errors()
    (discovering first, filtered by type), clear() and registry.cache_clear() (discover again:
    a plugin dir added to sys.path since shows, here and in the core), TORCHX_PLUGINS_SOURCE."""
    late = tmp_path / "late" / "torchx_plugins" / "named_resources"
    late.mkdir(parents=True)
    (late / "late_res.py").write_text(
        "from torchx.plugins import register\nfrom torchx.specs import Resource\n"
        "@register.named_resource()\ndef late_gpu():\n    return Resource(cpu=1, gpu=1, memMB=64)\n"
        "@register.named_resource(name='late_gpu')\ndef late_twin():\n    return Resource(cpu=2, gpu=2, memMB=64)\n")
    code = f"""
        import dataclasses, json, sys
        from torchx import plugins, specs
        reg = plugins.registry()
        before = reg.errors  # nothing discovered yet
        errs = reg.load_errors()
        nr = reg.load_errors(plugins.PluginType.NAMED_RESOURCE)
        missing = "late_gpu" not in specs.named_resources
        sys.path.insert(0, {str(tmp_path / "late")!r})
        reg.clear()
        fresh = plugins.registry()
        dup = fresh.load_errors(plugins.PluginType.NAMED_RESOURCE)
        print(json.dumps({{
            "before": before, "errs": [dataclasses.asdict(e) for e in errs],
            "nr": [dataclasses.asdict(e) for e in nr], "missing": missing, "new_instance": fresh is not reg,
            "found": specs.named_resources["late_gpu"].gpu, "in_core": "late_gpu" in specs.named_resources,
            "dup": [dataclasses.asdict(e) for e in dup],
            "error_type": type(errs[0]).__name__, "cache_clear": hasattr(plugins.registry, "cache_clear"),
        }}))
    """
    got = json.loads(run_py(code, tmp_path))
    assert got["before"] == []
    assert got["error_type"] == "RegistrationError" and got["cache_clear"]
    broken = [e for e in got["errs"] if e["module"] == "torchx_plugins.broken.bad_plugin"]
    assert len(broken) == 1 and "this plugin is broken on purpose" in broken[0]["error"]
    assert broken[0]["name"] is None and broken[0]["plugin_type"] is None
    assert not any(e["module"] == "torchx_plugins.broken.bad_plugin" for e in got["nr"])  # another group
    assert got["missing"] and got["new_instance"]
    assert got["found"] == 1 and got["in_core"]  # the first registration wins; the core saw the new plugin
    assert [(e["module"], e["name"], e["plugin_type"]) for e in got["dup"]] == [
        ("torchx_plugins.named_resources.late_res", "late_gpu", "named_resource")]
    assert "already registered" in got["dup"][0]["error"]

    none = run_py("""
        from torchx import plugins
        print(sorted(plugins.registry().get(plugins.PluginType.NAMED_RESOURCE)) == sorted(
            n for n in plugins.registry().get(plugins.PluginType.NAMED_RESOURCE) if not n.startswith("demo_")))
    """, tmp_path, {"TORCHX_PLUGINS_SOURCE": "0"})
    assert none.strip() == "True"  # no Python plugins, the core's only
    env = dict(os.environ, PYTHONPATH=str(FIXTURES), TORCHX_PLUGINS_SOURCE="7")
    bad = subprocess.run([sys.executable, "-c", "from torchx import plugins; plugins.registry()"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "TORCHX_PLUGINS_SOURCE='7' is not valid" in bad.stderr
    assert "0 (none), 1 (namespace package only), 2 (entry points only), 3 (both)" in bad.stderr


def test_cli_sees_python_plugins(torchx_bin, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(FIXTURES), DEMO_INLINE_DIR=str(tmp_path / "inline"),
               TORCHX_STATE_DIR=str(tmp_path / "state"))

    def cli(*args):
        return subprocess.run([torchx_bin, *args], env=env, capture_output=True, text=True, timeout=120)

    run = cli("run", "-s", "demo_inline", "utils.echo", "--msg", "via the cli")
    assert run.returncode == 0, run.stderr
    handle = run.stdout.strip().splitlines()[0]
    assert handle.startswith("demo_inline://torchx/echo-")
    assert "State: SUCCEEDED" in cli("status", handle).stdout
    assert "echo/0 via the cli" in cli("log", handle).stdout
    dry = cli("run", "--dryrun", "dist.ddp", "-h", "demo_gpu_2", "--script", "t.py")
    assert dry.returncode == 0, dry.stderr
    assert '"gpu": 2' in dry.stdout
    report = json.loads(cli("plugins", "--json").stdout)
    assert {"name": "demo_inline", "source": "python:torchx_plugins.schedulers.demo_inline"} in report["plugins"]["scheduler"]
    assert any(e["kind"] == "python" and "broken" in e["source"] for e in report["errors"])
    unknown = cli("run", "-s", "nope", "utils.echo")
    assert unknown.returncode == 2 and "demo_inline" in unknown.stderr


def test_structured_opts_and_line_helpers():
    from dataclasses import dataclass, field
    from typing import Optional

    from torchx.schedulers.api import StructuredOpts, split_lines, split_lines_iterator

    @dataclass
    class Cluster(StructuredOpts):
        context: str = "default"
        """kube context"""

    @dataclass
    class Opts(StructuredOpts):
        cluster_name: str
        """Name of the cluster."""

        num_retries: int = 3
        """Retries."""

        mail_user: Optional[str] = field(default=None, metadata={"cfg_key": "mail-user"})
        """Mail."""

        k8s: Cluster = field(default_factory=Cluster)

    opts = Opts.as_runopts()
    assert [k for k, _ in opts] == ["cluster_name", "num_retries", "mail-user", "k8s.context"]
    assert opts.get("cluster_name").is_required and opts.get("num_retries").help == "Retries."
    assert opts.get("k8s.context").help == "kube context"
    typed = Opts.from_cfg(opts.resolve({"clusterName": "c", "mail-user": "me", "k8s.context": "prod"}))
    assert (typed.cluster_name, typed.num_retries, typed.mail_user, typed.k8s.context) == ("c", 3, "me", "prod")
    assert typed["clusterName"] == "c" and typed["k8s.context"] == "prod" and "mail-user" in typed
    assert dict(typed) == {"cluster_name": "c", "num_retries": 3, "mail-user": "me", "k8s.context": "prod"}
    assert (Cluster("a") | Cluster("b")) == {"context": "b"}

    assert split_lines("a\nb\r\nc") == ["a\n", "b\r\n", "c"] and split_lines("") == []
    assert list(split_lines_iterator(["a\nb", "c\n"])) == ["a\n", "b", "c\n"]


def test_a_scheduler_plugin_whose_factory_raises_breaks_only_itself(tmp_path, torchx_bin):
    """NeMo-Run's `skypilot` entry point without SkyPilot: its factory raises. Listing schedulers,
    their options, a run on another scheduler and the dashboard's scheduler list keep working, and
    the plugin is named as broken, with its own error, where it is listed."""
    site = sky_plugin_site(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site), TORCHX_STATE_DIR=str(tmp_path / "state"))

    def cli(*args):
        return subprocess.run([torchx_bin, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    listed = cli("runopts")
    assert listed.returncode == 0, listed.stderr
    assert "skyish:\n    broken: " in listed.stdout and "Skypilot is not installed" in listed.stdout
    assert "local_cwd:" in listed.stdout
    named = cli("runopts", "skyish")
    assert named.returncode != 0 and "Skypilot is not installed" in named.stderr
    ran = cli("run", "-s", "local_cwd", "--wait", "utils.echo", "--msg", "hi")
    assert ran.returncode == 0, ran.stderr
    code = """
        import json, warnings
        warnings.simplefilter("ignore")
        from torchx.components.utils import echo
        from torchx.runner import get_runner
        from torchx.schedulers import get_scheduler_factories
        names = list(get_scheduler_factories())
        with get_runner() as runner:
            handle = runner.run(echo(msg="hi"), "local_cwd")
            state = runner.wait(handle, wait_interval=0.1).state.name
        print(json.dumps({"names": names, "state": state}))
    """
    got = json.loads(run_py(code, tmp_path, pythonpath=(str(site),)))
    assert got["names"][0] == "skyish" and "local_cwd" in got["names"] and got["state"] == "SUCCEEDED", got

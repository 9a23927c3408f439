"""Builtin components from Python, and user components written as Python files/modules."""

import inspect
import json
import pathlib
import subprocess
import textwrap

import pytest

from torchx import specs
from torchx.components import dist, metrics, serve, utils
from torchx.runner import get_runner
from torchx.specs.finder import ComponentNotFoundException, ComponentValidationException

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "golden" / "components"


def test_builtin_signatures_and_docs():
    spec = inspect.getfullargspec(utils.booth)
    assert spec.args == ["x1", "x2", "trial_idx", "tracker_base", "image"]
    assert spec.annotations["x1"] is float and spec.annotations["return"] is specs.AppDef
    ddp = inspect.signature(dist.ddp)
    assert ddp.parameters["script_args"].kind == inspect.Parameter.VAR_POSITIONAL
    assert ddp.parameters["j"].default == "1x2"
    assert "Args:" in dist.ddp.__doc__ and dist.ddp.__module__ == "torchx.components.dist"
    assert callable(serve.torchserve) and callable(metrics.tensorboard)


def golden(name):
    import torchx

    return json.loads((GOLDEN / f"{name}.json").read_text().replace("@DEFAULT_IMAGE@", torchx.IMAGE))


@pytest.mark.parametrize(
    "name,build",
    [
        ("echo_default", lambda: utils.echo()),
        ("echo_msg", lambda: utils.echo(msg="hi there", num_replicas=3, image="img")),
        ("sh", lambda: utils.sh("echo", "hello world", "$HOME", "--flag")),
        ("booth", lambda: utils.booth(1, 2.5, trial_idx=3, tracker_base="/tmp/t")),
        ("ddp_script", lambda: dist.ddp(script="train.py")),
    ],
)
def test_builtins_match_torchx_goldens(name, build):
    """The AppDefs TorchX itself builds for the same arguments (goldens generated from TorchX)."""
    assert specs.api.to_json(build()) == golden(name)


def test_builtin_argument_errors():
    with pytest.raises(TypeError):
        utils.booth(1.0)  # x2 missing: Python's own binding error
    with pytest.raises(ValueError, match="j"):
        dist.ddp(script="t.py", j="notaj")
    with pytest.raises(ValueError, match="script"):
        dist.ddp(script="t.py", m="mod")


COMPONENT = textwrap.dedent(
    '''
    from typing import Dict, List, Optional
    import torchx.specs as specs


    def trainer(*script_args: str, lr: float = 0.01, steps: Optional[List[int]] = None,
                env: Dict[str, str] = {}, fast: bool = False) -> specs.AppDef:
        """Trains.

        Args:
            script_args: script arguments
            lr: learning rate
            steps: checkpoint steps
            env: extra environment
            fast: go fast
        """
        return specs.AppDef(name="trainer", roles=[specs.Role(
            name="trainer", image="", entrypoint="echo",
            args=[f"lr={lr!r}", f"steps={steps!r}", f"fast={fast!r}", *script_args], env=env,
            resource=specs.Resource(cpu=1, gpu=0, memMB=64))])


    def untyped(x, y: set) -> int:
        return 1
    '''
)


@pytest.fixture
def component_file(tmp_path):
    path = tmp_path / "my_component.py"
    path.write_text(COMPONENT)
    return path


def test_cli_runs_a_python_component_file(torchx_bin, component_file, tmp_path):
    out = subprocess.run(
        [torchx_bin, "run", "-s", "local_cwd", "--wait", "--log", f"{component_file}:trainer",
         "--lr", "0.5", "--steps", "1,2", "--fast", "True", "--env", "A=1", "--", "x y", "$(z)"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert "trainer/0 lr=0.5 steps=[1, 2] fast=True x y $(z)" in out.stdout


def test_cli_component_help_and_lint_errors(torchx_bin, component_file):
    helped = subprocess.run([torchx_bin, "run", f"{component_file}:trainer", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0
    assert "--lr float" in helped.stdout and "learning rate (default: 0.01)" in helped.stdout
    bad = subprocess.run([torchx_bin, "run", f"{component_file}:untyped"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "Missing type annotation for argument 'x' in function 'untyped'" in bad.stderr
    assert "'y: set'" not in bad.stderr  # a bare name is a primitive to TorchX's linter
    assert "has incorrect return annotation, supported annotation: AppDef" in bad.stderr
    missing = subprocess.run([torchx_bin, "run", f"{component_file}:nope"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no function `nope`" in missing.stderr
    typo = subprocess.run([torchx_bin, "run", f"{component_file}:trainer", "--lrr", "1"], capture_output=True, text=True)
    assert typo.returncode == 2 and "Did you mean `--lr`?" in typo.stderr


def test_cli_runs_a_module_component(torchx_bin, component_file):
    env = {**__import__("os").environ, "PYTHONPATH": str(component_file.parent)}
    out = subprocess.run([torchx_bin, "run", "--dryrun", "my_component:trainer", "--lr", "2"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert '"lr=2.0"' in out.stdout


def test_runner_run_component_with_a_python_file(component_file):
    runner = get_runner()
    info = runner.dryrun_component(f"{component_file}:trainer", ["--lr", "3", "--", "a"], "local_cwd")
    assert info._app.roles[0].args == ["lr=3.0", "steps=None", "fast=False", "a"]
    info = runner.dryrun_component(f"{component_file}:trainer", {"lr": 4, "steps": ["5"]}, "local_cwd")
    assert info._app.roles[0].args[:2] == ["lr=4.0", "steps=[5]"]
    with pytest.raises(ComponentValidationException, match="Missing type annotation"):
        runner.dryrun_component(f"{component_file}:untyped", [], "local_cwd")
    with pytest.raises(ComponentNotFoundException):
        runner.dryrun_component(f"{component_file.parent}/nope.py:trainer", [], "local_cwd")


def test_dist_torchrun_and_its_deprecated_aliases():
    import warnings

    from torchx.components import dist

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torchrun itself does not warn
        app = dist.torchrun("--lr", "0.1", script="train.py", j="2", h="gpu.small")
    assert app.roles[0].num_replicas == 2 and "--nproc_per_node 1" in app.roles[0].args[1]
    with pytest.warns(UserWarning, match=r"\[Deprecated\] dist.ddp is deprecated; use dist.torchrun instead"):
        ddp = dist.ddp(script="train.py", j="2", h="gpu.small")
    assert ddp.roles[0].num_replicas == 1 and "--nproc_per_node 2" in ddp.roles[0].args[1]  # bare -j: procs
    with pytest.warns(UserWarning, match=r"dist.spmd is deprecated"):
        dist.spmd(script="train.py")


CLASS_COMPONENT = textwrap.dedent(
    '''
    from typing import Optional

    import torchx.specs as specs


    class Base:
        def build(self) -> specs.AppDef:
            return specs.AppDef(self.name, roles=[specs.Role("train", "", entrypoint="echo", args=self.args())])


    class Trainer(Base):
        """Trains a model (a class-based component: torchx-nightly, TorchX #1416).

        Args:
            lr: the learning rate
            epochs: how many passes
            tag: an optional tag
        """

        def __init__(self, lr: float, epochs: int = 2, tag: Optional[str] = None) -> None:
            self.name, self.lr, self.epochs, self.tag = "trainer", lr, epochs, tag

        def args(self):
            return [f"lr={self.lr}", f"epochs={self.epochs}", f"tag={self.tag}"]


    class NoBuild:
        def __init__(self, x: int) -> None:
            self.x = x


    class BadBuild:
        def __init__(self, x: int) -> None:
            self.x = x

        def build(self) -> str:
            return "x"
    '''
)


def test_class_based_components(torchx_bin, tmp_path):
    path = tmp_path / "classes.py"
    path.write_text(CLASS_COMPONENT)
    runner = get_runner()
    info = runner.dryrun_component(f"{path}:Trainer", {"lr": 0.5, "epochs": 3}, "local_cwd")
    assert info._app.roles[0].args == ["lr=0.5", "epochs=3", "tag=None"]  # an inherited build
    info = runner.dryrun_component(f"{path}:Trainer", ["--lr", "1", "--tag", "x"], "local_cwd")
    assert info._app.roles[0].args == ["lr=1.0", "epochs=2", "tag=x"]
    with pytest.raises(ComponentValidationException, match="must define a `build"):
        runner.dryrun_component(f"{path}:NoBuild", ["--x", "1"], "local_cwd")
    with pytest.raises(ComponentValidationException, match="incorrect return annotation"):
        runner.dryrun_component(f"{path}:BadBuild", ["--x", "1"], "local_cwd")
    helped = subprocess.run([torchx_bin, "run", f"{path}:Trainer", "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--lr float" in helped.stdout and "the learning rate (required)" in helped.stdout
    out = subprocess.run([torchx_bin, "run", "--dryrun", "--json", f"{path}:Trainer", "--lr", "2"],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert __import__("json").loads(out.stdout)["app"]["roles"][0]["args"] == ["lr=2.0", "epochs=2", "tag=None"]


def test_class_components_through_the_finder_api(tmp_path, monkeypatch):
    """torchx-nightly's `get_component("file.py:Cls").fn(**kwargs)` returns the AppDef (the class
    built and `build()` called), and `materialize_appdef(fn, argv)` takes it; the module forms
    `module:Cls` and `module.Cls` find it too."""
    from torchx.specs.builders import materialize_appdef
    from torchx.specs.finder import get_component

    path = tmp_path / "classes.py"
    path.write_text(CLASS_COMPONENT)
    component = get_component(f"{path}:Trainer")
    assert component.fn_name == "Trainer" and component.validation_errors == []
    assert component.description.startswith("Trains a model")
    assert list(inspect.signature(component.fn).parameters) == ["lr", "epochs", "tag"]
    app = component.fn(lr=0.5)
    assert isinstance(app, specs.AppDef) and app.roles[0].args == ["lr=0.5", "epochs=2", "tag=None"]
    app = materialize_appdef(component.fn, ["--lr", "1", "--epochs", "4"])
    assert app.roles[0].args == ["lr=1.0", "epochs=4", "tag=None"]
    with pytest.raises(ComponentValidationException, match="must define a `build"):
        get_component(f"{path}:NoBuild")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("classes:Trainer", "classes.Trainer"):
        assert get_component(name).fn(lr=3).roles[0].args[0] == "lr=3"
    with pytest.raises(ComponentNotFoundException):
        get_component("classes:Missing")

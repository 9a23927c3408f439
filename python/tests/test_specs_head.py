"""torchx.specs as in TorchX HEAD (0.8): overlays, workspaces, lazy role fields, run options in
either case, status text, the AWS table, capability keys, and the torchx.util helpers."""

import asyncio
import json
import importlib.metadata
import threading
import time
from typing import Dict, List

import pytest

import torchx
from torchx import specs
from torchx.specs import named_resources_aws as aws
from torchx.specs.overlays import DEL, JOIN, PUT, OverlaySpec, apply_overlay, get_overlay, set_overlay, validate_overlay
from torchx.util import entrypoints, strings, types


def test_version_is_the_packages_and_satisfies_07_pins():
    assert torchx.__version__ == importlib.metadata.version("torchx")
    assert tuple(int(x) for x in torchx.__version__.split(".")[:2]) >= (0, 8)


def test_overlay_merge_rules_and_operators():
    base = {"spec": {"cpu": "1"}, "tags": ["prod"], "n": 1, "containers": [{"name": "main", "image": "v1"}], "x": 1}
    spec = base["spec"]
    apply_overlay(base, {"spec": {"mem": "1Gi"}, "tags": ["gpu"], "n": 3, DEL("x"): None,
                         JOIN("containers", on="name"): [{"name": "main", "tty": True}, {"name": "side"}]})
    assert base == {"spec": {"cpu": "1", "mem": "1Gi"}, "tags": ["prod", "gpu"], "n": 3,
                    "containers": [{"name": "main", "image": "v1", "tty": True}, {"name": "side"}]}
    assert base["spec"] is spec  # merged in place
    apply_overlay(base, {PUT("tags"): ["only"], "containers": ({"name": "t"},)})
    assert base["tags"] == ["only"] and base["containers"] == [{"name": "t"}]  # a tuple replaces a list
    with pytest.raises(TypeError, match="type mismatch for attr: `tags`. list != str"):
        apply_overlay(base, {"tags": "x"})
    with pytest.raises(TypeError, match="JOIN requires a list value"):
        apply_overlay(base, {JOIN("tags", on="name"): "x"})


def test_set_overlay_accumulates_and_get_overlay_reads_by_kind():
    role = specs.Role(name="r", image="i")
    set_overlay(role, "kubernetes", "V1Pod", {"spec": {"nodeSelector": {"a": "b"}}})
    set_overlay(role, "kubernetes", "V1Pod", {"spec": {"tolerations": [{"key": "gpu"}]}})
    assert get_overlay(role, "kubernetes", "V1Pod") == {
        "spec": {"nodeSelector": {"a": "b"}, "tolerations": [{"key": "gpu"}]}}
    assert get_overlay(role, "kubernetes", "V1Job") == {}  # marked nested form: no other kind's overlay
    legacy = specs.Role(name="r", image="i", metadata={"kubernetes": {"spec": {"hostNetwork": True}}})
    assert get_overlay(legacy, "kubernetes", "V1Pod") == {"spec": {"hostNetwork": True}}
    assert get_overlay(legacy, "kubernetes", "V1Pod", flat_fallback=False) == {}
    with pytest.raises(ValueError, match="reserved"):
        set_overlay(role, "kubernetes", "__torchx_overlays__", {})


def test_overlay_file_and_validation(tmp_path):
    f = tmp_path / "pod.yaml"
    f.write_text("spec:\n  tolerations: !!python/tuple\n    - key: gpu\n")
    role = specs.Role(name="r", image="i", metadata={"kubernetes": str(f)})
    assert get_overlay(role, "kubernetes", "V1Pod")["spec"]["tolerations"] == ({"key": "gpu"},)
    with pytest.raises(ValueError, match="`PodSpec.env`"):
        validate_overlay({PUT("env"): {}}, blocklist=["env"], overlay_name="PodSpec")
    with pytest.raises(ValueError, match="misplaced keys"):
        validate_overlay({"volumes": []}, forbidden_keys={"volumes"})
    pod = OverlaySpec("kubernetes", "V1Pod", blocklist=("command",))
    with pytest.raises(ValueError, match="V1Pod.command"):
        pod.set(role, {"command": ["x"]})


def test_kubernetes_dry_run_applies_the_pod_overlay():
    from torchx.runner import get_runner

    role = specs.Role(name="trainer", image="img", entrypoint="python", resource=specs.Resource(1, 0, 64))
    set_overlay(role, "kubernetes", "V1Pod", {"spec": {"nodeSelector": {"accelerator": "a100"}, DEL("restartPolicy"): None}})
    info = get_runner().dryrun(specs.AppDef("app", [role]), "kubernetes", cfg={"queue": "default"})
    text = repr(info)
    assert "accelerator: a100" in text and "restartPolicy" not in text


def test_workspace_forms(tmp_path):
    assert not specs.Workspace.from_str("") and specs.Workspace.from_str("/a").projects == {"/a": ""}
    ws = specs.Workspace.from_str("/a:\n/b: sub\n")
    assert ws.projects == {"/a": "", "/b": "sub"} and str(ws) == "/a;/b:sub"
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "f.txt").write_text("x")
    specs.Workspace({str(tmp_path / "p"): "sub"}).merge_into(tmp_path / "out")
    assert (tmp_path / "out" / "sub" / "f.txt").read_text() == "x"
    assert specs.Role(name="r", image="i", workspace=ws).workspace == ws


def test_lazy_role_fields_resolve_once_across_threads_and_loops():
    calls = []

    def produce():
        calls.append(1)
        time.sleep(0.02)
        return "img"

    shared = {"image": produce}
    a, b = specs.Role("a", "x", overrides=shared), specs.Role("b", "x", overrides=shared)
    results = []
    threads = [threading.Thread(target=lambda r=r: results.append(r.image)) for r in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["img"] * 4 and len(calls) == 1

    async def inside_a_loop():
        async def value():
            return "from-coro"

        return specs.Role("c", "x", overrides={"image": value()}).image

    assert asyncio.run(inside_a_loop()) == "from-coro"

    def boom():
        raise RuntimeError("boom")

    r = specs.Role("d", "x", overrides={"image": boom})
    with pytest.raises(RuntimeError):
        _ = r.image
    assert r.overrides["image"] is boom  # kept for another try


def test_runopts_head_rules():
    opts = specs.runopts()
    opts.add("cluster_id", type_=str, help="c", required=True)
    opts.add("labels", type_=dict[str, str], help="l", default={})
    opts.add("names", type_=list[str], help="n", default=[])
    with pytest.raises(TypeError):
        opts.add("priority", type_=int, help="p", default=0.5)
    assert opts.get("clusterId") is opts.get("cluster_id")
    assert opts.resolve({"clusterId": "x"})["cluster_id"] == "x"
    assert opts.cfg_from_str("names=a;b,labels=k:v") == {"names": ["a", "b"], "labels": {"k": "v"}}
    flag = specs.runopt(default=False, opt_type=bool, is_required=False, help="")
    assert flag.cast_to_type("Yes") is True and flag.cast_to_type("off") is False
    with pytest.raises(ValueError, match="garbage"):
        flag.cast_to_type("garbage")
    merged = opts | specs.runopts()
    assert len(merged) == 3 and specs.runopts.is_type({"a": "b"}, Dict[str, str])


def test_unknown_run_options_are_refused_as_torchx_nightly_does():
    # torchx-nightly 2026.10.26 (TorchX #1417), for the same options and input:
    #   Unknown run option `UNKWN`. Valid options are: J, K. Given: {'K': 'a', 'UNKWN': 'b'}
    opts = specs.runopts()
    opts.add("K", type_=list[str], default=[], help="")
    opts.add("J", type_=str, default="", help="")
    with pytest.raises(specs.InvalidRunConfigException,
                       match=r"^Unknown run option `UNKWN`. Valid options are: J, K. Given: \{'K': 'a', 'UNKWN': 'b'\}"):
        opts.cfg_from_str("K=a,UNKWN=b")
    with pytest.raises(specs.InvalidRunConfigException, match="Unknown run option `some_other_opt`"):
        opts.resolve({"K": ["a"], "some_other_opt": "baz"})
    assert opts.resolve({"some_other_opt": "baz"}, ignore_unknown=True) == {"some_other_opt": "baz", "K": [], "J": ""}
    with pytest.raises(specs.InvalidRunConfigException, match="Did you mean `log_dir`"):
        from torchx.runner import get_runner

        get_runner().dryrun(specs.AppDef("a", [specs.Role("r", "", entrypoint="true")]), "local_cwd", {"log_dirr": "/x"})
    assert specs.api.cases.snake_to_camel("hpc_cluster_uuid") == "hpcClusterUuid"


def test_app_status_yaml_repr_and_error_file_schemas():
    flat = '{"message": "Injected: boom", "timestamp": 1293182, "errorCode": 1}'
    status = specs.AppStatus(
        specs.AppState.RUNNING,
        roles=[specs.RoleStatus("w", [specs.ReplicaStatus(0, specs.AppState.FAILED, "w", "h", flat)])],
    )
    assert "*w[0]:FAILED (exitcode: 1)" in status.format() and "error_msg: Injected: boom" in status.format()
    assert "structured_error_msg:\n    message: test" in repr(
        specs.AppStatus(specs.AppState.FAILED, structured_error_msg='{"message": "test"}'))
    assert status.to_json()["roles"][0]["replicas"][0]["hostaddr"] == "h"


def test_aws_table_and_capability_keys():
    assert len(aws.NAMED_RESOURCES) == 61
    b300 = aws.aws_p6_b300_48xlarge()
    assert (b300.cpu, b300.gpu, b300.memMB) == (192, 8, 4096 * int(1024 * aws.MEM_TAX))
    assert b300.devices == {aws.EFA_DEVICE: 16} and aws.instance_type_from_resource(b300) == "p6-b300.48xlarge"
    assert specs.named_resources["aws_m5d.metal"] == aws.aws_m5d_metal()
    assert "aws_p5e.48xlarge" in list(specs.named_resources)
    key = specs.CapabilityKey("aws", "gbps", int)
    res = specs.Resource(cpu=1, gpu=0, memMB=1)
    key.set(res, 400)
    assert key.get(res) == 400 and res.capabilities == {"aws.gbps": 400}
    res.capabilities["aws.gbps"] = True
    with pytest.raises(TypeError, match="expected `int`, got `bool`"):
        key.get(res)


def test_torchx_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHX_HOME", str(tmp_path / "home"))
    assert specs.TORCHX_HOME("conda", "out") == tmp_path / "home" / "conda" / "out"
    assert (tmp_path / "home" / "conda" / "out").is_dir()


def test_util_helpers():
    assert types.to_dict("FOO=v1,v2,BAR=v3") == {"FOO": "v1,v2", "BAR": "v3"}
    assert types.decode("1,2", List[int]) == [1, 2] and types.decode("True", bool) is True
    assert types.decode_optional(int | None) is int
    with pytest.raises(AssertionError, match="missing"):
        types.none_throws(None, "missing")
    assert strings.normalize_str("-My_App.1") == "myapp1"
    assert entrypoints.load("no.such.group", "x", default=42) == 42
    with pytest.raises(KeyError):
        entrypoints.load("no.such.group", "x")
    assert entrypoints.load_group("no.such.group") == {}


def test_scheduler_ids_devices_and_tee(tmp_path, monkeypatch):
    from torchx.schedulers import devices, ids, streams

    monkeypatch.setattr("os.urandom", lambda n: bytes(range(n)))
    first = ids.random_id()
    assert first == ids.random_id() and first[0] in ids.START_CANDIDATES
    assert set(first) <= set(ids.END_CANDIDATES) and ids.random_id(3) == first[:3] and ids.random_id(0) == ""
    assert ids.make_unique("app") == f"app-{first}" and ids.make_unique("app", 4) == f"app-{first[:4]}"
    monkeypatch.undo()

    with pytest.warns(UserWarning, match="x/y"):
        mounts = devices.get_device_mounts({"vpc.amazonaws.com/efa": 2, "x/y": 1})
    assert [m.src_path for m in mounts] == ["/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1"]

    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"1")
    b.write_bytes(b"2")
    out = open(tmp_path / "ab", "wb", buffering=0)
    tee = streams.Tee(out, str(a), str(b))
    with open(a, "ab") as fa:
        fa.write(b"3")
    tee.close()
    assert sorted((tmp_path / "ab").read_bytes()) == sorted(b"123")


def test_structured_arguments():
    from torchx.components.dist import parse_nnodes
    from torchx.components.structured_arg import StructuredJArgument, StructuredNameArgument

    assert StructuredNameArgument.parse_from(name="/", m="bar.baz") == StructuredNameArgument("default-experiment", "baz")
    assert StructuredNameArgument.parse_from(name="foo/", script="bar/baz.py") == StructuredNameArgument("foo", "baz")
    with pytest.raises(ValueError, match="^No main module or script specified"):
        StructuredNameArgument.parse_from(name="foo/bar")
    assert StructuredJArgument.parse_from(h="aws_p4d.24xlarge", j="2") == StructuredJArgument(2, 8)
    with pytest.warns(UserWarning, match="nproc_per_node=4"):
        assert str(StructuredJArgument.parse_from(h="aws_p4d.24xlarge", j="2x4")) == "2x4"
    with pytest.raises(ValueError, match="is not a GPU instance"):
        StructuredJArgument.parse_from(h="aws_trn1.32xlarge", j="2")
    assert parse_nnodes("2:4x8") == (2, 4, 8, "2:4") and parse_nnodes("8") == (1, 1, 8, "1")


def test_file_linter_messages(tmp_path):
    from torchx.specs import file_linter

    src = tmp_path / "comp.py"
    src.write_text(
        "from torchx.specs import AppDef\n"
        "def good(a: int, b: dict[str, int] | None = None, *, c: tuple[str, int] = ('x', 1)) -> AppDef: ...\n"
        "def bad(a, b: dict[str], c: tuple[str], d: list[list[str]]) -> int: ...\n"
    )
    assert file_linter.validate(str(src), "good") == []
    msgs = [m.description for m in file_linter.validate(str(src), "bad")]
    assert msgs[0] == "Missing type annotation for argument 'a' in function 'bad'"
    assert msgs[1].startswith("Malformed dict type 'dict[str]', expected exactly two type parameters (dict[K, V])")
    assert msgs[2].startswith("Unsupported tuple type 'tuple[str]': single-element tuples")
    assert msgs[3] == "Non-primitive element type 'list[str]' for argument 'd: list[list[str]]' in function 'bad'"
    assert msgs[4] == "Function: bad has incorrect return annotation, supported annotation: AppDef"
    assert file_linter.validate(str(src), "bad", []) == []
    assert [m.description for m in file_linter.validate(str(src), "nope")] == ["Function nope not found"]

    def documented(x: int, y: str) -> None:
        """Short.

        Longer text.

        Args:
            x: the x
        """

    assert file_linter.get_fn_docstring(documented) == ("Short.\nLonger text.", {"x": "the x", "y": " "})


def _roles(app_name: str, scripts: Dict[str, str], *extra: str, flag: bool = False, n: int = 1) -> "specs.AppDef":
    """Roles in the given order.

    Args:
        app_name: name
        scripts: role -> script
        flag: a flag
        n: replicas
    """
    roles = [specs.Role(r, "img", entrypoint=s, args=list(extra), num_replicas=n) for r, s in scripts.items()]
    return specs.AppDef(app_name if not flag else app_name + "-flag", roles)


def test_builders_parse_with_the_core_keeping_dict_order_and_precedence(capsys):
    from torchx.specs import builders

    app = builders.materialize_appdef(_roles, ["--app_name", "a", "--scripts", "w=w.py,m=m.py", "--flag", "True", "x"])
    assert [r.name for r in app.roles] == ["w", "m"] and app.name == "a-flag" and app.roles[0].args == ["x"]
    ns = builders.parse_args(_roles, ["--app_name", "cli", "--scripts", "a=b"], cmpnt_defaults={"n": "3"},
                             config={"app_name": "cfg", "flag": True})
    assert (ns.app_name, ns.flag, ns.n) == ("cli", True, 3)
    args = builders.component_args_from_str(_roles, ["--app_name=a", "--scripts=a=b", "--", "--x"])
    assert args == builders.ComponentArgs({"app_name": "a", "scripts": {"a": "b"}}, ["--x"], {"flag": False, "n": 1})
    with pytest.raises(SystemExit):
        builders.materialize_appdef(_roles, [])
    assert "app_name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        builders._create_args_parser(_roles).parse_args(["--help"])
    with pytest.raises(KeyError, match="type must be specified first"):
        builders.parse_mounts(["src=foo"])


def test_finder_and_component_test_case(tmp_path):
    from torchx.components import utils
    from torchx.components.component_test_base import ComponentTestCase
    from torchx.specs import finder

    comp = tmp_path / "comp.py"
    comp.write_text(
        "from torchx.specs import AppDef, Role\n"
        "def train(name: str) -> AppDef:\n"
        "    '''Trains.\n\n    Args:\n        name: app name\n    '''\n"
        "    return AppDef(name, [Role('r', 'img', entrypoint='python')])\n"
        "def bad(name) -> AppDef: ...\n"
    )
    c = finder.get_component(f"{comp}:train")
    assert (c.description, c.fn_name, c.validation_errors) == ("Trains.", "train", [])
    with pytest.raises(finder.ComponentValidationException, match="Missing type annotation"):
        finder.get_component(f"{comp}:bad")
    with pytest.raises(finder.ComponentNotFoundException):
        finder.get_component("utils.nope")
    builtins = finder.get_components()
    assert "dist.ddp" in builtins and builtins["utils.echo"].fn(msg="hi").roles[0].args[-1] == "hi"

    case = ComponentTestCase()
    case.validate(utils, "echo")  # a builtin: the core's declaration
    mod = type(utils)("comp")
    mod.__file__ = str(comp)
    mod.train = None
    case.validate(mod, "train")  # a Python file: the linter, then --help
    status = case.run_component(utils.echo, {"msg": "from test"}, timeout=10)
    assert status is not None and status.state == specs.AppState.SUCCEEDED

    app = utils.python(m="foo.main", mounts=["type=bind", "src=/host", "dst=/job", "readonly"])
    assert app.roles[0].mounts == [specs.BindMount(src_path="/host", dst_path="/job", read_only=True)]


def test_runner_cfg_from_str_and_malformed_cfg_is_a_value_error():
    from torchx.runner import get_runner

    runner = get_runner()
    assert runner.cfg_from_str("local_cwd", "log_dir=/tmp/x", "prepend_cwd=True") == {
        "log_dir": "/tmp/x", "prepend_cwd": True}
    with pytest.raises(ValueError, match="key=value"):
        runner.cfg_from_str("local_cwd", "malformed")
    with pytest.raises(specs.InvalidRunConfigException):
        specs.runopts().cfg_from_str("x")


def test_overlay_tuples_cross_the_core_and_linter_unwraps_annotated(tmp_path):
    from typing import Annotated  # noqa: F401 - in the linted source below

    from torchx.runner import get_runner
    from torchx.specs import file_linter

    role = specs.Role(name="trainer", image="img", entrypoint="python", resource=specs.Resource(1, 0, 64))
    role.metadata["kubernetes"] = {"spec": {"volumes": ({"name": "only"},)}}
    app = specs.AppDef("app", [role])
    assert specs.api.from_json(json.loads(specs.api.app_to_core(app))).roles[0].metadata == role.metadata
    text = repr(get_runner().dryrun(app, "kubernetes", cfg={"queue": "default"}))
    assert "name: only" in text and "__torchx_tuple__" not in text

    src = tmp_path / "c.py"
    src.write_text("from typing import Annotated\nfrom torchx.specs import AppDef\n"
                   "def f(j: Annotated[str, '-j'] = '1x2') -> AppDef: ...\n")
    assert file_linter.validate(str(src), "f") == []
    opts = specs.runopts()
    opts.add("names", type_=List[str], help="n", default=[])
    assert opts.cfg_from_json_repr('{"names": [1, 2], "other": 3}') == {"names": ["1", "2"]}

"""torchx.specs: the job model objects, their JSON form, and the rules the core applies."""

import copy
import dataclasses
import json

import pytest

from torchx import specs
from torchx.runner import get_runner
from torchx.specs import api
from torchx.specs.builders import parse_mounts


def make_app(**role_kwargs):
    role = specs.Role(
        name="trainer",
        image="img",
        entrypoint="python",
        args=["-m", "train", "--id", specs.macros.app_id],
        env={"RANK0": specs.macros.rank0_env},
        resource=specs.Resource(cpu=2, gpu=0, memMB=1024),
        **role_kwargs,
    )
    return specs.AppDef(name="app", roles=[role])


def test_role_defaults_match_torchx():
    r = specs.Role(name="r", image="i")
    assert r.entrypoint == specs.MISSING == "<MISSING>"
    assert r.num_replicas == 1 and r.max_retries == 0 and r.min_replicas is None
    assert r.retry_policy == specs.RetryPolicy.APPLICATION
    assert r.resource == specs.NULL_RESOURCE and r.resource is not specs.NULL_RESOURCE
    assert r.args == [] and r.env == {} and r.mounts == [] and r.port_map == {}


def test_appdef_json_round_trip_through_core():
    app = make_app(
        num_replicas=3,
        max_retries=2,
        retry_policy=specs.RetryPolicy.REPLICA,
        mounts=[specs.BindMount("/a", "/b", True), specs.VolumeMount("v", "/c"), specs.DeviceMount("/dev/x", "/dev/y")],
        metadata={"k": {"nested": [1, 2.5, "x", None]}},
        port_map={"http": 80},
    )
    app.roles[0].resource.capabilities["instance"] = "big"
    text = specs.api.app_to_core(app)
    canonical = json.loads(specs.api.core().appdef_normalize(text))
    assert specs.api.from_json(canonical) == app


# One of each mount, so the core writes every mount form's fields.
_ALL_MOUNTS = [
    {"type": "bind", "src_path": "/a", "dst_path": "/b", "read_only": True},
    {"type": "volume", "src": "vol", "dst_path": "/c", "read_only": True},
    {"type": "device", "src_path": "/dev/x", "dst_path": "/dev/y", "permissions": "r"},
]


def _core_canonical(app_json):
    return json.loads(specs.api.core().appdef_normalize(json.dumps(app_json)))


def test_python_carries_exactly_the_core_fields():
    # The core writes every field (canonical form), so its output lists its fields; a field it
    # gains and the dataclasses do not carry fails here instead of being dropped on the way back.
    core = _core_canonical({"name": "a", "roles": [{"name": "r", "image": "i", "mounts": _ALL_MOUNTS}]})
    role = core["roles"][0]
    assert set(core) == set(api.carried_fields(specs.AppDef))
    assert set(role) == set(api.carried_fields(specs.Role))
    assert set(role["resource"]) == set(api.carried_fields(specs.Resource))
    for mount, cls in zip(role["mounts"], (specs.BindMount, specs.VolumeMount, specs.DeviceMount)):
        assert set(mount) - {"type"} == set(api.carried_fields(cls))
    # What Python keeps to itself is deliberate, and only this.
    every_role_field = {f.name for f in dataclasses.fields(specs.Role)}
    assert every_role_field - set(api.carried_fields(specs.Role)) == {"base_image", "overrides", "workspace"}


def test_every_field_round_trips_core_python_core():
    sample = {
        "name": "app",
        "metadata": {"team": "x"},
        "roles": [{
            "name": "trainer", "image": "img", "entrypoint": "python", "args": ["-m", "t"], "env": {"A": "1"},
            "num_replicas": 4, "min_replicas": 2, "max_retries": 3, "retry_policy": "ROLE",
            "resource": {"cpu": 2, "gpu": 1, "memMB": 1024, "capabilities": {"k": "v"},
                         "devices": {"vpc.amazonaws.com/efa": 1}, "tags": {"origin": "test"}},
            "port_map": {"http": 80}, "metadata": {"m": {"nested": [1, None]}}, "mounts": _ALL_MOUNTS,
        }],
    }
    core = _core_canonical(sample)
    app = specs.api.from_json(core)
    role = app.roles[0]
    # The sample sets every carried field away from its default, so a dropped field shows below.
    defaults = specs.Role(name="", image="")
    for name in api.carried_fields(specs.Role):
        assert getattr(role, name) != getattr(defaults, name), name
    assert role.retry_policy is specs.RetryPolicy.ROLE and isinstance(role.resource, specs.Resource)
    assert json.loads(specs.api.core().appdef_normalize(specs.api.app_to_core(app))) == core


def test_role_overrides_are_resolved_before_crossing():
    # TorchX's Role.overrides: field -> producer, resolved on the first read of the field.
    async def entrypoint():
        return "python"

    role = specs.Role(
        name="trainer", image="old", entrypoint="<MISSING>", resource=specs.Resource(cpu=1, gpu=0, memMB=64),
        overrides={"image": lambda: "new", "args": lambda: ["--lr", "0.1"], "entrypoint": entrypoint()},
    )
    app = specs.AppDef(name="app", roles=[role])
    core = _core_canonical(specs.api.to_json(app))["roles"][0]
    assert (core["image"], core["args"], core["entrypoint"]) == ("new", ["--lr", "0.1"], "python")
    # Resolved once, written back into the (shared) overrides dict, the field itself untouched.
    assert role.image == "new" and role.overrides["image"]() == "new"
    assert role.__dict__["image"] == "old"
    info = get_runner().dryrun(app, "local_cwd")
    assert info._app.roles[0].image == "new"


def test_from_json_refuses_fields_python_does_not_carry():
    with pytest.raises(ValueError, match=r"AppDef\.roles\[0\]: field\(s\) gpus .* torchx\.specs\.Role"):
        specs.api.from_json({"name": "a", "roles": [{"name": "r", "image": "i", "gpus": 1}]})
    with pytest.raises(ValueError, match=r"mounts\[0\]\.type: 'nfs' is not one of bind, volume, device"):
        specs.api.from_json({"name": "a", "roles": [{"name": "r", "image": "i", "mounts": [{"type": "nfs"}]}]})


def test_appdef_wrong_type_names_the_field():
    app = make_app()
    app.roles[0].num_replicas = "three"
    with pytest.raises(ValueError, match=r"roles\[0\]\.num_replicas"):
        specs.api.core().appdef_normalize(specs.api.app_to_core(app))


def test_macros_values_apply_and_substitute():
    app = make_app()
    values = specs.macros.Values(img_root="/img", app_id="app-123", replica_id="0", rank0_env="MASTER_ADDR")
    role = values.apply(app.roles[0])
    assert role.args[-1] == "app-123"
    assert role.env["RANK0"] == "MASTER_ADDR"
    assert app.roles[0].args[-1] == "${app_id}"  # a copy: the original is untouched
    assert values.substitute("$$ ${app_id} $unknown ${replica_id}") == "$ app-123 $unknown 0"


def test_app_state_enum_values_and_text():
    assert [s.value for s in specs.AppState] == list(range(8))
    assert [s.name for s in specs.AppState] == specs.api.core().app_state_names()
    assert str(specs.AppState.RUNNING) == "RUNNING"
    assert repr(specs.AppState.FAILED) == "FAILED (5)"
    assert specs.is_terminal(specs.AppState.CANCELLED) and not specs.is_terminal(specs.AppState.RUNNING)
    assert specs.AppState(3) == specs.AppState.RUNNING == 3


def test_app_status_format_and_raise():
    status = specs.AppStatus(
        state=specs.AppState.FAILED,
        num_restarts=1,
        msg="boom",
        roles=[specs.RoleStatus("trainer", [specs.ReplicaStatus(0, specs.AppState.FAILED, "trainer", "localhost")])],
    )
    text = status.format()
    assert "State: FAILED" in text and "Num Restarts: 1" in text and "trainer[0]:FAILED" in text
    assert "state: FAILED (5)" in repr(status)  # TorchX's YAML form
    with pytest.raises(specs.AppStatusError):
        status.raise_for_status()
    specs.AppStatus(state=specs.AppState.SUCCEEDED).raise_for_status()


def test_app_handles():
    h = specs.make_app_handle("local_cwd", "torchx", "app-1")
    assert h == "local_cwd://torchx/app-1"
    assert specs.parse_app_handle(h) == ("local_cwd", "torchx", "app-1")
    assert specs.parse_app_handle("k8s:///ns:app").session_name == ""
    for bad in ["", "local_cwd://", "no-scheme/app", "local_cwd://session/"]:
        with pytest.raises(specs.MalformedAppHandleException):
            specs.parse_app_handle(bad)


def test_named_resources():
    r = specs.named_resources["gpu.small"]
    assert (r.cpu, r.gpu, r.memMB) == (8, 1, 32768)
    assert "gpu.small" in specs.named_resources and "nope" not in specs.named_resources
    r.cpu = 1  # each lookup is a fresh object
    assert specs.named_resources["gpu.small"].cpu == 8
    with pytest.raises(KeyError, match="gpu.small"):
        specs.named_resources["gpu.smal"]
    assert specs.resource(h="gpu.small") == specs.get_named_resources("gpu.small")
    assert specs.resource(cpu=4) == specs.Resource(cpu=4, gpu=0, memMB=1024)
    assert specs.named_resources["NULL"] == specs.NULL_RESOURCE
    assert "gpu.small" in list(specs.named_resources)  # TorchX HEAD iterates the names


def test_resource_copy_merges_capabilities():
    base = specs.Resource(cpu=1, gpu=0, memMB=10, capabilities={"a": 1})
    c = specs.Resource.copy(base, b=2)
    assert c.capabilities == {"a": 1, "b": 2} and base.capabilities == {"a": 1}


def test_parse_mounts():
    mounts = parse_mounts(["type=bind", "src=/a", "dst=/b", "readonly", "type=volume", "src=v", "dst=/c"])
    assert mounts == [specs.BindMount("/a", "/b", True), specs.VolumeMount("v", "/c", False)]
    with pytest.raises(ValueError, match="type"):
        parse_mounts(["type=nfs", "src=/a", "dst=/b"])


def test_runopts_resolve_render_and_errors():
    opts = specs.runopts()
    opts.add("partition", type_=str, help="where", required=True)
    opts.add("nodes", type_=int, help="count", default=1)
    opts.add("tags", type_=list, help="labels", default=None)
    assert opts.resolve({"partition": "p"}) == {"partition": "p", "nodes": 1, "tags": None}
    with pytest.raises(specs.InvalidRunConfigException, match="Required run option: partition"):
        opts.resolve({})
    with pytest.raises(specs.InvalidRunConfigException, match="must be of type: int"):
        opts.resolve({"partition": "p", "nodes": "2"})
    assert opts.cfg_from_str("partition=p,nodes=3;tags=a,b") == {"partition": "p", "nodes": 3, "tags": ["a", "b"]}
    assert "partition=PARTITION" in repr(opts)
    assert len(opts) == 3 and opts.get("nodes").default == 1
    with pytest.raises(TypeError):  # TorchX HEAD: a default of the wrong type is a TypeError
        opts.add("x", type_=int, help="h", default="not an int")
    with pytest.raises(ValueError):
        opts.add("x", type_=int, help="h", default=1, required=True)
    with pytest.raises(TypeError):
        opts.add("y", type_=set, help="h")


def test_dataclass_behaviour_kept():
    app = make_app()
    clone = copy.deepcopy(app)
    assert clone == app
    assert dataclasses.replace(app.roles[0], num_replicas=4).num_replicas == 4
    assert dataclasses.asdict(app)["roles"][0]["name"] == "trainer"

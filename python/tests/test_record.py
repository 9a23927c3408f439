"""torchx._record: the job model's classes behave as dataclasses to the dataclasses module and to
their callers, and importing the runner loads neither dataclasses nor inspect nor json."""

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from typing import List, Optional

import pytest

from torchx import specs
from torchx._record import field, fields_of, record
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse
from torchx.specs.api import to_json


@record
class Point:
    x: int
    y: int = 0
    tags: List[str] = field(default_factory=list)
    label: Optional[str] = field(default=None, kw_only=True)


def test_init_follows_dataclass_rules():
    p = Point(1)
    assert (p.x, p.y, p.tags, p.label) == (1, 0, [], None)
    assert Point(1).tags is not Point(1).tags  # a factory per instance
    assert Point(1, 2, ["a"], label="l").label == "l"
    with pytest.raises(TypeError):
        Point()  # x is required
    with pytest.raises(TypeError):
        Point(1, 2, [], "l")  # label is keyword-only
    with pytest.raises(TypeError):
        Point(1, z=3)


def test_signature_is_the_dataclass_one():
    sig = str(inspect.signature(Point))
    assert sig == "(x: int, y: int = 0, tags: List[str] = <factory>, *, label: Optional[str] = None) -> None"
    # Read before any instance exists: the first read compiles __init__.
    assert list(inspect.signature(specs.AppDef).parameters) == ["name", "roles", "metadata"]


def test_repr_eq_and_hash_as_dataclass():
    assert repr(Point(1, label="a")) == "Point(x=1, y=0, tags=[], label='a')"
    assert Point(1) == Point(1) and Point(1) != Point(2)
    assert Point(1).__eq__(object()) is NotImplemented
    assert Point.__hash__ is None
    assert Point.__match_args__ == ("x", "y", "tags")
    # A class's own methods are kept: Workspace and ListAppResponse define __hash__.
    assert hash(specs.Workspace({"a": ""})) == hash(specs.Workspace({"a": ""}))
    assert len({ListAppResponse("a", specs.AppState.RUNNING), ListAppResponse("a", specs.AppState.RUNNING)}) == 1
    with pytest.raises(TypeError):
        hash(specs.Role(name="r", image="i"))


def test_the_dataclasses_module_reads_records():
    role = specs.Role(name="r", image="i", args=["a"])
    assert dataclasses.is_dataclass(role) and dataclasses.is_dataclass(specs.Role)
    assert [f.name for f in dataclasses.fields(role)] == [f.name for f in fields_of(specs.Role)]
    assert dataclasses.replace(role, name="s") == specs.Role(name="s", image="i", args=["a"])
    assert dataclasses.asdict(specs.AppDef("app", [role]))["roles"][0]["resource"]["cpu"] == -1
    kw_only = {f.name for f in dataclasses.fields(specs.Role) if f.kw_only}
    assert kw_only == {"base_image"}
    defaults = {f.name: f.default_factory() for f in dataclasses.fields(specs.Role)
                if f.default_factory is not dataclasses.MISSING}
    assert defaults["args"] == [] and defaults["resource"] == specs.NULL_RESOURCE
    assert dataclasses.asdict(DescribeAppResponse())["roles"] == []


def test_dataclass_and_plain_subclasses():
    @dataclasses.dataclass
    class Tagged(specs.Role):
        tag: str = "t"

    t = Tagged("n", "i", tag="u")
    assert (t.name, t.tag, t.num_replicas) == ("n", "u", 1)

    class Hooked(specs.Role):
        def pre_proc(self, scheduler, dryrun_info):
            return dryrun_info

    h = Hooked(name="n", image="i")
    assert h.name == "n" and repr(h).startswith(Hooked.__qualname__ + "(name='n', image='i',")  # as @dataclass's
    assert to_json(specs.AppDef("a", [h]))["roles"][0]["name"] == "n"


def test_post_init_copies_and_pickles():
    r = specs.ReplicaStatus(0, specs.AppState.RUNNING, "w", "host")
    assert r.hostaddr == "host"  # __post_init__ ran
    role = specs.Role(name="r", image="i", env={"A": "1"})
    assert copy.deepcopy(role) == role and pickle.loads(pickle.dumps(role)) == role


def test_bad_declarations_are_refused():
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Bad:
            xs: list = []  # noqa: RUF012

    with pytest.raises(TypeError, match="follows default argument"):
        @record
        class Order:
            a: int = 0
            b: int


def test_importing_the_runner_loads_no_dataclasses_inspect_or_json():
    code = ("import sys, torchx.runner, torchx.specs;"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'json', 'copy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_records_and_dataclasses_mixed_in_a_hierarchy():
    @dataclasses.dataclass
    class Middle(Point):
        w: int = 5

    @record
    class Bottom(Middle):
        v: int = 7

    assert [f.name for f in fields_of(Bottom)] == ["x", "y", "tags", "label", "w", "v"]
    b = Bottom(1, w=6)
    assert (b.x, b.w, b.v) == (1, 6, 7)
    assert [f.name for f in dataclasses.fields(b)] == ["x", "y", "tags", "label", "w", "v"]


def test_copy_replace_and_a_record_holding_itself():
    p = Point(1, tags=["a"])
    assert p.__replace__(y=3) == Point(1, 3, ["a"])  # what copy.replace calls (3.13+)
    q = Point(2)
    q.tags.append(q)
    assert repr(q) == "Point(x=2, y=0, tags=[...], label=None)"

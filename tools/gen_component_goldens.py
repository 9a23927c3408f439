#!/usr/bin/env python3
"""Writes tests/golden/components/<case>.json from the reference TorchX (TorchX HEAD: pip install torchx, or a checkout on PYTHONPATH, in a
virtual env of its own), so the C++ builtins are checked against what TorchX really produces.

    /path/to/txvenv/bin/python tools/gen_component_goldens.py

Each case in cases.jsonl is materialized through TorchX's own CLI-argument path
(torchx.specs.builders.materialize_appdef) and written in this project's canonical AppDef JSON.
TorchX's default image is written as @DEFAULT_IMAGE@ (the test substitutes ours). Where this
project deliberately differs (docs/compatibility.md), the difference is applied here, by name.
"""
import json
import os
import pathlib

os.environ.pop("LOGLEVEL", None)

import torchx  # noqa: E402
from torchx.specs import api  # noqa: E402
from torchx.specs.builders import materialize_appdef  # noqa: E402
from torchx.specs.finder import get_component  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "components"


def mount_json(m):
    if isinstance(m, api.BindMount):
        return {"type": "bind", "src_path": m.src_path, "dst_path": m.dst_path, "read_only": m.read_only}
    if isinstance(m, api.VolumeMount):
        return {"type": "volume", "src": m.src, "dst_path": m.dst_path, "read_only": m.read_only}
    return {"type": "device", "src_path": m.src_path, "dst_path": m.dst_path, "permissions": m.permissions}


def image(s):
    return "@DEFAULT_IMAGE@" if s == torchx.IMAGE else s


def role_json(r):
    res = r.resource
    return {
        "name": r.name,
        "image": image(r.image),
        "entrypoint": r.entrypoint,
        "args": list(r.args),
        "env": dict(r.env),
        "num_replicas": r.num_replicas,
        "min_replicas": r.min_replicas,
        "max_retries": r.max_retries,
        "retry_policy": r.retry_policy.value,
        "resource": {
            "cpu": res.cpu,
            "gpu": res.gpu,
            "memMB": res.memMB,
            "capabilities": dict(res.capabilities),
            "devices": dict(res.devices),
            "tags": dict(getattr(res, "tags", {}) or {}),
        },
        "port_map": dict(r.port_map),
        "metadata": dict(r.metadata),
        "mounts": [mount_json(m) for m in r.mounts],
    }


# Deliberate differences (docs/compatibility.md), applied to TorchX's output by case name.
def apply_fixes(name, app):
    if name == "tensorboard":  # TorchX leaves the role with NULL_RESOURCE, which its runner rejects
        app["roles"][0]["resource"].update({"cpu": 1, "gpu": 0, "memMB": 1024})
    # torchx-nightly 2026.10.26 tags a named host's resource with its name; cafea3f3 and the core
    # do not (docs/compatibility.md).
    for role in app["roles"]:
        role["resource"]["tags"].pop("torchx/named_resources.name", None)
    return app


def main():
    for line in (HERE / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        comp, *args = case["argv"]
        try:
            fn = get_component(comp).fn
        except Exception as e:  # TorchX HEAD dropped serve.torchserve and metrics.tensorboard: keep their goldens
            print("kept", case["name"], f"({comp} is not in this TorchX: {type(e).__name__})")
            continue
        appdef = materialize_appdef(fn, args)
        app = {"name": appdef.name, "roles": [role_json(r) for r in appdef.roles], "metadata": dict(appdef.metadata)}
        app = apply_fixes(case["name"], app)
        (HERE / f"{case['name']}.json").write_text(json.dumps(app, indent=2, sort_keys=False) + "\n")
        print("wrote", case["name"])


if __name__ == "__main__":
    main()

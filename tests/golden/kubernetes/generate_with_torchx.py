"""Writes TorchX's own Volcano manifests for the apps in cases.json (run with the reference TorchX:
bench/setup_reference.sh, then <venv>/bin/python this file; the goldens are TorchX HEAD cafea3f3's). The kubernetes unit tests build the
same apps and compare (src/schedulers/kubernetes/kubernetes_test.cc). The random part of the job
name is pinned to the case's job_name so the outputs are stable."""

import json
import pathlib
import warnings

import torchx.schedulers.kubernetes_scheduler as k8s
from kubernetes.client import ApiClient
from torchx import specs

HERE = pathlib.Path(__file__).parent
warnings.simplefilter("ignore")


def mount(m):
    kind = m.pop("type")
    return {"bind": specs.BindMount, "volume": specs.VolumeMount, "device": specs.DeviceMount}[kind](**m)


def role(r):
    r = dict(r)
    r["resource"] = specs.Resource(**r["resource"])
    r["retry_policy"] = specs.RetryPolicy[r.get("retry_policy", "APPLICATION")]
    r["mounts"] = [mount(dict(m)) for m in r.get("mounts", [])]
    return specs.Role(**r)


for case in json.loads((HERE / "cases.json").read_text()):
    app = specs.AppDef(case["app"]["name"], [role(r) for r in case["app"]["roles"]])
    k8s.make_unique = lambda name, job=case["job_name"]: job
    resource = k8s.app_to_resource(app, case["queue"], case.get("service_account"), case.get("priority_class"))
    out = ApiClient().sanitize_for_serialization(resource)
    (HERE / f"{case['id']}.torchx.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print("wrote", case["id"])

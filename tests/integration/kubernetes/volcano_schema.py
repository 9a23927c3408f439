"""Validation of Volcano objects the way the API server and Volcano's admission would: the CRD's
openAPIV3Schema (tests/schemas/volcano), read strictly (a field the schema does not know is an
error, where the API server would silently drop it), plus the rules of Volcano's validating
admission policy (installer/helm/chart/volcano/policy/jobs-validating.yaml) and, for every task's
pod template, the official Kubernetes schema through kubernetes-validate."""

import copy
import pathlib
import re

import jsonschema
import kubernetes_validate
import yaml

SCHEMAS = pathlib.Path(__file__).resolve().parents[2] / "schemas" / "volcano"
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
VALID_EVENTS = {"*", "PodPending", "PodRunning", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted", "OutOfSync",
                "CommandIssued", "JobUpdated", "TaskFailed"}
VALID_ACTIONS = {"AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob", "CompleteJob", "ResumeJob"}
KUBERNETES_VERSIONS = ("1.27", "1.33")  # the oldest and newest Kubernetes the tests hold manifests to


def _strict(schema):
    """additionalProperties: false wherever the schema lists properties and keeps no unknown fields."""
    if isinstance(schema, dict):
        if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema.setdefault("additionalProperties", False)
        for v in schema.values():
            _strict(v)
    elif isinstance(schema, list):
        for v in schema:
            _strict(v)
    return schema


def _crd_schema(file, version):
    crd = yaml.safe_load((SCHEMAS / file).read_text())
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return _strict(copy.deepcopy(v["schema"]["openAPIV3Schema"]))
    raise KeyError(f"{file} has no version {version}")


JOB_SCHEMA = _crd_schema("batch.volcano.sh_jobs.yaml", "v1alpha1")
COMMAND_SCHEMA = _crd_schema("bus.volcano.sh_commands.yaml", "v1alpha1")


def _policies_ok(policies, where):
    events = [p["event"] for p in policies if "event" in p]
    assert len(events) == len(set(events)), f"{where}: duplicate policy event"
    for p in policies:
        assert p.get("event", "*") in VALID_EVENTS, f"{where}: invalid policy event {p}"
        assert p.get("action", "AbortJob") in VALID_ACTIONS, f"{where}: invalid policy action {p}"
        assert not ("event" in p and "exitCode" in p), f"{where}: event and exitCode together"


def validate_job(job):
    assert job["apiVersion"] == "batch.volcano.sh/v1alpha1" and job["kind"] == "Job"
    jsonschema.validate(job, JOB_SCHEMA)
    assert DNS1123_LABEL.match(job["metadata"]["name"]) and len(job["metadata"]["name"]) <= 63
    spec = job["spec"]
    tasks = spec["tasks"]
    assert tasks, "No task specified in job spec"
    names = [t["name"] for t in tasks]
    assert len(names) == len(set(names)), "duplicated task name found"
    assert spec.get("maxRetry", 0) >= 0
    _policies_ok(spec.get("policies", []), "job")
    for t in tasks:
        assert DNS1123_LABEL.match(t["name"]), f"task name {t['name']} is not an RFC 1123 label"
        # Volcano names the pod <job>-<task>-<index> and makes it the pod's hostname.
        pod = f"{job['metadata']['name']}-{t['name']}-0"
        assert DNS1123_LABEL.match(pod) and len(pod) <= 63, f"pod name {pod}"
        assert t.get("replicas", 1) >= 0 and t.get("minAvailable", 0) >= 0
        assert t.get("minAvailable", 0) <= t.get("replicas", 1)
        _policies_ok(t.get("policies", []), f"task {t['name']}")
        template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": t["name"]},
                    "template": t["template"]}
        for version in KUBERNETES_VERSIONS:
            kubernetes_validate.validate(template, version, strict=True)
        for key, value in t["template"]["metadata"].get("labels", {}).items():
            assert re.match(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$", value) and len(value) <= 63, \
                f"label {key}={value!r} is not a valid label value"


def validate_command(command):
    assert command["apiVersion"] == "bus.volcano.sh/v1alpha1" and command["kind"] == "Command"
    jsonschema.validate(command, COMMAND_SCHEMA)
    assert command["action"] in VALID_ACTIONS

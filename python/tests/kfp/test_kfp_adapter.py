"""torchx.pipelines.kfp over kfp 2.x: TorchX builtins as KFP v2 steps, compiled by kfp's own
compiler (the IR checked for each step's image, command, args, env and resources), run end to end
by kfp's local DockerRunner on the project's dockerd (local busybox, no pulls), and what KFP
cannot express refused naming the field.

Runs in the kfp virtual env (scripts/kfp-tests.sh; kfp pins older kubernetes and requests than the
rest of the suites use). Skips without kfp unless TORCHX_REQUIRE_ENGINES names kfp."""

import json
import os
import socket

import pytest
import yaml

pytestmark = pytest.mark.filterwarnings("ignore:.*dist.ddp is deprecated:UserWarning",
                                        "ignore:.*have no effect in the current local runner:UserWarning")

if "kfp" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
    import kfp  # noqa: F401  (required: an ImportError fails the suite)
kfp = pytest.importorskip("kfp")

from kfp import compiler, dsl  # noqa: E402

from torchx.components import dist, utils  # noqa: E402
from torchx.pipelines.kfp import component_from_app, component_spec_from_app, container_from_app, resource_from_app  # noqa: E402
from torchx.pipelines.kfp.adapter import KfpAdapterError  # noqa: E402
from torchx.specs import AppDef, BindMount, Resource, Role, VolumeMount  # noqa: E402

DOCKER_SOCK = "/var/run/docker.sock"


def compile_ir(pipeline, tmp_path):
    out = tmp_path / "pipeline.yaml"
    compiler.Compiler().compile(pipeline, str(out))
    docs = list(yaml.safe_load_all(out.read_text()))
    return docs[0], (docs[1] if len(docs) > 1 else {})


def two_steps(tmp_path, image="busybox"):
    echo = utils.echo(msg="hello from step one", image=image)
    sh = utils.sh("sh", "-c", "echo step two on $TORCHX_RANK0_HOST", image=image)

    @dsl.pipeline(name="two-steps")
    def pipeline():
        first = container_from_app(echo, display_name="say hello")
        container_from_app(sh).after(first)

    return pipeline


def test_two_builtins_compile_with_their_commands_images_and_resources(tmp_path):
    ir, _ = compile_ir(two_steps(tmp_path), tmp_path)
    executors = ir["deploymentSpec"]["executors"]
    echo = executors["exec-echo-echo"]["container"]
    assert echo["image"] == "busybox"
    assert echo["command"] == ["echo"]
    assert echo["args"] == ["hello from step one"]
    # utils.echo asks for 1 CPU and 1 GiB (TorchX's builtins' default resource).
    res = echo["resources"]
    assert res["resourceCpuLimit"] == "1000m" and res["resourceCpuRequest"] == "1000m"
    assert res["resourceMemoryLimit"] == "1024M" and res["resourceMemoryRequest"] == "1024M"
    assert {"name": "TORCHX_RANK0_HOST", "value": "localhost"} in echo["env"]
    sh = executors["exec-sh-sh"]["container"]
    assert sh["command"] == ["sh"] and sh["args"] == ["-c", "sh -c 'echo step two on $TORCHX_RANK0_HOST'"]
    tasks = ir["root"]["dag"]["tasks"]
    assert tasks["echo-echo"]["taskInfo"]["name"] == "say hello"
    assert tasks["sh-sh"]["dependentTasks"] == ["echo-echo"]


def test_single_node_ddp_is_a_step_and_macros_are_resolved(tmp_path):
    app = dist.ddp(script="train.py", j="1x2", image="busybox")
    text, role = component_spec_from_app(app)
    assert "${" not in " ".join(role.args) + " ".join(role.env.values())
    assert "--nproc_per_node 2" in " ".join(role.args)

    @dsl.pipeline(name="ddp")
    def pipeline():
        container_from_app(app)

    ir, _ = compile_ir(pipeline, tmp_path)
    (executor,) = ir["deploymentSpec"]["executors"].values()
    assert executor["container"]["image"] == "busybox"
    assert "torchrun" in " ".join(executor["container"]["args"])


def test_gpus_retries_and_volumes(tmp_path):
    role = Role(name="train", image="trainer:1", entrypoint="python", args=["-m", "train"],
                resource=Resource(cpu=2, gpu=2, memMB=4096), max_retries=3,
                mounts=[VolumeMount(src="datasets", dst_path="/data")])
    app = AppDef(name="gpu", roles=[role])

    @dsl.pipeline(name="gpu")
    def pipeline():
        container_from_app(app, accelerator_type="nvidia.com/gpu", enable_caching=False)

    ir, platform = compile_ir(pipeline, tmp_path)
    c = ir["deploymentSpec"]["executors"]["exec-gpu-train"]["container"]
    assert c["resources"]["accelerator"]["resourceType"] == "nvidia.com/gpu"
    assert c["resources"]["accelerator"]["resourceCount"] == "2"
    assert c["resources"]["resourceCpuLimit"] == "2000m" and c["resources"]["resourceMemoryLimit"] == "4096M"
    assert ir["root"]["dag"]["tasks"]["gpu-train"]["retryPolicy"]["maxRetryCount"] == 3
    mount = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-gpu-train"]["pvcMount"][0]
    assert mount["mountPath"] == "/data" and mount["constant"] == "datasets"


def test_what_kfp_cannot_express_names_the_field():
    two_roles = AppDef(name="pair", roles=[Role(name="a", image="x", entrypoint="true"),
                                          Role(name="b", image="x", entrypoint="true")])
    with pytest.raises(KfpAdapterError, match=r"roles: .* got 2 \(a, b\).*resource_from_app"):
        component_from_app(two_roles)
    with pytest.raises(AssertionError):  # what TorchX 0.7.0 raised for the same check
        component_from_app(two_roles)
    with pytest.raises(KfpAdapterError, match=r"roles\[0\]\.num_replicas: .* got 2"):
        component_from_app(dist.ddp(script="train.py", j="2x1"))
    bind = AppDef(name="b", roles=[Role(name="r", image="x", entrypoint="true",
                                        mounts=[BindMount(src_path="/host", dst_path="/c")])])
    with pytest.raises(KfpAdapterError, match=r"roles\[0\]\.mounts\[0\]: KFP cannot mount a host path"):
        component_from_app(bind)
    read_only = AppDef(name="v", roles=[Role(name="r", image="x", entrypoint="true",
                                             mounts=[VolumeMount(src="pvc", dst_path="/d", read_only=True)])])
    with pytest.raises(KfpAdapterError, match=r"roles\[0\]\.mounts\[0\]\.read_only"):
        component_from_app(read_only)
    with pytest.raises(KfpAdapterError, match="ui_metadata"):
        component_from_app(utils.echo(), ui_metadata={"outputs": []})


def test_resource_from_app_creates_the_volcano_job_and_waits(tmp_path):
    app = dist.ddp(script="train.py", j="2x1", image="trainer:1")

    @dsl.pipeline(name="volcano")
    def pipeline():
        resource_from_app(app, queue="research")

    ir, _ = compile_ir(pipeline, tmp_path)
    (executor,) = ir["deploymentSpec"]["executors"].values()
    env = {e["name"]: e["value"] for e in executor["container"]["env"]}
    job = json.loads(env["TORCHX_VOLCANO_JOB"])
    assert job["kind"] == "Job" and job["spec"]["queue"] == "research"
    assert len(job["spec"]["tasks"]) == 2
    assert "kubectl create -f -" in executor["container"]["command"][2]


def dockerd_up():
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(DOCKER_SOCK)
        s.close()
        return True
    except OSError:
        return False


def test_two_steps_run_in_order_with_kfps_local_runner(tmp_path):
    if not dockerd_up():
        if "docker" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
            raise RuntimeError("dockerd is required (TORCHX_REQUIRE_ENGINES) but not up: scripts/engines/dockerd-up.sh")
        pytest.skip("no dockerd (scripts/engines/dockerd-up.sh starts one)")
    import docker
    from kfp import local

    shared = tmp_path / "shared"
    shared.mkdir()
    first = utils.sh("sh", "-c", "echo first >> /shared/order", image="busybox")
    second = utils.sh("sh", "-c", "test -s /shared/order && echo second >> /shared/order", image="busybox")

    @dsl.pipeline(name="in-order")
    def pipeline():
        a = container_from_app(first)
        container_from_app(second).after(a)

    local.init(runner=local.DockerRunner(mounts=[docker.types.Mount("/shared", str(shared), type="bind")]),
               pipeline_root=str(tmp_path / "root"))
    two_steps(tmp_path)()  # the pipeline the compile test checks: both steps succeed
    pipeline()
    # Each step appended its line, the second only after the first's: they ran, in order. (A
    # step's exit code is not checked here: kfp's DockerRunner removes containers as they exit and
    # reports SUCCESS when one is gone before it asks, kfp/local/docker_task_handler.py.)
    assert (shared / "order").read_text() == "first\nsecond\n"

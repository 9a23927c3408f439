"""A real PJRT plugin from PyPI (fastatomstruct-xla-cpu ships XLA's CPU plugin, libpjrt_cpu.so):
probed in a child process, used as a `LIBRARY` device by the local scheduler, and sizing
`dist.ddp -j 1xauto`. scripts/install-deps.sh installs it; skipped without it unless
TORCHX_REQUIRE_ENGINES names pjrt."""

import json
import os
import subprocess

import pytest

try:
    import fastatomstruct_xla_cpu
except ImportError as e:
    if "pjrt" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("a PJRT CPU plugin is required (TORCHX_REQUIRE_ENGINES) but fastatomstruct-xla-cpu is missing") from e
    pytest.skip("no PJRT CPU plugin installed (pip install --no-deps fastatomstruct-xla-cpu)", allow_module_level=True)

LIB = os.path.join(os.path.dirname(fastatomstruct_xla_cpu.__file__), "libpjrt_cpu.so")


@pytest.fixture
def probe(torchx_bin):
    out = subprocess.run([os.path.join(os.path.dirname(torchx_bin), "torchx-device-probe"), LIB],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout)


def test_probe_reads_the_real_plugin(probe):
    assert probe["ok"] and probe["api_major"] == 0 and probe["api_minor"] > 0
    assert probe["platform"] == "cpu" and probe["devices"] >= 1


def test_local_scheduler_and_ddp_use_the_library_device(torchx_bin, probe, tmp_path):
    env = dict(os.environ, PJRT_LIBRARY_PATH=LIB, PJRT_DEVICE="LIBRARY", TORCHX_STATE_DIR=str(tmp_path / "state"))
    n = min(2, probe["devices"])
    run = subprocess.run(
        [torchx_bin, "run", "--wait", "--log", "-s", "local_cwd", "-cfg", "device=LIBRARY", "utils.sh",
         "--num_replicas", str(n), "sh", "-c", "echo dev=$PJRT_DEVICE rank=$PJRT_LOCAL_PROCESS_RANK "
         "count=$PJRT_LOCAL_PROCESS_COUNT lib=$PJRT_LIBRARY_PATH"],
        env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    for r in range(n):
        assert f"sh/{r} dev=LIBRARY rank={r} count={n} lib={LIB}" in run.stdout
    dry = subprocess.run([torchx_bin, "run", "--dryrun", "dist.ddp", "-j", "1xauto", "--script", "t.py"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    assert f"--nproc_per_node {probe['devices']}" in dry.stdout

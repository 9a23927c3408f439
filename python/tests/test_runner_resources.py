"""Runner.resource_usage: the local supervisor's samples of each replica's CPU and memory."""

import time

from torchx import specs
from torchx.runner import get_runner


def busy_app(num_replicas=2):
    # The 16 MiB are written (a zeroed bytearray's pages are not resident until touched).
    script = "import time\nb = b'\\x01' * (16 << 20)\nt = time.time()\nwhile time.time() - t < 30: pass\n"
    return specs.AppDef(
        name="busy",
        roles=[specs.Role(name="w", image="", entrypoint="python3", args=["-c", script], num_replicas=num_replicas)],
    )


def test_each_replica_has_cpu_and_memory_samples_and_unknown_apps_are_none():
    with get_runner() as runner:
        handle = runner.run(busy_app(), "local_cwd", cfg={"resource_interval": 0.3})
        try:
            deadline = time.monotonic() + 20
            while True:
                usage = runner.resource_usage(handle)
                reps = usage["replicas"]
                # Two samples since each replica reached its loop (its 16 MiB written): a sample
                # taken while a loaded machine still starts the interpreter shows it idle.
                if all(len(r["samples"]) >= 2 and r["samples"][-2]["rss_bytes"] > 16 << 20 for r in reps):
                    break
                assert time.monotonic() < deadline, usage
                time.sleep(0.2)
            assert usage["interval_seconds"] == 0.3
            assert [(r["role"], r["replica_id"]) for r in reps] == [("w", 0), ("w", 1)]
            for r in reps:
                newest = r["samples"][-1]
                assert newest["cpu_percent"] > 10, r
                assert newest["rss_bytes"] > 16 << 20, r
                assert newest["processes"] == 1
            assert usage["gpu_note"] or usage["hosts"]  # GPU figures, or why there are none
            newest_only = runner.resource_usage(handle, max_samples=1)
            assert all(len(r["samples"]) == 1 for r in newest_only["replicas"])
            later = runner.resource_usage(handle, since=time.time() + 3600)
            assert all(r["samples"] == [] for r in later["replicas"])
        finally:
            runner.cancel(handle)
        assert runner.resource_usage("local_cwd://torchx/no_such_app") is None


def test_sampling_off_says_so():
    with get_runner() as runner:
        handle = runner.run(busy_app(1), "local_cwd", cfg={"resource_interval": 0.0})
        try:
            usage = runner.resource_usage(handle)
            assert usage["replicas"][0]["samples"] == []
            assert "resource_interval=0" in usage["note"]
        finally:
            runner.cancel(handle)

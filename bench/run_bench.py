#!/usr/bin/env python3
"""Benchmarks this project against the reference TorchX (its own venv) on the same workloads, in
the same run, and prints ratios with the targets from the issue. Not a test: nothing asserts.

    cmake --preset release && cmake --build --preset release
    bench/setup_reference.sh
    python3 bench/run_bench.py            # TORCHX_REF=/path/to/torchx overrides the reference CLI
"""

import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
OURS = REPO / "build" / "release" / "cli" / "torchx"
BENCH = REPO / "build" / "release" / "bench"
REF = pathlib.Path(os.environ.get("TORCHX_REF", REPO / ".venv-torchx-ref" / "bin" / "torchx"))

rows = []


def timeit(cmd, n, env=None, cwd=None):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        res = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if res.returncode != 0:
            raise RuntimeError(f"{cmd} failed: {res.stderr.decode()[-2000:]}")
    return statistics.median(times)


def report(name, ours, peer, peer_name, target, ok):
    ratio = f"{ours / peer:.4f}" if peer else "n/a"
    rows.append((name, f"{ours * 1000:.1f} ms", f"{peer * 1000:.1f} ms" if peer else "n/a", peer_name, ratio, target,
                 "met" if ok else "NOT met"))


def main():
    if not OURS.exists() or not (BENCH / "raw_spawn").exists():
        sys.exit("build first: cmake --preset release && cmake --build --preset release")
    have_ref = REF.exists()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="torchx-bench-"))
    env = dict(os.environ, TORCHX_STATE_DIR=str(tmp / "state"), LOGLEVEL="WARNING")
    try:
        # 1. CLI dry-run latency
        ours = timeit([str(OURS), "run", "--dryrun", "-s", "local_cwd", "utils.echo"], 30, env)
        peer = timeit([str(REF), "run", "--dryrun", "-s", "local_cwd", "utils.echo"], 5, env, cwd=tmp) if have_ref else 0
        report("CLI dry run (utils.echo)", ours, peer, "reference torchx", "<= 1/100 of torchx",
               bool(peer) and ours <= peer / 100)

        # 1b. a Volcano Job manifest: dist.ddp on 4 nodes x 8 processes, dry run (the reference
        # needs `--workspace ""`, or it builds an image of the current directory first).
        k8s = ["run", "--dryrun", "-s", "kubernetes", "-cfg", "queue=default", "dist.ddp", "-j", "4x8",
               "--script", "train.py"]
        ours = timeit([str(OURS), *k8s], 30, env)
        peer = timeit([str(REF), k8s[0], "--workspace", "", *k8s[1:]], 5, env, cwd=tmp) if have_ref else 0
        report("kubernetes dry run (dist.ddp 4x8)", ours, peer, "reference torchx", "(informative)", True)

        # 2. 500-replica fan-out of `true`, run to completion. The raw loop writes no files; the
        # launcher creates 3 log files per replica and its state. On tmpfs that measures the
        # launcher; on disk it also measures the disk (reported too, informative).
        n = 500
        shm = pathlib.Path("/dev/shm")
        fast = pathlib.Path(tempfile.mkdtemp(prefix="torchx-bench-", dir=shm if shm.is_dir() else None))
        env_fast = dict(env, TORCHX_STATE_DIR=str(fast / "state"))
        fan = [str(OURS), "run", "--wait", "-s", "local_cwd", "utils.binary", "--entrypoint", "true",
               "--num_replicas", str(n)]
        raws, ourss = [], []
        for _ in range(7):  # interleaved, so both see the same machine conditions
            raws.append(timeit([str(BENCH / "raw_spawn"), str(n), "true"], 1))
            ourss.append(timeit(fan, 1, env_fast))
            shutil.rmtree(fast / "state" / "logs", ignore_errors=True)
        raw, ours = statistics.median(raws), statistics.median(ourss)
        shutil.rmtree(fast, ignore_errors=True)
        report(f"{n}-replica fan-out of true (tmpfs)", ours, raw, "raw spawn+wait loop", "<= 1.5x raw",
               ours <= 1.5 * raw)
        ours = timeit(fan, 3, env)
        report(f"{n}-replica fan-out of true (disk)", ours, raw, "raw spawn+wait loop", "(informative)", True)
        if have_ref:
            peer = timeit([str(REF), "run", "-s", "local_cwd", "utils.binary", "--entrypoint", "true",
                           "--num_replicas", str(n)], 1, env, cwd=tmp)
            report(f"{n}-replica fan-out vs torchx", ours, peer, "reference torchx local_cwd", "(informative)", True)

        # 3. status and list with 10,000 recorded apps
        store = tmp / "store10k"
        subprocess.run([str(BENCH / "populate_store"), str(store), "10000"], check=True)
        env10k = dict(env, TORCHX_STATE_DIR=str(store))
        ours = timeit([str(OURS), "status", "local_cwd://torchx/bench-5000"], 30, env10k)
        report("status, 10,000 apps in the store", ours, 0, "(torchx keeps no local state)", "<= 10 ms", ours <= 0.010)
        ours = timeit([str(OURS), "list", "-s", "local_cwd"], 10, env10k)
        report("list, 10,000 apps", ours, 0, "(torchx local list raises)", "(informative)", True)

        # 4. log capture and streaming, 200 MB of output, against cat
        size = 200_000_000
        gen = f"yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz | head -c {size}"
        raw = timeit(["sh", "-c", f"{gen} > {tmp}/raw.log"], 3)
        t = time.perf_counter()
        out = subprocess.run([str(OURS), "run", "--wait", "-s", "local_cwd", "utils.sh", "sh", "-c", gen], env=env,
                             capture_output=True, text=True, check=True)
        capture = time.perf_counter() - t
        handle = out.stdout.split()[0]
        report("capture 200 MB of output into logs", capture, raw, "the program writing to a file", "(informative)", True)
        app_dir = tmp / "state" / "logs" / "torchx" / handle.rsplit("/", 1)[1]
        cat = timeit(["cat", str(app_dir / "sh" / "0" / "combined.log")], 3)
        ours = timeit([str(OURS), "log", handle], 3, env)
        report("log streaming 200 MB", ours, cat, "cat", "(informative)", True)
        subprocess.run([str(OURS), "delete", handle], env=env, check=True)

        # 5. supervisor RSS and CPU for a 2 s app, against the torchx process that owns a local app
        out = subprocess.run([str(OURS), "run", "-s", "local_cwd", "utils.sh", "sleep", "2"], env=env,
                             capture_output=True, text=True, check=True)
        handle = out.stdout.split()[0]
        time.sleep(0.5)
        pid = int(subprocess.run(["pgrep", "-f", f"torchx-supervisor .* {handle.rsplit('/', 1)[1]}"],
                                 capture_output=True, text=True).stdout.split()[0])
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
        rss_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        time.sleep(1.0)
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        subprocess.run([str(OURS), "run", "--wait", "-s", "local_cwd", "utils.sh", "true"], env=env, check=True,
                       capture_output=True)
        peer_rss = peer_cpu = 0
        if have_ref:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([str(REF), "run", "-s", "local_cwd", "utils.sh", "sleep", "2"], env=env, cwd=tmp,
                           capture_output=True, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            peer_rss = after.ru_maxrss  # KiB, the largest child so far (the torchx CLI)
            peer_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rows.append(("supervisor RSS while an app runs", f"{rss_kb / 1024:.1f} MiB",
                     f"{peer_rss / 1024:.1f} MiB" if peer_rss else "n/a", "torchx CLI process (peak)",
                     f"{rss_kb / peer_rss:.3f}" if peer_rss else "n/a", "(informative)", "met"))
        rows.append(("supervisor CPU for a 2 s sleep app", f"{cpu * 1000:.0f} ms", f"{peer_cpu * 1000:.0f} ms" if have_ref else "n/a",
                     "torchx CLI process (whole run)", "n/a", "(informative)", "met"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    head = ("benchmark", "ours", "peer", "peer is", "ours/peer", "target", "")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    if not have_ref:
        print(f"\n(reference TorchX not found at {REF}: run bench/setup_reference.sh)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The slurm scheduler against the reference TorchX on the same real Slurm cluster, same run
(issue 7): the dry run of a 256-replica job, and `status` of one job while 1,000 jobs are queued
(one squeue call either way). Not a test: nothing asserts.

    bash scripts/engines/slurm-up.sh
    cmake --preset release && cmake --build --preset release && bench/setup_reference.sh
    python3 bench/slurm_bench.py        # TORCHX_REF=/path/to/torchx overrides the reference CLI
"""

import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
OURS = REPO / "build" / "release" / "cli" / "torchx"
REF = pathlib.Path(os.environ.get("TORCHX_REF", REPO / ".venv-torchx-ref" / "bin" / "torchx"))


def timeit(cmd, n, cwd):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        res = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if res.returncode != 0:
            raise RuntimeError(f"{cmd} failed: {res.stderr.decode()[-1000:]}")
    return statistics.median(times)


def main():
    if not OURS.exists():
        sys.exit("build first: cmake --preset release && cmake --build --preset release")
    have_ref = REF.exists()
    tmp = tempfile.mkdtemp(prefix="torchx-slurm-bench-")
    rows = []
    dry = ["run", "--dryrun", "-s", "slurm", "utils.echo", "--num_replicas", "256"]
    ours = timeit([str(OURS), *dry], 10, tmp)
    peer = timeit([str(REF), *dry], 3, tmp) if have_ref else 0
    rows.append(("dry run, 256 replicas", ours, peer))

    ids = []
    try:
        for _ in range(1000):  # held: queued, never started
            out = subprocess.run(["sbatch", "--parsable", "--hold", "--job-name=bench-0", "--wrap", "true"],
                                 cwd=tmp, capture_output=True, text=True, check=True)
            ids.append(out.stdout.strip())
        status = ["status", f"slurm://torchx/{ids[500]}"]
        ours = timeit([str(OURS), *status], 10, tmp)
        peer = timeit([str(REF), *status], 3, tmp) if have_ref else 0
        rows.append(("status of 1 job, 1,000 queued", ours, peer))
        floor = timeit(["squeue", "--json"], 10, tmp)
        rows.append(("(floor: squeue --json alone, 1,000 queued)", floor, 0))
        listing = ["list", "-s", "slurm"]
        ours = timeit([str(OURS), *listing], 5, tmp)
        peer = timeit([str(REF), *listing], 3, tmp) if have_ref else 0
        rows.append(("status of all 1,000 jobs (list), one squeue call", ours, peer))
    finally:
        for i in range(0, len(ids), 200):
            subprocess.run(["scancel", *ids[i:i + 200]], capture_output=True)
    head = ("benchmark", "ours", "reference torchx", "ours/peer")
    table = [head] + [(n, f"{o * 1000:.1f} ms", f"{p * 1000:.1f} ms" if p else "n/a", f"{o / p:.3f}" if p else "n/a")
                      for n, o, p in rows]
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    if not have_ref:
        print(f"(reference TorchX not found at {REF}: run bench/setup_reference.sh)")


if __name__ == "__main__":
    main()

"""A two-rank gloo job with a hung rank, for `torchx debug stack` on a cluster (the Slurm and Ray
tests copy it in as hang.py): rank 0 waits in an all_reduce that rank 1 never joins, because it
spins in `stuck_here` (busy, so that a profile, which samples running threads, sees it too)."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")


def stuck_here():
    start = time.time()
    while time.time() - start < 600:
        pass


if dist.get_rank() == 1:
    stuck_here()
dist.all_reduce(torch.ones(1))

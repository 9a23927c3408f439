"""One line per rank after a real all-reduce across the job's nodes (the Slurm integration test's
payload, like TorchX's own)."""

import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
print(f"hello world rank={dist.get_rank()} world={dist.get_world_size()} sum={int(t.item())} "
      f"node={os.environ.get('SLURMD_NODENAME')}", flush=True)
# Every rank waits for the others before tearing gloo down, and the group is destroyed (its gloo
# worker threads joined) before interpreter shutdown: see examples/ddp/train.py for the abort a
# group left alive into shutdown can cause.
dist.barrier()
dist.destroy_process_group()

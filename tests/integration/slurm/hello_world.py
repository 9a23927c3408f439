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
# Every rank waits for the others before tearing gloo down: a rank that destroys its process
# group while a peer still has traffic in flight can abort (torch 2.13 on CPU: "terminate
# called without an active exception" in about one run in four on a loaded 2-core host).
dist.barrier()
dist.destroy_process_group()

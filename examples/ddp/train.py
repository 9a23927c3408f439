"""A small but real DDP job: each rank trains a linear model on its shard of a synthetic
regression problem with DistributedDataParallel (gloo, CPU), checks an all-reduce, and rank 0
reports the result. Run it through the launcher:

    torchx run -s local_cwd dist.torchrun -j 2x2 --script examples/ddp/train.py
"""

import os

import torch
import torch.distributed as dist
# Imported before init_process_group on purpose: on first import this module binds the default
# process group into its functions' default arguments, and DDP imports it; imported after init it
# would keep the group, and its gloo worker threads, alive until interpreter exit (see the end of main).
import torch.distributed.nn.functional  # noqa: F401
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    # Every rank contributes rank+1: the sum must be world*(world+1)/2 on every rank.
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    expected = world * (world + 1) / 2
    print(f"rank={rank} world_size={world} local_rank={os.environ['LOCAL_RANK']} "
          f"allreduce_sum={t.item():g} expected={expected:g}", flush=True)
    assert t.item() == expected, f"all_reduce gave {t.item()}, expected {expected}"

    torch.manual_seed(0)
    true_w = torch.tensor([[2.0, -3.0, 0.5]])
    x = torch.randn(256, 3)
    y = x @ true_w.T + 1.0
    shard = slice(rank * 256 // world, (rank + 1) * 256 // world)
    model = DistributedDataParallel(torch.nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(200):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[shard]), y[shard])
        loss.backward()  # DDP averages gradients across ranks here
        opt.step()
    if rank == 0:
        w = model.module.weight.detach()
        print(f"trained loss={loss.item():.6f} weight={[round(v, 3) for v in w[0].tolist()]}", flush=True)
    # Tear gloo down while Python is fully alive: wait for every rank (none closes its connections
    # while a peer still has traffic in flight), drop the DDP model (it holds the process group),
    # then destroy the group, which joins gloo's worker threads. Left running into interpreter
    # shutdown, a worker that frees DDP's last gradient all-reduce (its saved thread-local state holds
    # a Python object) needs the GIL there and aborts the process: torch 2.13, "terminate called
    # without an active exception", about 1 run in 17 of a 2x2 job on a loaded 2-core host.
    dist.barrier()
    del model, opt
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

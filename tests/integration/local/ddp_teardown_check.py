"""Runs examples/ddp/train.py's main() in this rank, then fails if any thread but the main one is
still alive: the example's teardown must join gloo's worker threads before interpreter shutdown,
where a live one can abort the process (see the end of train.py's main). Exits 1 naming them."""

import importlib.util
import os
import pathlib
import sys

TRAIN = pathlib.Path(__file__).resolve().parents[3] / "examples" / "ddp" / "train.py"

spec = importlib.util.spec_from_file_location("ddp_train", TRAIN)
train = importlib.util.module_from_spec(spec)
spec.loader.exec_module(train)
train.main()

others = [open(f"/proc/self/task/{tid}/comm").read().strip()
          for tid in os.listdir("/proc/self/task") if int(tid) != os.getpid()]
if others:
    sys.exit(f"threads still running after train.main() returned: {sorted(others)}")
print(f"teardown ok: rank={os.environ['RANK']} no thread left but the main one", flush=True)

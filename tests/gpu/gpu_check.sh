#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, run by hand on a machine that has one (CI has none):
#   tests/gpu/gpu_check.sh DIR   DIR holds the built torchx, torchx-supervisor, torchx-composite-driver,
#                                torchx-device-probe, torchx-gpu-metrics
# What it proves, each against the real driver, CUDA and NCCL:
#   1. the CUDA device plugin counts the GPUs nvidia-smi lists (PJRT_DEVICE=CUDA dist.ddp -j 1xauto);
#   2. torchx-device-probe reads a real CUDA PJRT plugin (jax's, when jax is installed);
#   3. local_cwd with auto_set_cuda_visible_devices gives each replica its own GPUs, and a DDP
#      job with the NCCL backend runs through the launcher on them;
#   4. asking for more GPUs than the host has is refused before anything starts;
#   5. the resource view (NVML opened at run time): a replica holding GPU memory and running
#      back-to-back kernels shows its own GPU memory and a utilisation of at least 50% in `status --resources` and
#      `top`, and the host's GPUs are listed with their names;
#   6. a managed job (torchx run --managed) over NCCL whose supervisor is killed -9 is submitted again
#      on the same GPUs and resumes from its checkpoint.
# Prints one "ok:" line per check and exits non-zero at the first failure.
set -uo pipefail
bin=$(cd "${1:?usage: gpu_check.sh DIR}" && pwd)
T=$bin/torchx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TORCHX_STATE_DIR=$work/state
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

gpus=$(nvidia-smi -L | grep -c '^GPU ')
[[ $gpus -ge 1 ]] || fail "nvidia-smi lists no GPU"
echo "ok: nvidia-smi lists $gpus GPU(s): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

dry=$(PJRT_DEVICE=CUDA "$T" run --dryrun dist.ddp -j 1xauto --script t.py 2>&1) || fail "dryrun: $dry"
grep -q -- "--nproc_per_node $gpus" <<<"$dry" || fail "1xauto did not size to $gpus GPUs: $dry"
echo "ok: dist.ddp -j 1xauto -> --nproc_per_node $gpus"

plugin=$(python3 -c 'import glob, jax_plugins.xla_cuda13 as m; print(glob.glob(m.__path__[0] + "/*.so")[0])' 2>/dev/null)
if [[ -n "$plugin" ]]; then
  probe=$("$bin/torchx-device-probe" "$plugin" 2>probe.err) || fail "probe of $plugin: $probe $(cat probe.err)"
  python3 - "$probe" "$gpus" <<'PY' || fail "probe: $probe"
import json, sys
p = json.loads(sys.argv[1]); n = int(sys.argv[2])
assert p["ok"] and p["platform"] in ("cuda", "gpu"), p
assert p["devices"] == n, p
PY
  echo "ok: torchx-device-probe reads $plugin: $probe"
else
  echo "skip: no CUDA PJRT plugin (jax_plugins.xla_cuda13) installed"
fi

cat > ddp_nccl.py <<'PY'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
t = torch.ones(1024, 1024, device="cuda") * (rank + 1)
dist.all_reduce(t)
expect = world * (world + 1) / 2
assert float(t[0, 0]) == expect, (float(t[0, 0]), expect)
print(f"nccl rank={rank} world={world} cvd={os.environ.get('CUDA_VISIBLE_DEVICES')} "
      f"devices={torch.cuda.device_count()} name={torch.cuda.get_device_name()} sum={float(t[0, 0])}")
dist.destroy_process_group()
PY
out=$("$T" run --wait --log -s local_cwd -cfg auto_set_cuda_visible_devices=True \
      dist.torchrun -j "1x$gpus" --gpu "$gpus" --script ddp_nccl.py 2>&1)
rc=$?
echo "$out" | tail -n 20
[[ $rc -eq 0 ]] || fail "DDP over NCCL exited $rc"
[[ $(grep -c "nccl rank=" <<<"$out") -eq $gpus ]] || fail "expected $gpus ranks to report"
all=$(seq -s, 0 $((gpus - 1)))
grep -q "cvd=$all devices=$gpus" <<<"$out" || fail "replica did not get CUDA_VISIBLE_DEVICES=$all"
echo "ok: DDP over NCCL on $gpus GPU(s) through local_cwd, CUDA_VISIBLE_DEVICES=$all"

out=$("$T" run --wait -s local_cwd -cfg auto_set_cuda_visible_devices=True \
      utils.sh --num_replicas 1 true 2>&1) || fail "a CPU-only role failed: $out"
over=$("$T" run -s local_cwd -cfg auto_set_cuda_visible_devices=True \
       dist.torchrun -j 2x1 --gpu "$gpus" --script ddp_nccl.py 2>&1)
rc=$?
[[ $rc -ne 0 ]] || fail "asking for $((2 * gpus)) GPUs on a $gpus-GPU host was accepted"
grep -q "auto_set_cuda_visible_devices" <<<"$over" || fail "refusal does not name the option: $over"
echo "ok: $((2 * gpus)) GPUs on a $gpus-GPU host refused: $over"
cat > gpu_burn.py <<'PY'
import time, torch
x = torch.randn(8192, 8192, device="cuda")
hold = torch.empty(3 << 30, dtype=torch.uint8, device="cuda")  # 3 GiB held
t = time.time()
while time.time() - t < 20:
    y = x @ x
    torch.cuda.synchronize()
print("burn done")
PY
h=$("$T" run -s local_cwd -cfg resource_interval=1 utils.sh python3 gpu_burn.py 2>/dev/null | tail -1)
[[ $h == local_cwd://* ]] || fail "could not start the GPU job: $h"
ok=""
for i in $(seq 1 30); do
  sleep 1
  js=$("$T" status --resources --json "$h")
  if python3 - "$js" <<'PY'
import json, sys
r = json.loads(sys.argv[1])["resources"]
s = r["replicas"][0]["samples"]
g = s[-1]["gpus"] if s else []
ok = g and g[0]["memory_used_bytes"] and g[0]["memory_used_bytes"] > (3 << 30) and (g[0]["utilization_percent"] or 0) >= 50  # a saturating loop: nvidia-smi pmon says ~99
sys.exit(0 if ok and r["hosts"] and r["hosts"][0]["samples"][-1]["gpus"] else 1)
PY
  then ok=1; break; fi
done
"$T" status --resources "$h" | sed -n '/^Resources/,$p'
"$T" top -n 1 "$h" | tail -n +2
nvidia-smi pmon -c 1 | sed "s/^/nvidia-smi pmon: /"
"$T" cancel "$h" >/dev/null
[[ -n $ok ]] || fail "no GPU figures for the replica: $js"
echo "ok: status --resources shows the replica's own GPU memory and utilisation (NVML)"

# 6. A managed job on the GPUs (docs/managed.md): a training run over NCCL whose supervisor is killed
#    -9 once it has checkpointed is submitted again, gets the same GPUs (CUDA_VISIBLE_DEVICES) and
#    resumes on them from its checkpoint.
cat > managed_gpu.py <<'PY'
import os, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
ckpt = os.path.join(os.environ["TORCHX_CHECKPOINT_DIR"], "w.pt")
w = torch.load(ckpt, map_location="cuda") if os.path.exists(ckpt) else {"step": 0, "w": torch.zeros(1024, device="cuda")}
print(f"rank={rank} attempt={os.environ['TORCHX_RECOVERY_COUNT']} start={w['step']} cvd={os.environ.get('CUDA_VISIBLE_DEVICES')}", flush=True)
for step in range(w["step"] + 1, 41):
    g = torch.ones(1024, device="cuda")
    dist.all_reduce(g)
    w["w"] += g
    w["step"] = step
    if rank == 0:
        torch.save(w, ckpt + ".tmp"); os.replace(ckpt + ".tmp", ckpt)
    time.sleep(0.25)
print(f"rank={rank} done step={w['step']} w0={float(w['w'][0])}", flush=True)
dist.destroy_process_group()
PY
m=$("$T" run --managed -s local_cwd -cfg auto_set_cuda_visible_devices=True \
    dist.torchrun -j "1x$gpus" --gpu "$gpus" --script managed_gpu.py 2>&1 | tail -1)
[[ $m == managed://* ]] || fail "could not start the managed GPU job: $m"
ckdir=$work/.torchx/checkpoints/${m##*/}
for i in $(seq 1 120); do [[ -s $ckdir/w.pt ]] && break; sleep 0.5; done
[[ -s $ckdir/w.pt ]] || fail "no checkpoint: $("$T" describe "$m")"
first=$("$T" describe --json "$m" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"][0]["handle"].rsplit("/",1)[1])')
pkill -9 -f "torchx-supervisor .* $first\$" || fail "no supervisor for $first"
for i in $(seq 1 240); do
  st=$("$T" describe --json "$m" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  [[ $st == SUCCEEDED || $st == FAILED || $st == CANCELLED ]] && break; sleep 0.5
done
log=$("$T" log "$m")
echo "$log" | grep -E "attempt=|done" | head -n 8
[[ $st == SUCCEEDED ]] || fail "managed GPU job ended $st: $("$T" describe "$m")"
all=$(seq -s, 0 $((gpus - 1)))
grep -q "\[attempt 1\].*rank=0 attempt=1 start=[1-9][0-9]* cvd=$all" <<<"$log" || fail "attempt 1 did not resume on GPUs $all: $log"
grep -q "\[attempt 1\].*rank=0 done step=40 w0=$((40 * gpus)).0" <<<"$log" || fail "the resumed run's sum is off: $log"
echo "ok: a managed NCCL job recovered after its supervisor was killed, resumed from its checkpoint on GPUs $all"
echo "gpu_check: all checks passed"

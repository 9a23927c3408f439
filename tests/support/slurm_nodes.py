"""What the Slurm fault tests freeze to make a node fail (the fault suite, the managed-job suite):
a node's slurmd and a job's processes on it, found from /proc, and the node's state."""

import pathlib
import subprocess


def node_processes(node: str, job_id: str) -> list:
    """The pids that make up `node`: its slurmd, and the job's processes on it with their slurmstepd."""
    pids = set(int(p) for p in subprocess.run(["pgrep", "-f", f"slurmd -N {node}$"], capture_output=True,
                                             text=True).stdout.split())
    for proc in pathlib.Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        if f"SLURMD_NODENAME={node}".encode() in env and any(
                e.startswith(b"SLURM_JOB_ID_HET_GROUP_0=" + job_id.encode()) or e == b"SLURM_JOB_ID=" + job_id.encode()
                for e in env):
            pids.add(int(proc.name))
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            try:
                if "slurmstepd" in pathlib.Path(f"/proc/{parent}/cmdline").read_bytes().decode(errors="replace"):
                    pids.add(parent)
            except OSError:
                pass
    return sorted(pids)


def node_state(node: str) -> str:
    return subprocess.run(["sinfo", "-h", "-n", node, "-o", "%T"], capture_output=True, text=True).stdout.strip()

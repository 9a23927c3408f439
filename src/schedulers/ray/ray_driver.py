# The gang driver of the `ray` scheduler: the entrypoint of every Ray job the launcher submits,
# shipped with the job (a py_modules package) beside its spec (spec.json: what the launcher's
# dry run resolved, every replica's argv and env with macros already applied).
#
# It reserves one placement-group bundle per replica (so the gang starts whole or not at all),
# starts one actor per replica in its bundle, and each actor runs the replica's command as a
# child process. Everything the launcher reads comes back through this job's log, one framed
# line at a time (ray_frames.h is the other half):
#   "\x1eL <role> <replica> <o|e|O|E>\x1f<bytes>"  a replica's output line (O/E: it had no newline)
#   "\x1eS <json>"                                 the gang's status: phase, placement, exits
# Lines without the leading \x1e are Ray's own or this driver's, never a replica's.
#
# A replica that fails is restarted per its role's retry policy (APPLICATION: the gang; ROLE:
# the role's replicas; REPLICA: itself) while the role has retries left; then the job fails with
# the replica's exit code. A replica whose node is lost counts as failed ("node_failure").
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import ray
from ray.exceptions import GetTimeoutError, RayActorError
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

OUT = sys.stdout.buffer
POLL_S = 0.2
TAIL_LINES = 20


def emit(kind, payload: bytes) -> None:
    OUT.write(b"\x1e" + kind + b" " + payload + b"\n")


def status(**fields) -> None:
    emit(b"S", json.dumps(fields, separators=(",", ":")).encode())
    OUT.flush()


@ray.remote(num_cpus=0)
class Replica:
    """Runs one replica's command on the node of its bundle and keeps its output until drained."""

    def __init__(self):
        self.proc = None
        self.lines = []
        self.lock = threading.Lock()
        self.readers = []

    def where(self, want_port: bool):
        port = 0
        if want_port:  # a free port on this node for the rank-0 rendezvous
            with socket.socket() as s:
                s.bind(("", 0))
                port = s.getsockname()[1]
        ctx = ray.get_runtime_context()
        ip, hostname = ray.util.get_node_ip_address(), socket.gethostname()
        # What the others reach rank 0 by: its node's address, unless this machine's name does not
        # resolve to it (then torchrun would not see that it hosts the rendezvous): the name.
        try:
            own = {a[4][0] for a in socket.getaddrinfo(hostname, None)}
        except OSError:
            own = set()
        return {"node_id": ctx.get_node_id(), "host": ip, "hostname": hostname, "port": port,
                "rank0_host": ip if ip in own else hostname}

    def start(self, argv, env):
        full = dict(os.environ)
        full.update(env)
        self.lines = []

        # The command ends if this actor's process is killed (PR_SET_PDEATHSIG). libc is loaded before
        # the fork: the child of a threaded process must not import anything.
        prctl = ctypes.CDLL(None, use_errno=True).prctl

        def die_with_parent():
            prctl(1, signal.SIGTERM)

        try:
            self.proc = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         preexec_fn=die_with_parent)
        except OSError as e:
            self.proc = None
            return f"cannot start `{argv[0]}`: {e.strerror or e}"
        self.readers = [threading.Thread(target=self._read, args=(pipe, stream), daemon=True)
                        for pipe, stream in ((self.proc.stdout, b"o"), (self.proc.stderr, b"e"))]
        for t in self.readers:
            t.start()
        return None

    def _read(self, pipe, stream):
        for line in iter(pipe.readline, b""):
            with self.lock:
                self.lines.append((stream, line))

    def drain(self):
        """The output read so far, and the exit code once the command ended and both pipes closed."""
        code = None
        if self.proc is not None and self.proc.poll() is not None and not any(t.is_alive() for t in self.readers):
            code = self.proc.returncode
        with self.lock:
            out, self.lines = self.lines, []
        return out, code

    def stop(self, grace_s: float):
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        except ProcessLookupError:
            pass


class Gang:
    def __init__(self, spec):
        self.spec = spec
        self.replicas = [(ri, role, k) for ri, role in enumerate(spec["roles"]) for k in range(len(role["replicas"]))]
        self.retries = {role["name"]: role.get("max_retries", 0) for role in spec["roles"]}
        self.restarts = 0
        self.actors = [None] * len(self.replicas)
        self.places = [None] * len(self.replicas)
        self.done = [False] * len(self.replicas)
        self.tails = [[] for _ in self.replicas]
        self.pg = None
        self.stopping = False

    def bundle(self, role):
        r = role["resource"]
        b = {k: v for k, v in r.get("custom", {}).items() if v}
        if r.get("cpu"):
            b["CPU"] = r["cpu"]
        if r.get("gpu"):
            b["GPU"] = r["gpu"]
        if r.get("memory"):
            b["memory"] = r["memory"]
        return b or {"CPU": 0.001}  # a bundle may not be empty

    def reserve(self):
        bundles = [self.bundle(self.spec["roles"][ri]) for ri, _, _ in self.replicas]
        status(phase="pending", bundles=bundles, strategy=self.spec["placement_strategy"])
        self.pg = placement_group(bundles, strategy=self.spec["placement_strategy"],
                                  name=f"torchx-{self.spec['app_id']}")
        ray.get(self.pg.ready())

    def make_actor(self, i):
        ri, role, _ = self.replicas[i]
        b = self.bundle(self.spec["roles"][ri])
        opts = {"num_cpus": b.pop("CPU", 0), "num_gpus": b.pop("GPU", 0), "memory": b.pop("memory", None),
                "resources": b, "max_restarts": 0,
                "scheduling_strategy": PlacementGroupSchedulingStrategy(self.pg, placement_group_bundle_index=i)}
        if opts["memory"] is None:
            del opts["memory"]
        self.actors[i] = Replica.options(**opts).remote()

    def place(self, indices):
        """Starts actors for `indices` and learns where each landed (rank 0 also picks the rendezvous port).
        An actor whose node dies before it starts is made again (its bundle moves to a live node); after
        a restart that may take at most reschedule_timeout_s, then GetTimeoutError."""
        timeout = self.spec.get("reschedule_timeout_s") if self.restarts else None
        deadline = None if timeout is None else time.monotonic() + timeout
        pending = list(indices)
        while pending:
            for i in pending:
                if self.actors[i] is None:
                    self.make_actor(i)
            refs = [self.actors[i].where.remote(i == 0) for i in pending]
            lost = []
            for i, ref in zip(pending, refs):
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    self.places[i] = ray.get(ref, timeout=left)
                except RayActorError:
                    self.actors[i] = None
                    lost.append(i)
            if lost and deadline is not None and time.monotonic() >= deadline:
                raise GetTimeoutError("no node for the lost replicas")
            if lost:
                time.sleep(1)
            pending = lost

    def env_of(self, i):
        ri, role, k = self.replicas[i]
        rank0 = self.places[0]
        env = dict(self.spec["roles"][ri]["replicas"][k]["env"])
        env.update({"TORCHX_RANK0_HOST": rank0["rank0_host"], "MASTER_ADDR": rank0["rank0_host"],
                    "MASTER_PORT": str(rank0["port"]), "TORCHX_RANK0_PORT": str(rank0["port"]),
                    "TORCHX_RAY_NODE_ID": self.places[i]["node_id"]})
        return env

    def launch(self, indices):
        errors = ray.get([self.actors[i].start.remote(self.spec["roles"][self.replicas[i][0]]["replicas"][
            self.replicas[i][2]]["argv"], self.env_of(i)) for i in indices])
        for i, err in zip(indices, errors):
            self.done[i] = False
            self.tails[i] = []
            if err:
                raise StartError(i, err)
        status(phase="running", restarts=self.restarts,
               replicas=[dict(role=self.name(j), replica=self.replicas[j][2], **self.places[j])
                         for j in range(len(self.replicas))])

    def name(self, i):
        return self.spec["roles"][self.replicas[i][0]]["name"]

    def write(self, i, stream, line):
        tag = stream if line.endswith(b"\n") else stream.upper()
        body = line if line.endswith(b"\n") else line + b"\n"
        OUT.write(b"\x1eL " + f"{self.name(i)} {self.replicas[i][2]} ".encode() + tag + b"\x1f" + body)
        if stream == b"e":
            self.tails[i] = (self.tails[i] + [line.decode("utf-8", "replace").rstrip("\n")])[-TAIL_LINES:]

    def poll(self):
        """Drains every live replica once; returns (index, exit code or None when its node was lost) of the first failure."""
        live = [i for i in range(len(self.replicas)) if not self.done[i]]
        refs = [self.actors[i].drain.remote() for i in live]
        failure = None
        for i, ref in zip(live, refs):
            try:
                lines, code = ray.get(ref)
            except RayActorError:
                self.actors[i] = None
                failure = failure or (i, None)
                continue
            for stream, line in lines:
                self.write(i, stream, line)
            if code is not None:
                self.done[i] = True
                status(phase="exited", role=self.name(i), replica=self.replicas[i][2], exit_code=code)
                if code != 0:
                    failure = failure or (i, code)
        OUT.flush()
        return failure

    def stop(self, indices, grace_s=5.0):
        refs = [self.actors[i].stop.remote(grace_s) for i in indices if self.actors[i] is not None]
        try:
            ray.get(refs, timeout=grace_s + 5)
        except (RayActorError, GetTimeoutError):
            pass
        self.poll_quietly(indices)

    def poll_quietly(self, indices):
        for i in indices:
            if self.actors[i] is None:
                continue
            try:
                lines, _ = ray.get(self.actors[i].drain.remote(), timeout=5)
            except (RayActorError, GetTimeoutError):
                continue
            for stream, line in lines:
                self.write(i, stream, line)
        OUT.flush()

    def to_restart(self, i):
        policy = self.spec["roles"][self.replicas[i][0]].get("retry_policy", "APPLICATION")
        if policy == "REPLICA":
            return [i]
        if policy == "ROLE":
            return [j for j in range(len(self.replicas)) if self.replicas[j][0] == self.replicas[i][0]]
        return list(range(len(self.replicas)))

    def run(self):
        self.reserve()
        everyone = list(range(len(self.replicas)))
        self.place(everyone)
        self.launch(everyone)
        while True:
            failure = self.poll()
            if failure is None:
                if all(self.done):
                    status(phase="succeeded", restarts=self.restarts)
                    return 0
                time.sleep(POLL_S)
                continue
            i, code = failure
            cause = "node_failure" if code is None else "user_error"
            role = self.name(i)
            if self.retries[role] > 0:
                self.retries[role] -= 1
                self.restarts += 1
                group = self.to_restart(i)
                status(phase="restarting", role=role, replica=self.replicas[i][2], exit_code=code, cause=cause,
                       restarts=self.restarts)
                self.stop([j for j in group if not self.done[j] or j == i])
                self.place(group)
                self.launch(group)
                continue
            others = [j for j in everyone if not self.done[j] and j != i]
            self.stop(others)
            exit_code = 1 if code is None else (code if code > 0 else 128 - code)
            status(phase="failed", role=role, replica=self.replicas[i][2], exit_code=code, cause=cause,
                   restarts=self.restarts, stderr_tail=self.tails[i])
            where = self.places[i] or {}
            why = (f"replica {role}/{self.replicas[i][2]} lost its node {where.get('node_id', '?')}" if code is None
                   else f"replica {role}/{self.replicas[i][2]} exited with code {code}")
            print(f"torchx: {why}", file=sys.stderr, flush=True)
            return exit_code


class StartError(Exception):
    def __init__(self, i, why):
        super().__init__(why)
        self.index = i


def main() -> int:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.json"), encoding="utf-8") as f:
        spec = json.load(f)
    ray.init(log_to_driver=False)
    gang = Gang(spec)

    def on_term(signum, _frame):  # `ray job stop` (torchx cancel): end the replicas first
        gang.stopping = True
        gang.stop([i for i in range(len(gang.replicas)) if not gang.done[i]], grace_s=2.0)
        status(phase="cancelled", restarts=gang.restarts)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        return gang.run()
    except StartError as e:
        i = e.index
        status(phase="failed", role=gang.name(i), replica=gang.replicas[i][2], exit_code=None, cause="user_error",
               restarts=gang.restarts, stderr_tail=[str(e)])
        print(f"torchx: replica {gang.name(i)}/{gang.replicas[i][2]}: {e}", file=sys.stderr, flush=True)
        gang.stop([j for j in range(len(gang.replicas)) if j != i])
        return 127
    except GetTimeoutError:
        status(phase="failed", exit_code=None, cause="node_failure", restarts=gang.restarts,
               stderr_tail=["the gang's lost replicas found no node within the reschedule timeout"])
        print("torchx: the gang's lost replicas found no node within the reschedule timeout", file=sys.stderr,
              flush=True)
        return 1
    finally:
        if gang.pg is not None and not gang.stopping:
            remove_placement_group(gang.pg)


if __name__ == "__main__":
    sys.exit(main())

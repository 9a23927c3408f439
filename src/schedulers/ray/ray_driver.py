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
# the replica's exit code (128+n for a signal, 1 for a lost node, 127 for a command that could not
# start). A replica whose node is lost counts as failed ("node_failure"). `ray job stop` (SIGTERM)
# ends the replicas within Ray's stop wait (3 s) and writes a "cancelled" frame.
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
from ray.exceptions import GetTimeoutError, RayActorError, RayError
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

OUT = sys.stdout.buffer
POLL_S = 0.2
TAIL_LINES = 20
# After a replica's command exits, how long a process it left behind may keep its pipes open
# before its process group is killed (its exit must not wait on a daemon it started).
PIPE_GRACE_S = 5.0


class Cancelled(Exception):
    """Raised in the main thread by the SIGTERM handler: `ray job stop`."""


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
        self.exited_at = None

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
        """(None, its pid) once the command runs; else (why it could not start, None)."""
        full = dict(os.environ)
        full.update(env)
        self.lines = []
        self.exited_at = None
        # The command gets SIGTERM if this actor's process dies (PR_SET_PDEATHSIG: the direct child
        # only; its own children are its business). libc is loaded before the fork: the child of a
        # threaded process must not import anything.
        prctl = ctypes.CDLL(None, use_errno=True).prctl

        def die_with_parent():
            prctl(1, signal.SIGTERM)

        try:
            self.proc = subprocess.Popen(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         preexec_fn=die_with_parent)
        except (OSError, ValueError, subprocess.SubprocessError) as e:
            self.proc = None
            return f"cannot start `{argv[0] if argv else ''}`: {getattr(e, 'strerror', None) or e}", None
        self.readers = [threading.Thread(target=self._read, args=(pipe, stream), daemon=True)
                        for pipe, stream in ((self.proc.stdout, b"o"), (self.proc.stderr, b"e"))]
        for t in self.readers:
            t.start()
        return None, self.proc.pid

    def _read(self, pipe, stream):
        for line in iter(pipe.readline, b""):
            with self.lock:
                self.lines.append((stream, line))

    def drain(self):
        """The output read so far, and the exit code once the command ended and both pipes closed."""
        code = None
        if self.proc is not None and self.proc.poll() is not None:
            if any(t.is_alive() for t in self.readers):
                self.exited_at = self.exited_at or time.monotonic()
                if time.monotonic() - self.exited_at > PIPE_GRACE_S:
                    self._kill_group(signal.SIGKILL)  # what it left behind holds the pipes
            else:
                code = self.proc.returncode
        with self.lock:
            out, self.lines = self.lines, []
        return out, code

    def _kill_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace_s: float):
        if self.proc is None:
            return
        self._kill_group(signal.SIGTERM)
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
        self._kill_group(signal.SIGKILL)  # the command and whatever it left in its group
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass


class Gang:
    def __init__(self, spec):
        self.spec = spec
        self.replicas = [(ri, role, k) for ri, role in enumerate(spec["roles"]) for k in range(len(role["replicas"]))]
        self.retries = {role["name"]: role.get("max_retries", 0) for role in spec["roles"]}
        self.restarts = 0
        self.actors = [None] * len(self.replicas)
        self.places = [None] * len(self.replicas)
        self.codes = [None] * len(self.replicas)  # each replica's exit code once it ended
        self.tails = [[] for _ in self.replicas]
        self.pg = None

    def name(self, i):
        return self.spec["roles"][self.replicas[i][0]]["name"]

    def live(self):
        return [i for i in range(len(self.replicas)) if self.codes[i] is None]

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
        b = self.bundle(self.spec["roles"][self.replicas[i][0]])
        opts = {"num_cpus": b.pop("CPU", 0), "num_gpus": b.pop("GPU", 0), "memory": b.pop("memory", None),
                "resources": b, "max_restarts": 0,
                "scheduling_strategy": PlacementGroupSchedulingStrategy(self.pg, placement_group_bundle_index=i)}
        if opts["memory"] is None:
            del opts["memory"]
        self.actors[i] = Replica.options(**opts).remote()

    def place(self, indices, deadline):
        """Starts actors for `indices` and learns where each landed (rank 0 also picks the rendezvous
        port). An actor whose node dies before it answers is made again (its bundle moves to a live
        node) until `deadline` (monotonic seconds; None: no limit), then GetTimeoutError."""
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
        ri, _, k = self.replicas[i]
        rank0 = self.places[0]
        env = dict(self.spec["roles"][ri]["replicas"][k]["env"])
        env.update({"TORCHX_RANK0_HOST": rank0["rank0_host"], "MASTER_ADDR": rank0["rank0_host"],
                    "MASTER_PORT": str(rank0["port"]), "TORCHX_RANK0_PORT": str(rank0["port"]),
                    "TORCHX_RAY_NODE_ID": self.places[i]["node_id"]})
        return env

    def launch(self, indices):
        """Places and starts `indices`. Returns the failures [(index, exit code or None, cause)]: a
        command that could not start (127), or an actor that died again before it started."""
        deadline = None
        if self.restarts:
            deadline = time.monotonic() + self.spec.get("reschedule_timeout_s", 120)
        self.place(indices, deadline)
        for i in indices:
            self.codes[i] = None
            self.tails[i] = []
        refs = [(i, self.actors[i].start.remote(self.spec["roles"][self.replicas[i][0]]["replicas"][
            self.replicas[i][2]]["argv"], self.env_of(i))) for i in indices]
        failures = []
        for i, ref in refs:
            try:
                err, pid = ray.get(ref)
            except RayActorError:
                self.actors[i] = None
                failures.append((i, None, "node_failure"))
                continue
            # The command's pid on its node: what `torchx debug stack` asks the node's agent to dump.
            self.places[i]["pid"] = pid
            if err:
                self.codes[i] = 127
                self.tails[i] = [err]
                failures.append((i, 127, "user_error"))
        status(phase="running", restarts=self.restarts,
               replicas=[dict(role=self.name(j), replica=self.replicas[j][2], **self.places[j])
                         for j in range(len(self.replicas))])
        return failures

    def write(self, i, stream, line):
        tag = stream if line.endswith(b"\n") else stream.upper()
        body = line if line.endswith(b"\n") else line + b"\n"
        OUT.write(b"\x1eL " + f"{self.name(i)} {self.replicas[i][2]} ".encode() + tag + b"\x1f" + body)
        if stream == b"e":
            self.tails[i] = (self.tails[i] + [line.decode("utf-8", "replace").rstrip("\n")])[-TAIL_LINES:]

    def poll(self):
        """Drains every live replica once; returns every failure [(index, exit code or None, cause)]."""
        live = self.live()
        refs = [(i, self.actors[i].drain.remote() if self.actors[i] is not None else None) for i in live]
        failures = []
        for i, ref in refs:
            try:
                if ref is None:
                    raise RayActorError()
                lines, code = ray.get(ref)
            except RayActorError:
                self.actors[i] = None
                failures.append((i, None, "node_failure"))
                continue
            for stream, line in lines:
                self.write(i, stream, line)
            if code is not None:
                self.codes[i] = code
                status(phase="exited", role=self.name(i), replica=self.replicas[i][2], exit_code=code)
                if code != 0:
                    failures.append((i, code, "user_error"))
        OUT.flush()
        return failures

    def stop(self, indices, grace_s=5.0):
        """Ends the commands of `indices` (best effort: an actor that is gone has taken its command)."""
        refs = [self.actors[i].stop.remote(grace_s) for i in indices if self.actors[i] is not None]
        try:
            ray.get(refs, timeout=2 * grace_s + 2)
        except RayError:
            pass
        for i in indices:
            if self.actors[i] is None:
                continue
            try:
                lines, _ = ray.get(self.actors[i].drain.remote(), timeout=2)
            except RayError:
                continue
            for stream, line in lines:
                self.write(i, stream, line)
        OUT.flush()

    def to_restart(self, i):
        policy = self.spec["roles"][self.replicas[i][0]].get("retry_policy", "APPLICATION")
        if policy == "REPLICA":
            return {i}
        if policy == "ROLE":
            return {j for j in range(len(self.replicas)) if self.replicas[j][0] == self.replicas[i][0]}
        return set(range(len(self.replicas)))

    def fail(self, i, code, cause):
        """Ends the gang for replica i's failure; the driver's exit code."""
        self.stop(self.live())
        status(phase="failed", role=self.name(i), replica=self.replicas[i][2], exit_code=code, cause=cause,
               restarts=self.restarts, stderr_tail=self.tails[i])
        where = self.places[i] or {}
        why = (f"replica {self.name(i)}/{self.replicas[i][2]} lost its node {where.get('node_id', '?')}"
               if code is None else f"replica {self.name(i)}/{self.replicas[i][2]} exited with code {code}")
        print(f"torchx: {why}", file=sys.stderr, flush=True)
        return 1 if code is None else (code if code > 0 else 128 - code)

    def run(self):
        self.reserve()
        failures = self.launch(list(range(len(self.replicas))))
        while True:
            failures = failures or self.poll()
            if not failures:
                if not self.live():  # every replica ended, and none failed
                    status(phase="succeeded", restarts=self.restarts)
                    return 0
                time.sleep(POLL_S)
                continue
            # The failures of this poll (a lost node may take several replicas at once) cost each
            # role one retry; a role with none left ends the gang.
            group, charged = set(), set()
            for i, code, cause in failures:
                role = self.name(i)
                if role not in charged:
                    if self.retries[role] <= 0:
                        return self.fail(i, code, cause)
                    self.retries[role] -= 1
                    charged.add(role)
                group |= self.to_restart(i)
            self.restarts += 1
            i, code, cause = failures[0]
            status(phase="restarting", role=self.name(i), replica=self.replicas[i][2], exit_code=code, cause=cause,
                   restarts=self.restarts)
            self.stop(sorted(group))
            failures = self.launch(sorted(group))


def main() -> int:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec.json"), encoding="utf-8") as f:
        spec = json.load(f)
    ray.init(log_to_driver=False)
    gang = Gang(spec)

    def on_term(signum, _frame):  # `ray job stop` (torchx cancel): the main thread stops the replicas
        raise Cancelled()

    signal.signal(signal.SIGTERM, on_term)
    try:
        return gang.run()
    except Cancelled:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        OUT.write(b"\n")  # a frame the signal cut short ends here
        gang.stop(gang.live(), grace_s=1.0)  # within Ray's stop wait (3 s)
        status(phase="cancelled", restarts=gang.restarts)
        return 128 + signal.SIGTERM
    except GetTimeoutError:
        gang.stop(gang.live(), grace_s=1.0)
        status(phase="failed", exit_code=None, cause="node_failure", restarts=gang.restarts,
               stderr_tail=["the gang's lost replicas found no node within the reschedule timeout"])
        print("torchx: the gang's lost replicas found no node within the reschedule timeout", file=sys.stderr,
              flush=True)
        return 1
    finally:
        if gang.pg is not None:
            try:
                remove_placement_group(gang.pg)
            except RayError:
                pass


if __name__ == "__main__":
    sys.exit(main())

"""Volcano's controller and a kubelet for the API server fake, for suites that need jobs to run
rather than be moved by hand (the C++ scheduler conformance suite):

- each pod's first container runs as a local process (its command and args, its env on top of
  this process's; the image is not pulled: there is no container), its output lines become the
  pod's log;
- pods go Pending -> Running -> Succeeded or Failed (the container's exit code in its status), and
  the job Running -> Completed, or Failed as soon as one pod fails (the others are killed);
- AbortJob and deleting a job kill its processes (the API fake sets Aborted as before);
- metrics.k8s.io has each running pod's CPU (the rate since the previous scrape, or since the
  start) and resident memory, read from /proc for its process group, as metrics-server would.

As a program, it serves one fake cluster until stdin closes or SIGTERM:

    python3 fake_kubelet.py DIR   # PKI in DIR, then DIR/kubeconfig (written last: wait for it)
"""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from fake_apiserver import FakeApiServer, kubeconfig, make_pki  # noqa: E402


class FakeKubelet:
    def __init__(self, server, workdir):
        self.server = server
        self.workdir = str(workdir)
        self.procs = {}  # (ns, pod) -> Popen
        self.stopped = set()  # (ns, job) aborted or deleted: its pods' ends change nothing
        self.started = {}  # (ns, pod) -> monotonic time its process started
        self.scraped = {}  # (ns, pod) -> (monotonic time, CPU seconds) at the last scrape
        server.watchers.append(self)

    def stop(self):
        with self.server.cond:
            for proc in self.procs.values():
                _kill(proc)

    # --- told by the API fake, with its lock held ----------------------------------------------

    def job_created(self, ns, name):
        job = self.server.jobs[(ns, name)]
        for task, pod in zip(job["spec"]["tasks"], self.server.pods_of(ns, name)):
            threading.Thread(target=self._run, args=(ns, name, task["name"], pod), daemon=True).start()

    def job_stopped(self, ns, name):
        self.stopped.add((ns, name))
        for (n, pod), proc in self.procs.items():
            if n == ns and pod.startswith(name + "-"):
                _kill(proc)

    def pod_usage(self, ns):
        """{pod: {container: {"cpu", "memory"}}} of the running pods in `ns` (metrics.k8s.io)."""
        with self.server.cond:
            running = {pod: (proc, self.server.pods.get((n, pod))) for (n, pod), proc in self.procs.items() if n == ns}
        out = {}
        for pod, (proc, obj) in running.items():
            cpu, rss = _group_usage(proc.pid)
            now = time.monotonic()
            then, cpu_then = self.scraped.get((ns, pod), (self.started.get((ns, pod), now), 0.0))
            self.scraped[(ns, pod)] = (now, cpu)
            cores = (cpu - cpu_then) / (now - then) if now > then else 0.0
            container = (obj or {}).get("spec", {}).get("containers", [{}])[0].get("name", "main")
            out[pod] = {container: {"cpu": f"{int(cores * 1e9)}n", "memory": f"{rss // 1024}Ki"}}
        return out

    # --- one pod -------------------------------------------------------------------------------

    def _run(self, ns, name, task, pod):
        s = self.server
        with s.cond:
            if (ns, name) in self.stopped or (ns, pod) not in s.pods:
                return
            container = s.pods[(ns, pod)]["spec"]["containers"][0]
            argv = list(container.get("command") or []) + list(container.get("args") or [])
            env = dict(os.environ, **{e["name"]: str(e.get("value", "")) for e in container.get("env", [])})
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                        cwd=self.workdir, start_new_session=True)
            except OSError as e:  # as a container whose command is not found
                s.add_log(ns, pod, f"exec failed: {e}")
                self._ended(ns, name, pod, 127)
                return
            self.procs[(ns, pod)] = proc
            self.started[(ns, pod)] = time.monotonic()
            s.pods[(ns, pod)]["status"] = {"phase": "Running",
                                           "containerStatuses": [{"name": container.get("name", task),
                                                                  "state": {"running": {"startedAt": s._now()}}}]}
            self._update_job(ns, name)
        for raw in proc.stdout:
            s.add_log(ns, pod, raw.decode(errors="replace").rstrip("\n"))
        code = proc.wait()
        with s.cond:
            self.procs.pop((ns, pod), None)
            self._ended(ns, name, pod, code)

    def _ended(self, ns, name, pod, code):
        s = self.server
        if (ns, pod) not in s.pods:  # the job was deleted
            return
        status = s.pods[(ns, pod)]["status"]
        status["phase"] = "Succeeded" if code == 0 else "Failed"
        status["containerStatuses"] = [{"state": {"terminated": {"exitCode": code if code >= 0 else 128 - code,
                                                                 "finishedAt": s._now()}}}]
        s.finished.add((ns, pod))
        s.cond.notify_all()
        if (ns, name) not in self.stopped:
            self._update_job(ns, name)

    def _update_job(self, ns, name):
        """The job's phase from its pods' (Volcano's: any pod failed fails the job)."""
        s = self.server
        job = s.jobs.get((ns, name))
        if job is None:
            return
        tasks = {t["name"]: s.pods[(ns, f"{name}-{t['name']}-0")]["status"]["phase"] for t in job["spec"]["tasks"]}
        phases = set(tasks.values())
        if "Failed" in phases:
            self.stopped.add((ns, name))
            for (n, pod), proc in self.procs.items():
                if n == ns and pod.startswith(name + "-"):
                    _kill(proc)
            s.set_phase(ns, name, "Failed", tasks, message="a pod failed")
        elif phases == {"Succeeded"}:
            s.set_phase(ns, name, "Completed", tasks)
        else:
            s.set_phase(ns, name, "Running", tasks)


def _group_usage(pgid):
    """(CPU seconds, resident bytes) of every process in the process group (the container)."""
    tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    cpu, rss = 0.0, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = pathlib.Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) != pgid or fields[0] == "Z":
            continue
        cpu += (int(fields[11]) + int(fields[12])) / tick
        rss += int(fields[21]) * page
    return cpu, rss


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def main(directory):
    d = pathlib.Path(directory)
    pki = make_pki(d)
    server = FakeApiServer(pki)
    (d / "pods").mkdir(exist_ok=True)
    kubelet = FakeKubelet(server, d / "pods")
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    tmp = d / "kubeconfig.tmp"
    tmp.write_text(kubeconfig(server.url, pki))
    tmp.rename(d / "kubeconfig")
    done.wait()
    kubelet.stop()
    server.stop()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fake_kubelet.py DIR")
    main(sys.argv[1])

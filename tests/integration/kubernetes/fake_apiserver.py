"""A small Kubernetes API server fake for the kubernetes scheduler's protocol tests.

It serves, over TLS on 127.0.0.1, the parts of the API the scheduler uses, with the request and
response shapes of the Kubernetes API reference: Volcano Jobs (batch.volcano.sh/v1alpha1 create,
get, list with labelSelector, delete), Volcano bus Commands (create; AbortJob aborts its target),
pods (get, list), and pod logs (timestamps, sinceSeconds, sinceTime, follow as a chunked stream),
nodes (list; three, each pod put on one as it is made, round robin) and their metrics.
Errors are v1 Status objects. Clients authenticate with a client certificate signed by the fake's
CA or a bearer token.

Faults, for the fault suite: fail_next() answers the next matching requests with an error status
(429 with Retry-After too) or drops the connection, before or after doing what was asked;
cut_log() ends a followed log stream mid-way, cleanly or by dropping the connection mid-line.

There is no controller: tests move jobs through Volcano's phases with set_phase() and write pod
logs with add_log(), as Volcano and the kubelet would; or a FakeKubelet (fake_kubelet.py), told of
jobs through `watchers`, runs each pod's container as a local process and does it for them.
"""

import datetime
import json
import re
import ssl
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

JOBS = re.compile(r"^/apis/batch\.volcano\.sh/v1alpha1/namespaces/([^/]+)/jobs(?:/([^/]+))?$")
COMMANDS = re.compile(r"^/apis/bus\.volcano\.sh/v1alpha1/namespaces/([^/]+)/commands$")
POD_LOG = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
PODS = re.compile(r"^/api/v1/namespaces/([^/]+)/pods$")
POD = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")
POD_METRICS = re.compile(r"^/apis/metrics\.k8s\.io/v1beta1/namespaces/([^/]+)/pods$")
NODES = "/api/v1/nodes"
NODE_METRICS = "/apis/metrics.k8s.io/v1beta1/nodes"


def node(name, cpu, memory, gpus=0, ready=True, control_plane=False):
    """A Node as the API serves it: capacity, what pods may be given, Ready, its address."""
    capacity = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
    labels = {"kubernetes.io/hostname": name}
    if control_plane:
        labels["node-role.kubernetes.io/control-plane"] = ""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {}, "status": {"capacity": capacity, "allocatable": dict(capacity),
                                   "addresses": [{"type": "InternalIP", "address": f"10.0.0.{len(name)}"},
                                                 {"type": "Hostname", "address": name}],
                                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def make_pki(d):
    """A CA, a server certificate for 127.0.0.1 and a client certificate, with openssl."""

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=fake-kubernetes-ca", "-days", "2")
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        (d / f"{name}.ext").write_text(ext + "\n")
        run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=torchx-{name}/O=system:masters")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext")
    return d


def status(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}
    if details:
        body["details"] = details
    return code, body


class _Discard:
    """A response stream that goes nowhere (a fault's answer that never leaves the server)."""

    def write(self, data):
        return len(data)

    def flush(self):
        pass


class FakeApiServer:
    def __init__(self, pki_dir, token="fake-token", namespaces=("default", "team")):
        self.token = token
        self.namespaces = set(namespaces)
        self.jobs = {}       # (ns, name) -> job object
        self.commands = []   # created bus Commands
        self.logs = {}       # (ns, pod) -> [(time, line)]
        self.pods = {}       # (ns, pod) -> pod object (made when its job is created)
        self.finished = set()  # (ns, pod) whose log stream has ended
        self.requests = []   # (method, path, query, auth kind, body)
        self.faults = []     # [method, path regex, fault] answered before the API (fail_next)
        self.log_cuts = {}   # (ns, pod) -> (mode, lines) for the next followed stream (cut_log)
        self.cond = threading.Condition(threading.RLock())  # set_phase is called with it held
        self._serial = 0
        # Told of jobs as the API changes them (a FakeKubelet): job_created(ns, name) and
        # job_stopped(ns, name) (aborted or deleted), called with `cond` held.
        self.watchers = []
        # metrics.k8s.io, as metrics-server serves it: (ns, pod) -> {container: {"cpu", "memory"}}
        # set by hand (set_pod_metrics) or read from the pods' processes by a FakeKubelet's
        # `pod_usage(ns)`. metrics_api False: a cluster without metrics-server (404).
        self.pod_metrics = {}
        self.metrics_api = True
        # The cluster's nodes; a new pod is put on the next one (spec.nodeName), and node metrics
        # are {name: {"cpu", "memory"}} as metrics-server reports them.
        self.nodes = [node("cp-0", "4", "16Gi", control_plane=True), node("gpu-1", "32", "256Gi", gpus=8),
                      node("gpu-2", "32", "256Gi", gpus=8)]
        self.node_metrics = {"cp-0": {"cpu": "500m", "memory": "2Gi"}, "gpu-1": {"cpu": "3", "memory": "40Gi"}}
        self._next_node = 0

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(pki_dir / "server.crt", pki_dir / "server.key")
        ctx.load_verify_locations(pki_dir / "ca.crt")
        ctx.verify_mode = ssl.CERT_OPTIONAL
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                fake._handle(self, "GET")

            def do_POST(self):
                fake._handle(self, "POST")

            def do_DELETE(self):
                fake._handle(self, "DELETE")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        with self.cond:
            self.finished.update(self.logs.keys())
            self.cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- what Volcano and the kubelet would do -------------------------------------------------

    def set_phase(self, ns, name, phase, tasks=None, retry_count=0, message=""):
        """tasks: {task name: pod phase}."""
        with self.cond:
            job = self.jobs[(ns, name)]
            job["status"] = {"state": {"phase": phase, "message": message,
                                       "lastTransitionTime": self._now()},
                             "retryCount": retry_count,
                             "taskStatusCount": {t: {"phase": {p: 1}} for t, p in (tasks or {}).items()}}
            for task, pod_phase in (tasks or {}).items():
                pod = self.pods.get((ns, f"{name}-{task}-0"))
                if pod is not None:
                    pod["status"]["phase"] = pod_phase
            if phase in ("Completed", "Failed", "Aborted", "Terminated"):
                for (n, pod_name), pod in self.pods.items():  # a finished job's pods are done
                    if n == ns and pod_name.startswith(name + "-") and \
                            pod["status"].get("phase") not in ("Succeeded", "Failed"):
                        pod["status"]["phase"] = "Succeeded" if phase == "Completed" else "Failed"
                for key in self.logs:
                    if key[0] == ns and key[1].startswith(name + "-"):
                        self.finished.add(key)
            self.cond.notify_all()

    def set_pod_status(self, ns, pod, status):
        """The kubelet's report for a pod (phase, containerStatuses, reason, conditions)."""
        with self.cond:
            self.pods[(ns, pod)]["status"] = status

    def set_pod_metrics(self, ns, pod, usage):
        """usage: {container: {"cpu": "250m", "memory": "64Mi"}}, as metrics-server reports it."""
        with self.cond:
            self.pod_metrics[(ns, pod)] = usage

    def add_log(self, ns, pod, line, when=None):
        with self.cond:
            self.logs.setdefault((ns, pod), []).append((when or time.time(), line))
            self.cond.notify_all()

    def pods_of(self, ns, name):
        job = self.jobs[(ns, name)]
        return [f"{name}-{t['name']}-0" for t in job["spec"]["tasks"]]

    # --- faults --------------------------------------------------------------------------------

    def fail_next(self, method, path_pattern, *faults):
        """The next requests with `method` whose path matches `path_pattern` get `faults`, one
        each, in order; then the API answers again. A fault is an HTTP status (int), a (429 or 503,
        retry-after seconds) pair, "drop" (the connection closed unanswered, the request not done)
        or "done-then-drop" (the request done, then the connection closed unanswered: a timeout
        after the server took it)."""
        with self.cond:
            for fault in faults:
                self.faults.append([method, re.compile(path_pattern), fault])

    def cut_log(self, ns, pod, after_lines, mode):
        """The next followed stream of the pod's log ends after `after_lines` lines: "clean" (the
        chunked body terminated, as an API server's idle timeout) or "drop" (half of the next line
        sent, then the connection closed, as a kubelet restart)."""
        with self.cond:
            self.log_cuts[(ns, pod)] = (mode, after_lines)

    def _fault_for(self, method, path):
        with self.cond:
            for i, (m, pattern, fault) in enumerate(self.faults):
                if m == method and pattern.search(path):
                    del self.faults[i]
                    return fault
        return None

    # --- the API -------------------------------------------------------------------------------

    @staticmethod
    def _now():
        return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _auth(self, h):
        cert = h.connection.getpeercert()
        if cert:
            return "cert"
        if h.headers.get("Authorization") == f"Bearer {self.token}":
            return "token"
        return None

    def _handle(self, h, method):
        url = urlparse(h.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        auth = self._auth(h)
        with self.cond:
            self.requests.append((method, url.path, query, auth, raw.decode()))
        if auth is None:
            return self._send(h, *status(401, "Unauthorized", "Unauthorized"))
        fault = self._fault_for(method, url.path)
        if fault == "drop":
            h.close_connection = True
            return
        if isinstance(fault, int):
            return self._send(h, *status(fault, "Fault", f"injected HTTP {fault}"))
        if isinstance(fault, tuple):
            code, after = fault
            body = status(code, "TooManyRequests" if code == 429 else "ServiceUnavailable", "injected",
                          {"retryAfterSeconds": after})[1]
            return self._send(h, code, body, {"Retry-After": str(after)})
        if fault == "done-then-drop":
            h.wfile = _Discard()  # what the API does is done; its answer never leaves
            h.close_connection = True
        m = POD_LOG.match(url.path)
        if m and method == "GET":
            return self._log(h, m.group(1), m.group(2), query)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return self._send(h, *status(400, "BadRequest", "the request body is not JSON"))
        m = JOBS.match(url.path)
        if m:
            return self._send(h, *self._jobs(method, m.group(1), m.group(2), query, body))
        m = PODS.match(url.path)
        if m and method == "GET":
            return self._send(h, *self._pods(m.group(1), query))
        m = POD.match(url.path)
        if m and method == "GET":
            with self.cond:
                pod = self.pods.get((m.group(1), m.group(2)))
            if pod is None:
                return self._send(h, *status(404, "NotFound", f'pods "{m.group(2)}" not found',
                                             {"name": m.group(2), "kind": "pods"}))
            return self._send(h, 200, pod)
        if url.path == NODES and method == "GET":
            with self.cond:
                return self._send(h, 200, {"apiVersion": "v1", "kind": "NodeList", "items": self.nodes,
                                           "metadata": {"resourceVersion": str(self._serial)}})
        if url.path == NODE_METRICS and method == "GET" and self.metrics_api:
            with self.cond:
                items = [{"metadata": {"name": n}, "timestamp": self._now(), "window": "15s", "usage": u}
                         for n, u in self.node_metrics.items()]
            return self._send(h, 200, {"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                                       "metadata": {}, "items": items})
        m = POD_METRICS.match(url.path)
        if m and method == "GET" and self.metrics_api:
            return self._send(h, *self._pod_metrics(m.group(1), query))
        m = COMMANDS.match(url.path)
        if m and method == "POST":
            return self._send(h, *self._command(m.group(1), body))
        return self._send(h, *status(404, "NotFound", "the server could not find the requested resource"))

    def _send(self, h, code, body, headers=None):
        data = json.dumps(body).encode()
        h.send_response(code)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _jobs(self, method, ns, name, query, body):
        with self.cond:
            if ns not in self.namespaces:
                return status(404, "NotFound", f'namespaces "{ns}" not found',
                              {"name": ns, "kind": "namespaces"})
            if method == "POST" and name is None:
                if not isinstance(body, dict) or body.get("kind") != "Job" or \
                        body.get("apiVersion") != "batch.volcano.sh/v1alpha1":
                    return status(400, "BadRequest", "the body is not a batch.volcano.sh/v1alpha1 Job")
                meta = body.get("metadata") or {}
                job_name = meta.get("name")
                if not job_name:
                    return status(422, "Invalid", "Job.batch.volcano.sh is invalid: metadata.name: Required value")
                if meta.get("namespace", ns) != ns:
                    return status(400, "BadRequest", "the namespace of the provided object does not match the "
                                                     "namespace sent on the request")
                if (ns, job_name) in self.jobs:
                    return status(409, "AlreadyExists", f'jobs.batch.volcano.sh "{job_name}" already exists',
                                  {"name": job_name, "group": "batch.volcano.sh", "kind": "jobs"})
                self._serial += 1
                job = json.loads(json.dumps(body))
                job["metadata"].update({"namespace": ns, "uid": str(uuid.uuid4()),
                                        "resourceVersion": str(self._serial),
                                        "creationTimestamp": self._now(), "generation": 1})
                self.jobs[(ns, job_name)] = job
                for task, pod in zip(job["spec"]["tasks"], self.pods_of(ns, job_name)):
                    self.logs.setdefault((ns, pod), [])
                    labels = dict(task["template"]["metadata"].get("labels", {}),
                                  **{"volcano.sh/job-name": job_name, "volcano.sh/task-spec": task["name"]})
                    spec = dict(task["template"]["spec"])
                    if self.nodes:  # bound to a node as the scheduler would
                        spec["nodeName"] = self.nodes[self._next_node % len(self.nodes)]["metadata"]["name"]
                        self._next_node += 1
                    self.pods[(ns, pod)] = {"apiVersion": "v1", "kind": "Pod",
                                            "metadata": {"name": pod, "namespace": ns, "labels": labels,
                                                         "uid": str(uuid.uuid4())},
                                            "spec": spec, "status": {"phase": "Pending"}}
                for w in self.watchers:
                    w.job_created(ns, job_name)
                return 201, job
            if method == "GET" and name is None:
                items = list(j for (n, _), j in self.jobs.items() if n == ns)
                selector = query.get("labelSelector")
                if selector:
                    k, _, v = selector.partition("=")
                    items = [j for j in items if j["metadata"].get("labels", {}).get(k) == v]
                return 200, {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "JobList", "items": items,
                             "metadata": {"resourceVersion": str(self._serial)}}
            job = self.jobs.get((ns, name))
            if job is None:
                return status(404, "NotFound", f'jobs.batch.volcano.sh "{name}" not found',
                              {"name": name, "group": "batch.volcano.sh", "kind": "jobs"})
            if method == "GET":
                return 200, job
            if method == "DELETE":
                for w in self.watchers:
                    w.job_stopped(ns, name)
                del self.jobs[(ns, name)]
                for key in [k for k in self.pods if k[0] == ns and k[1].startswith(name + "-")]:
                    del self.pods[key]
                for key in [k for k in self.logs if k[0] == ns and k[1].startswith(name + "-")]:
                    self.finished.add(key)
                self.cond.notify_all()
                return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "details": {"name": name, "group": "batch.volcano.sh", "kind": "jobs",
                                         "uid": job["metadata"]["uid"]}}
            return status(405, "MethodNotAllowed", f"{method} is not supported here")

    def _pods(self, ns, query):
        with self.cond:
            items = [p for (n, _), p in self.pods.items() if n == ns]
            selector = query.get("labelSelector")
            if selector:
                k, _, v = selector.partition("=")
                items = [p for p in items if p["metadata"]["labels"].get(k) == v]
            return 200, {"apiVersion": "v1", "kind": "PodList", "items": items,
                         "metadata": {"resourceVersion": str(self._serial)}}

    def _pod_metrics(self, ns, query):
        usage = {}
        for watcher in self.watchers:  # a kubelet's live figures first, hand-set ones over them
            usage.update(getattr(watcher, "pod_usage", lambda _ns: {})(ns))
        with self.cond:
            usage.update({pod: u for (n, pod), u in self.pod_metrics.items() if n == ns})
            _, items = self._pods(ns, query)
            out = []
            for pod in items["items"]:
                name = pod["metadata"]["name"]
                if name not in usage:
                    continue  # not running, or not scraped yet
                out.append({"metadata": {"name": name, "namespace": ns, "labels": pod["metadata"]["labels"]},
                            "timestamp": self._now(), "window": "15s",
                            "containers": [{"name": c, "usage": u} for c, u in usage[name].items()]})
        return 200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": out}

    def _command(self, ns, body):
        with self.cond:
            if not isinstance(body, dict) or body.get("kind") != "Command":
                return status(400, "BadRequest", "the body is not a bus.volcano.sh/v1alpha1 Command")
            meta = dict(body.get("metadata") or {})
            if not meta.get("name"):
                if not meta.get("generateName"):
                    return status(422, "Invalid", "Command.bus.volcano.sh is invalid: metadata.name: Required value")
                meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
            command = dict(body, metadata=meta)
            self.commands.append(command)
            target = body.get("target") or {}
            job = self.jobs.get((ns, target.get("name")))
            if job is not None and target.get("uid") == job["metadata"]["uid"] and body.get("action") == "AbortJob":
                for w in self.watchers:
                    w.job_stopped(ns, target["name"])
                tasks = {t["name"]: "Failed" for t in job["spec"]["tasks"]}
                self.set_phase(ns, target["name"], "Aborted", tasks, message="aborted by a command")
            return 201, command

    def _log(self, h, ns, pod, query):
        with self.cond:
            known = (ns, pod) in self.logs
            pod_object = self.pods.get((ns, pod), {})
            phase = pod_object.get("status", {}).get("phase")
            container = pod_object.get("metadata", {}).get("labels", {}).get("volcano.sh/task-spec", pod)
        if not known:
            code, body = status(404, "NotFound", f'pods "{pod}" not found', {"name": pod, "kind": "pods"})
            return self._send(h, code, body)
        if phase == "Pending":  # the kubelet has no log for a container that has not started
            return self._send(h, *status(400, "BadRequest", f'container "{container}" in pod "{pod}" is waiting '
                                                             "to start: ContainerCreating"))
        since = time.time() - float(query["sinceSeconds"]) if "sinceSeconds" in query else None
        if "sinceTime" in query:  # RFC 3339, whole seconds, as metav1.Time travels in a query
            since = datetime.datetime.strptime(query["sinceTime"], "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=datetime.timezone.utc).timestamp()
        stamps = query.get("timestamps") == "true"

        def render(entries):
            out = []
            for when, line in entries:
                if since is not None and when < since:
                    continue
                ts = datetime.datetime.fromtimestamp(when, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
                out.append(f"{ts} {line}\n" if stamps else f"{line}\n")
            return "".join(out).encode()

        if query.get("follow") != "true":
            with self.cond:
                data = render(self.logs[(ns, pod)])
            h.send_response(200)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        with self.cond:
            cut = self.log_cuts.pop((ns, pod), None)
        sent = 0
        while True:
            with self.cond:
                self.cond.wait_for(lambda sent=sent: len(self.logs.get((ns, pod), [])) > sent or (ns, pod) in self.finished,
                                   timeout=30)
                entries = self.logs.get((ns, pod), [])[sent:]
                rest = []
                if cut and sent + len(entries) >= cut[1]:
                    entries, rest = entries[:cut[1] - sent], entries[cut[1] - sent:]
                sent += len(entries)
                done = (ns, pod) in self.finished and sent >= len(self.logs.get((ns, pod), []))
            data = render(entries)
            if cut and sent >= cut[1]:
                try:
                    if cut[0] == "drop":  # half a line, then the connection goes
                        data += render(rest[:1])[:max(1, len(render(rest[:1])) // 2)] if rest else b""
                        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        h.wfile.flush()
                        h.close_connection = True
                        h.connection.shutdown(2)
                    else:
                        if data:
                            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        h.wfile.write(b"0\r\n\r\n")
                        h.wfile.flush()
                except OSError:
                    pass
                return
            try:
                if data:
                    h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    h.wfile.flush()
                if done:
                    h.wfile.write(b"0\r\n\r\n")
                    h.wfile.flush()
                    return
            except OSError:
                return


def kubeconfig(server, pki_dir, mode="cert", namespace="default", token="fake-token", extra_user=None):
    """Kubeconfig text reaching `server`: mode cert (client certificate files), cert-data
    (base64 *-data fields), token, token-file, or exec (an exec plugin printing the token)."""
    import base64

    def b64(name):
        return base64.b64encode((pki_dir / name).read_bytes()).decode()

    cluster = {"server": server}
    if mode == "cert-data":
        cluster["certificate-authority-data"] = b64("ca.crt")
    else:
        cluster["certificate-authority"] = str(pki_dir / "ca.crt")
    user = {}
    if mode == "cert":
        user = {"client-certificate": str(pki_dir / "client.crt"), "client-key": str(pki_dir / "client.key")}
    elif mode == "cert-data":
        user = {"client-certificate-data": b64("client.crt"), "client-key-data": b64("client.key")}
    elif mode == "token":
        user = {"token": token}
    elif mode == "token-file":
        user = {"tokenFile": "token"}  # relative to the kubeconfig's directory: the caller writes it
    elif mode == "exec":
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "sh",
                         "args": ["-c", 'printf \'{"apiVersion":"client.authentication.k8s.io/v1",'
                                        '"kind":"ExecCredential","status":{"token":"%s"}}\' "$FAKE_TOKEN"'],
                         "env": [{"name": "FAKE_TOKEN", "value": token}]}}
    if extra_user:
        user.update(extra_user)
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "fake",
              "clusters": [{"name": "fake-cluster", "cluster": cluster}],
              "users": [{"name": "fake-user", "user": user}],
              "contexts": [{"name": "fake", "context": {"cluster": "fake-cluster", "user": "fake-user",
                                                        "namespace": namespace}}]}
    return json.dumps(config, indent=1)  # JSON is YAML

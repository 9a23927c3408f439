"""A real `torchx ui` for the tests: started on a free loopback port with its own state directory
and token file, and stopped (with every app it ran) when the test ends."""

import http.client
import json
import os
import pathlib
import re
import subprocess
import time
import urllib.parse

REPO = pathlib.Path(__file__).resolve().parents[3]


def torchx_bin():
    return os.environ.get("TORCHX_BIN") or str(REPO / "build" / "debug" / "cli" / "torchx")


class UiServer:
    def __init__(self, tmp_path, *args, env=None):
        self.tmp = tmp_path
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(tmp_path / "state"), **(env or {}))
        self.token_file = tmp_path / "ui-token"
        self.log = open(tmp_path / "ui.log", "w+")
        self.proc = subprocess.Popen(
            [torchx_bin(), "ui", "--port", "0", "--token_file", str(self.token_file), *args],
            stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=tmp_path, env=self.env)
        self.url = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.url is None:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"open (http://\S+)", line)
            if m:
                self.url = m.group(1)
        assert self.url, f"torchx ui did not start: {self.stderr()}"
        parsed = urllib.parse.urlparse(self.url)
        self.host, self.port = parsed.hostname, parsed.port
        self.token = self.token_file.read_text().strip()
        self.handles = []

    def stderr(self):
        """The server's stderr so far (readable after stop() too)."""
        return (self.tmp / "ui.log").read_text(errors="replace")

    def request(self, method, path, body=None, headers=None, host=None, timeout=30):
        """(status, headers, body bytes); `host` overrides the Host header."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"{self.host}:{self.port}")
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(data)))
        elif method in ("POST", "PUT", "DELETE"):
            conn.putheader("Content-Length", "0")  # as browsers send; HTTP/1.1 servers may refuse it missing
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders(data)
        res = conn.getresponse()
        out = res.read()
        conn.close()
        return res.status, dict(res.getheaders()), out

    def api(self, method, path, body=None, token=True, **kw):
        headers = kw.pop("headers", {})
        if token:
            headers["Authorization"] = f"Bearer {self.token}"
        status, hdrs, out = self.request(method, path, body, headers=headers, **kw)
        try:
            return status, json.loads(out) if out else None
        except ValueError:
            return status, out.decode()

    def submit(self, component, *args, scheduler="local_cwd", cfg=None):
        body = {"component": component, "args": list(args), "scheduler": scheduler}
        if cfg:
            body["cfg"] = cfg
        status, res = self.api("POST", "/api/v1/apps", body)
        assert status == 201, res
        self.handles.append(res["app_handle"])
        return res["app_handle"]

    def app(self, handle):
        return self.api("GET", app_path(handle))

    def wait_state(self, handle, states, timeout=120):
        deadline = time.monotonic() + timeout
        state = None
        while time.monotonic() < deadline:
            status, body = self.app(handle)
            assert status == 200, body
            state = body["status"]["state"]
            if state in states:
                return body
            time.sleep(0.2)
        raise AssertionError(f"{handle} still {state}, wanted {states}")

    def stop(self):
        """The server's exit code; again after the first call."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        for h in self.handles:
            subprocess.run([torchx_bin(), "cancel", h], capture_output=True, env=self.env, cwd=self.tmp)
        self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        return rc


def app_path(handle, suffix=""):
    return "/api/v1/apps/" + urllib.parse.quote(handle, safe="") + suffix

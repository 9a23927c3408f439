"""`torchx ui`'s REST API against a real server and real apps on local_cwd: list, describe,
logs followed while a job writes, cancel, delete, submit, dry run, every error code, and the
security rules (Host, Origin, CSRF, token, traversal, body size)."""

import http.client
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import pytest

from ui_server import UiServer, app_path


@pytest.fixture
def ui(tmp_path):
    server = UiServer(tmp_path)
    yield server
    assert server.stop() == 0, server.stderr()


def test_list_describe_and_page(ui):
    first = ui.submit("utils.echo", "--msg", "one")
    second = ui.submit("utils.echo", "--msg", "two")
    ui.wait_state(first, {"SUCCEEDED"})
    ui.wait_state(second, {"SUCCEEDED"})

    status, page = ui.api("GET", "/api/v1/apps")
    assert status == 200
    assert page["total"] == 2 and page["errors"] == []
    assert [a["app_handle"] for a in page["apps"]] == [second, first]  # newest first
    app = page["apps"][0]
    assert app["scheduler"] == "local_cwd" and app["state"] == "SUCCEEDED" and app["name"] == "echo"
    assert app["roles"] == [{"role": "echo", "replicas": 1, "states": {"SUCCEEDED": 1}}]
    assert app["num_restarts"] == 0 and app["created"] > 0

    status, one = ui.api("GET", "/api/v1/apps?limit=1&offset=1&state=SUCCEEDED&scheduler=local_cwd")
    assert status == 200 and one["total"] == 2 and [a["app_handle"] for a in one["apps"]] == [first]
    assert ui.api("GET", "/api/v1/apps?state=FAILED")[1]["total"] == 0

    status, detail = ui.app(first)
    assert status == 200
    assert detail["status"]["state"] == "SUCCEEDED"
    assert detail["status"]["roles"][0]["replicas"][0]["state"] == "SUCCEEDED"
    assert detail["appdef"]["roles"][0]["args"][-1] == "one"
    assert detail["app_id"] == first.rsplit("/", 1)[1]
    [attempt] = detail["attempts"]
    assert (attempt["role"], attempt["replica"], attempt["attempt"], attempt["state"]) == ("echo", 0, 0, "SUCCEEDED")
    assert attempt["exit_code"] == 0 and attempt["started"] <= attempt["ended"]


def test_retry_history(ui):
    marker = ui.tmp / "tried"
    script = f"if [ -e {marker} ]; then echo second; else touch {marker}; echo first; exit 7; fi"
    appdef = {"name": "flaky", "roles": [{"name": "r", "image": str(ui.tmp), "entrypoint": "sh", "args": ["-c", script],
                                          "max_retries": 1, "retry_policy": "REPLICA"}]}
    status, body = ui.api("POST", "/api/v1/apps", {"appdef": appdef, "scheduler": "local_cwd"})
    assert status == 201, body
    ui.handles.append(body["app_handle"])
    done = ui.wait_state(body["app_handle"], {"SUCCEEDED", "FAILED"})
    assert done["status"]["state"] == "SUCCEEDED" and done["status"]["num_restarts"] == 1
    first, second = done["attempts"]
    assert (first["attempt"], first["state"], first["exit_code"]) == (0, "FAILED", 7)
    assert (second["attempt"], second["state"], second["exit_code"]) == (1, "SUCCEEDED", 0)
    assert first["started"] <= first["ended"] <= second["started"] <= second["ended"]
    # Each attempt's log: the first run's through ?attempt=0, the latest by default.
    handle = body["app_handle"]
    _, _, log0 = ui.request("GET", app_path(handle, "/logs?attempt=0"))
    assert log0 == b"first\n"
    _, _, latest = ui.request("GET", app_path(handle, "/logs"))
    assert latest == b"second\n"
    status, _, missing = ui.request("GET", app_path(handle, "/logs?attempt=3"))
    assert status == 404 and b"r/0 has no attempt 3; its attempts are 0..1" in missing


def test_logs_follow_a_job_while_it_writes(ui):
    handle = ui.submit("utils.sh", "--", "sh", "-c",
                       "for i in 1 2 3 4; do echo line$i; sleep 0.5; done; echo oops >&2")
    conn = http.client.HTTPConnection(ui.host, ui.port, timeout=30)
    conn.request("GET", app_path(handle, "/logs?follow=true&stream=stdout"), headers={"Accept-Encoding": "gzip, br"})
    res = conn.getresponse()
    assert res.status == 200 and res.getheader("Content-Type") == "application/octet-stream"
    assert res.getheader("Content-Encoding") is None
    first = res.readline()
    assert first == b"line1\n"
    # The first line arrived while the job still ran: it was followed, not read at the end.
    assert ui.app(handle)[1]["status"]["state"] in ("RUNNING", "PENDING")
    rest = res.read()  # ends when the app does
    conn.close()
    assert rest == b"line2\nline3\nline4\n"
    assert ui.app(handle)[1]["status"]["state"] == "SUCCEEDED"

    _, _, err = ui.request("GET", app_path(handle, "/logs?stream=stderr"))
    assert err == b"oops\n"
    _, _, filtered = ui.request("GET", app_path(handle, "/logs?regex=line[24]&role=sh&replica=0"))
    assert filtered == b"line2\nline4\n"


def test_the_apps_stream_says_when_apps_change(ui):
    conn = http.client.HTTPConnection(ui.host, ui.port, timeout=30)
    conn.request("GET", "/api/v1/events")
    res = conn.getresponse()
    assert res.status == 200 and res.getheader("Content-Type") == "text/event-stream"

    def next_event():
        lines = []
        while True:
            line = res.readline().decode()
            if line == "\n" and lines:
                return [l for l in lines if not l.startswith(":")]
            if line != "\n":
                lines.append(line.strip())

    assert next_event() == ["event: apps", 'data: {"changed": true}']  # at once, to draw the page
    handle = ui.submit("utils.echo", "--msg", "hi")
    assert next_event() == ["event: apps", 'data: {"changed": true}']  # the new app
    conn.close()
    ui.wait_state(handle, {"SUCCEEDED"})


def test_cancel_then_delete(ui):
    handle = ui.submit("utils.sh", "--", "sleep", "60")
    ui.wait_state(handle, {"RUNNING"})
    status, body = ui.api("DELETE", app_path(handle))
    assert status == 409 and body["error"]["code"] == "FAILED_PRECONDITION"
    status, body = ui.api("POST", app_path(handle, "/cancel"))
    assert status == 202 and body["app_handle"] == handle
    ui.wait_state(handle, {"CANCELLED"}, timeout=30)
    assert ui.api("DELETE", app_path(handle))[0] == 200
    assert ui.app(handle)[0] == 404
    assert ui.api("GET", "/api/v1/apps")[1]["total"] == 0


def test_submit_dry_run_components_and_schedulers(ui):
    status, body = ui.api("POST", "/api/v1/apps", {"component": "utils.echo", "args": {"msg": "typed"},
                                                   "scheduler": "local_cwd", "dryrun": True})
    assert status == 200, body
    assert "typed" in body["dryrun"]["request"] and body["dryrun"]["scheduler"] == "local_cwd"
    assert ui.api("GET", "/api/v1/apps")[1]["total"] == 0  # nothing submitted

    appdef = {"name": "raw", "roles": [{"name": "r", "image": str(ui.tmp), "entrypoint": "echo", "args": ["from appdef"]}]}
    status, body = ui.api("POST", "/api/v1/apps", {"appdef": appdef, "scheduler": "local_cwd"})
    assert status == 201, body
    ui.handles.append(body["app_handle"])
    ui.wait_state(body["app_handle"], {"SUCCEEDED"})
    assert ui.request("GET", app_path(body["app_handle"], "/logs"))[2] == b"from appdef\n"

    status, comps = ui.api("GET", "/api/v1/components")
    assert status == 200 and "dist.torchrun" in [c["name"] for c in comps["components"]]
    status, spec = ui.api("GET", "/api/v1/components/dist.ddp")
    assert status == 200 and "j" in [p["name"] for p in spec["params"]] and spec["deprecation"]
    status, scheds = ui.api("GET", "/api/v1/schedulers")
    local = next(s for s in scheds["schedulers"] if s["name"] == "local_cwd")
    assert local["listed"] and "log_dir" in [o["name"] for o in local["runopts"]]
    assert "hosts" in local["capabilities"] and "stacks" in local["capabilities"]


def test_hosts_lists_each_listed_scheduler_that_can(ui):
    status, body = ui.api("GET", "/api/v1/hosts")
    assert status == 200, body
    [local] = [s for s in body["schedulers"] if s["scheduler"] == "local_cwd"]
    [host] = local["hosts"]
    assert host["cpus"] >= 1 and host["memory_mb"] > 0 and host["state"] == "up", host
    # Composites have no hosts of their own: they are left out, not listed with an error.
    assert not [s for s in body["schedulers"] if s["scheduler"] in ("sweep", "pipeline", "managed")], body
    status, body = ui.api("GET", "/api/v1/hosts?scheduler=nope")
    assert status == 404 and "nope" in body["error"]["message"], body
    status, body = ui.api("GET", "/api/v1/hosts?scheduler=sweep")
    assert status == 501, body


def test_error_codes_name_the_field(ui):
    def err(method, path, body=None, **kw):
        status, res = ui.api(method, path, body, **kw)
        return status, res["error"]["code"], res["error"]["message"]

    status, code, msg = err("POST", "/api/v1/apps", {"component": "utils.echo", "args": ["--mesg", "x"]})
    assert (status, code) == (400, "INVALID_ARGUMENT") and "--mesg" in msg
    status, _, msg = err("POST", "/api/v1/apps", {"component": "utils.echo", "cfg": {"log_dirr": "/x"}})
    assert status == 400 and "log_dirr" in msg and "log_dir" in msg
    status, _, msg = err("POST", "/api/v1/apps", {"component": "utils.echo", "scheduler": "slurmm"})
    assert status == 404 and "slurm" in msg
    status, _, msg = err("POST", "/api/v1/apps", {"component": "utils.nope"})
    assert status == 404 and "utils.nope" in msg
    status, _, msg = err("GET", "/api/v1/apps?state=DONE")
    assert status == 400 and "`state`" in msg and "SUCCEEDED" in msg
    assert err("GET", "/api/v1/apps?limit=100000")[0] == 400
    assert err("GET", app_path("local_cwd://torchx/nope"))[:2] == (404, "NOT_FOUND")
    assert err("POST", app_path("local_cwd://torchx/nope", "/cancel"))[0] == 404
    assert err("GET", app_path("local_cwd://torchx/nope", "/logs"))[0] == 404
    assert err("GET", "/api/v1/apps/not-a-handle")[:2] == (400, "INVALID_ARGUMENT")
    assert err("GET", "/api/v1/nothing-here")[:2] == (404, "NOT_FOUND")
    assert err("GET", "/api/v1/events?state=DONE")[:2] == (400, "INVALID_ARGUMENT")
    assert err("POST", "/api/v1/apps", b"{not json")[0] == 400
    handle = ui.submit("utils.sh", "--", "sleep", "60")
    ui.wait_state(handle, {"RUNNING"})
    status, _, msg = err("GET", app_path(handle, "/logs?role=nope"))
    assert status == 404 and "sh" in msg
    assert err("DELETE", app_path(handle))[0] == 409


def test_cross_origin_and_csrf(ui):
    handle = ui.submit("utils.sh", "--", "sleep", "60")
    ui.wait_state(handle, {"RUNNING"})
    origin = f"http://{ui.host}:{ui.port}"
    # A page on another site cannot cancel, with or without a guessed CSRF token.
    for headers in ({"Origin": "http://evil.example"},
                    {"Origin": "http://evil.example", "X-Torchx-CSRF": "guess"},
                    {"Sec-Fetch-Site": "cross-site"},
                    {"Origin": origin}):  # same origin but no CSRF token: refused too
        status, body = ui.api("POST", app_path(handle, "/cancel"), token=False, headers=dict(headers))
        assert status == 403, (headers, body)
    assert ui.app(handle)[1]["status"]["state"] == "RUNNING"
    # The page's own requests carry its CSRF token.
    _, _, page = ui.request("GET", "/")
    csrf = page.decode().split('name="torchx-csrf" content="')[1].split('"')[0]
    status, _ = ui.api("POST", app_path(handle, "/cancel"), token=False,
                       headers={"Origin": origin, "Sec-Fetch-Site": "same-origin", "X-Torchx-CSRF": csrf})
    assert status == 202
    ui.wait_state(handle, {"CANCELLED"}, timeout=30)


def test_a_refused_requests_body_is_never_read_as_the_next_request(ui):
    # A cross-site POST is refused before its body is read. Its body, a request of its own, must
    # not be answered as the connection's next request (the CSRF check would never see it): the
    # connection ends with the refusal.
    host = f"{ui.host}:{ui.port}".encode()
    smuggled = b"GET /api/v1/version HTTP/1.1\r\nHost: " + host + b"\r\n\r\n"
    request = (b"POST /api/v1/apps HTTP/1.1\r\nHost: " + host + b"\r\nOrigin: http://evil.example\r\n"
               b"Content-Type: text/plain\r\nContent-Length: " + str(len(smuggled)).encode() + b"\r\n\r\n" + smuggled)
    with socket.create_connection((ui.host, ui.port), timeout=10) as s:
        s.sendall(request)
        said = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            said += chunk
    assert said.startswith(b"HTTP/1.1 403"), said[:200]
    assert said.count(b"HTTP/1.1 ") == 1, said


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to connect as another user")
def test_another_users_connection_needs_the_token(ui):
    # On a shared machine every user reaches 127.0.0.1: another user's requests need the token,
    # reads too, and cannot take the CSRF token from the page.
    probe = ("import http.client, sys\n"
             "c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=10)\n"
             "h = {'Authorization': 'Bearer ' + sys.argv[3]} if len(sys.argv) > 3 else {}\n"
             "for path in ('/', '/api/v1/apps'):\n"
             "    c.request('GET', path, headers=h); r = c.getresponse(); r.read(); print(r.status)\n")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe,
              ui.host, str(ui.port)]
    res = subprocess.run(nobody, capture_output=True, text=True, timeout=30)
    assert res.stdout.split() == ["403", "403"], res.stderr
    res = subprocess.run(nobody + [ui.token], capture_output=True, text=True, timeout=30)
    assert res.stdout.split() == ["200", "200"], res.stderr


def test_dns_rebinding_traversal_and_body_limit(ui):
    assert ui.request("GET", "/api/v1/apps", host="evil.example")[0] == 403
    assert ui.request("GET", "/api/v1/apps", host=f"attacker.test:{ui.port}")[0] == 403
    assert ui.request("GET", "/api/v1/apps", host=f"localhost:{ui.port}")[0] == 200
    for path in ("/assets/../../../etc/passwd", "/assets/%2e%2e/%2e%2e/etc/passwd", "/../etc/passwd",
                 "/assets/..%2fui-token", "/assets/", "/assets/app.js/../index.html"):
        status, _, body = ui.request("GET", path)
        assert status == 404 and b"root:" not in body, path
    status, _, body = ui.request("POST", "/api/v1/apps", b"x" * (2 << 20),
                                 headers={"Authorization": f"Bearer {ui.token}"})
    assert status == 413 and json.loads(body)["error"]["code"] == "PAYLOAD_TOO_LARGE"
    status, headers, _ = ui.request("GET", "/")
    assert status == 200 and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    # A body must say its length, uncompressed: chunked or compressed bodies would pass the limit.
    status, _, body = ui.request("POST", "/api/v1/apps", b"", headers={
        "Authorization": f"Bearer {ui.token}", "Transfer-Encoding": "chunked"})
    assert status == 411, body
    status, _, body = ui.request("POST", "/api/v1/apps", b"{}", headers={
        "Authorization": f"Bearer {ui.token}", "Content-Encoding": "gzip"})
    assert status == 415, body
    # A handle past the CLI's 4 KiB limit is refused before routing, as is a path past httplib's.
    for size in (5000, 9000):
        status, _, body = ui.request("GET", f"/api/v1/apps/local_cwd%3A%2F%2Ftorchx%2F{'a' * size}",
                                     headers={"Authorization": f"Bearer {ui.token}"})
        assert status == 414 and json.loads(body)["error"]["code"] == "URI_TOO_LONG", (size, status, body)
    status, _, body = ui.request("GET", f"/api/v1/apps/local_cwd%3A%2F%2Ftorchx%2F{'a' * 4000}",
                                 headers={"Authorization": f"Bearer {ui.token}"})
    assert status == 404, body  # within the limits: routed, and not found


def test_hostile_logs_and_error_files_do_not_break_the_server(ui):
    # A 3 MiB line without a newline (a progress bar), an error file that is not UTF-8.
    script = ("python3 -c \"import sys; sys.stdout.write('#' * (3 << 20)); sys.stdout.write('\\ndone\\n')\"; "
              "printf 'not json \\377' > $TORCHELASTIC_ERROR_FILE; exit 3")
    handle = ui.submit("utils.sh", "--", "sh", "-c", script)
    done = ui.wait_state(handle, {"FAILED"})
    err = done["status"]["roles"][0]["replicas"][0]["structured_error"]
    assert err["message"] == "not json \ufffd" and err["exit_code"] is None
    status, _, out = ui.request("GET", app_path(handle, "/logs?stream=stdout"))
    assert status == 200 and out == b"#" * (3 << 20) + b"\ndone\n"
    # The Runner filters with RE2, linear in the line: a 3 MiB line costs no stack.
    status, _, out = ui.request("GET", app_path(handle, "/logs?stream=stdout&regex=a.*c|^done"))
    assert status == 200 and out == b"done\n"
    status, body = ui.api("GET", app_path(handle, "/logs?regex=(unclosed"))
    assert status == 400 and "`regex`" in body["error"]["message"]
    assert ui.app(handle)[0] == 200  # still serving


def test_clients_that_go_away_free_their_streams(ui):
    handle = ui.submit("utils.sh", "--", "sh", "-c", "while true; do echo tick; sleep 0.2; done")
    ui.wait_state(handle, {"RUNNING"})
    for _ in range(70):  # more than the 64 streams, each dropped while it waits for a match
        conn = http.client.HTTPConnection(ui.host, ui.port, timeout=10)
        conn.request("GET", app_path(handle, "/logs?follow=true&regex=never-printed"))
        assert conn.getresponse().status == 200
        conn.close()
        time.sleep(0.1)
    time.sleep(1.5)  # the pumps notice within their poll
    conn = http.client.HTTPConnection(ui.host, ui.port, timeout=10)
    conn.request("GET", app_path(handle, "/logs?follow=true"))
    res = conn.getresponse()
    assert res.status == 200 and res.readline() == b"tick\n"
    conn.close()
    ui.api("POST", app_path(handle, "/cancel"))
    ui.wait_state(handle, {"CANCELLED"}, timeout=30)
    t = time.monotonic()
    assert ui.stop() == 0
    assert time.monotonic() - t < 10


def test_token_required_on_every_request(tmp_path):
    server = UiServer(tmp_path, "--token_required")
    try:
        assert "?token=" in server.url
        assert server.request("GET", "/api/v1/apps")[0] == 401
        assert server.request("GET", "/")[0] == 401
        assert server.request("GET", "/api/v1/apps", headers={"Authorization": "Bearer wrong"})[0] == 401
        assert server.api("GET", "/api/v1/apps")[0] == 200
        # Opening the printed URL sets a cookie that serves the page's later requests.
        # It answers with the same page without ?token=, keeping the token out of the address bar.
        status, headers, _ = server.request("GET", "/?token=" + server.token)
        assert status == 303 and headers["Location"] == "/"
        cookie = headers["Set-Cookie"].split(";")[0]
        assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
        assert server.token not in cookie  # cookies reach every port of the host: not the token
        assert server.request("GET", "/", headers={"Cookie": cookie})[0] == 200
        assert server.request("GET", "/api/v1/apps", headers={"Cookie": cookie})[0] == 200
        name = cookie.split("=")[0]
        assert server.request("GET", "/api/v1/apps", headers={"Cookie": f"{name}={server.token}"})[0] == 401
        assert oct(os.stat(server.token_file).st_mode & 0o777) == "0o600"
    finally:
        assert server.stop() == 0


def test_unknown_scheduler_is_a_clear_error(tmp_path):
    from ui_server import torchx_bin
    res = subprocess.run([torchx_bin(), "ui", "-s", "slurmm", "--port", "0"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=30)
    assert res.returncode != 0 and "slurmm" in res.stderr and "slurm" in res.stderr


def test_idle_server_uses_no_cpu(ui):
    with open(f"/proc/{ui.proc.pid}/stat") as f:
        before = f.read().rsplit(")", 1)[1].split()
    time.sleep(3)
    with open(f"/proc/{ui.proc.pid}/stat") as f:
        after = f.read().rsplit(")", 1)[1].split()
    ticks = sum(int(after[i]) - int(before[i]) for i in (11, 12))  # utime + stime
    assert ticks <= 10, f"{ticks} clock ticks in 3 s idle"


def test_restart_loses_nothing(tmp_path):
    server = UiServer(tmp_path)
    handle = server.submit("utils.echo", "--msg", "kept")
    server.wait_state(handle, {"SUCCEEDED"})
    assert server.stop() == 0
    again = UiServer(tmp_path)
    try:
        assert again.token == server.token  # the token file is kept too
        status, page = again.api("GET", "/api/v1/apps")
        assert [a["app_handle"] for a in page["apps"]] == [handle]
    finally:
        assert again.stop() == 0


def test_a_second_server_on_a_port_in_use_is_refused(ui, tmp_path):
    """Without SO_REUSEPORT: a second `torchx ui` on the first one's port exits with an error
    naming the port, and the first keeps answering every request."""
    from ui_server import torchx_bin
    res = subprocess.run([torchx_bin(), "ui", "--port", str(ui.port), "--token_file", str(tmp_path / "t2")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert res.returncode != 0
    assert f"127.0.0.1:{ui.port}" in res.stderr and "in use" in res.stderr
    for _ in range(8):  # had the kernel split connections, some would reach a dead or other server
        assert ui.api("GET", "/api/v1/apps")[0] == 200


COMPONENT = "import torchx.specs as specs\n\ndef hello(msg: str = 'hi') -> specs.AppDef:\n" \
            "    return specs.AppDef(name='hello', roles=[specs.Role(name='r', image='.', entrypoint='echo', args=[msg])])\n"


def component_path(name):
    return "/api/v1/components/" + urllib.parse.quote(name, safe="")


def test_loading_a_component_file_needs_a_token_and_a_directory_it_may_load(tmp_path):
    # A component file runs its code at import: the page's CSRF token or the API token, and a file
    # in the working directory or a --component_dir.
    elsewhere = pathlib.Path(tempfile.mkdtemp(prefix="torchx-elsewhere-"))  # outside the server's cwd
    (tmp_path / "mine.py").write_text(COMPONENT)
    (elsewhere / "theirs.py").write_text(COMPONENT)
    (elsewhere / "ran.py").write_text(f"open({str(tmp_path / 'ran.txt')!r}, 'w').write('ran')\n" + COMPONENT)
    ui = UiServer(tmp_path)
    try:
        mine = component_path(str(tmp_path / "mine.py") + ":hello")
        status, body = ui.api("GET", mine, token=False)
        assert status == 401 and "X-Torchx-CSRF" in body["error"]["message"], body
        _, _, page = ui.request("GET", "/")
        csrf = page.decode().split('name="torchx-csrf" content="')[1].split('"')[0]
        status, body = ui.api("GET", mine, token=False, headers={"X-Torchx-CSRF": csrf})
        assert status == 200 and body["params"][0]["name"] == "msg", body
        assert ui.api("GET", mine)[0] == 200  # the API token
        # Outside the working directory: refused before anything runs, naming the option.
        status, body = ui.api("GET", component_path(str(elsewhere / "ran.py") + ":hello"))
        assert status == 403 and "--component_dir" in body["error"]["message"], body
        assert not (tmp_path / "ran.txt").exists()
        climbed = str(tmp_path) + "/" + "../" * 16 + str(elsewhere).lstrip("/") + "/theirs.py:hello"
        status, body = ui.api("GET", component_path(climbed))
        assert status == 403, body
        status, body = ui.api("POST", "/api/v1/apps", {"component": str(elsewhere / "ran.py") + ":hello",
                                                       "dryrun": True})
        assert status == 403 and not (tmp_path / "ran.txt").exists(), body
        # Registered components need nothing.
        assert ui.api("GET", "/api/v1/components/utils.echo", token=False)[0] == 200
    finally:
        assert ui.stop() == 0, ui.stderr()
    ui = UiServer(tmp_path, "--component_dir", str(elsewhere))
    try:
        assert ui.api("GET", component_path(str(elsewhere / "theirs.py") + ":hello"))[0] == 200
    finally:
        assert ui.stop() == 0, ui.stderr()
        shutil.rmtree(elsewhere)


def test_slow_heads_and_slow_components_do_not_stop_the_dashboard(ui):
    # 300 connections trickling a header byte a second (more than the server's 256 threads: a
    # connection waits for its head without one), and 16 clients loading a component whose import
    # sleeps for 60 s: a normal client is answered within a second, 10 times over 15 s, and each
    # trickling connection is closed at its 10 s deadline, with a 408.
    (ui.tmp / "sleepy.py").write_text("import time\ntime.sleep(60)\n" + COMPONENT)
    trickles = []
    for _ in range(300):
        s = socket.create_connection((ui.host, ui.port), timeout=5)
        s.sendall(b"GET /api/v1/version HTTP/1.1\r\nHost: " + f"{ui.host}:{ui.port}".encode() + b"\r\n")
        trickles.append(s)
    stop = threading.Event()

    def trickle():
        while not stop.is_set():
            for s in trickles:
                try:
                    s.sendall(b"X")
                except OSError:
                    pass
            stop.wait(1.0)

    loads = []

    def load():
        loads.append(ui.api("GET", component_path(str(ui.tmp / "sleepy.py") + ":hello"), timeout=60))

    threads = [threading.Thread(target=trickle)] + [threading.Thread(target=load) for _ in range(16)]
    for t in threads:
        t.start()
    try:
        time.sleep(1)
        worst = 0.0
        for _ in range(10):
            t0 = time.monotonic()
            status, body = ui.api("GET", "/api/v1/apps", timeout=5)
            took = time.monotonic() - t0
            worst = max(worst, took)
            assert status == 200, body
            time.sleep(max(0.0, 1.5 - took))
        assert worst < 1.0, f"a normal request took {worst:.2f} s"
        for s in trickles:
            s.settimeout(5)
            try:
                said = s.recv(200)
            except ConnectionResetError:
                said = b""
            assert said == b"" or said.startswith(b"HTTP/1.1 408 Request Timeout"), said
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=90)
        for s in trickles:
            s.close()
    # The loads were stopped at their limit (504), or refused at once past the loads allowed (503).
    codes = sorted(status for status, _ in loads)
    assert len(codes) == 16 and set(codes) <= {503, 504} and 504 in codes, codes
    timed_out = next(body for status, body in loads if status == 504)
    assert "longer than 10 s" in timed_out["error"]["message"], timed_out


def test_a_profile_whose_client_leaves_is_stopped(ui):
    """A profile samples for as long as it is asked (here 30 s); a client that closes its
    connection after a second stops it: py-spy is gone within seconds, not at the 30 s end."""
    (ui.tmp / "idle.py").write_text("import time\n\ndef waiting():\n    time.sleep(120)\n\nwaiting()\n")
    handle = ui.submit("utils.python", "--script", str(ui.tmp / "idle.py"))
    ui.wait_state(handle, {"RUNNING"})

    def recording():
        out = subprocess.run(["pgrep", "-f", "py-spy record"], capture_output=True, text=True).stdout
        return [p for p in out.split() if p]

    before = set(recording())
    conn = http.client.HTTPConnection(ui.host, ui.port, timeout=10)
    conn.request("POST", app_path(handle, "/profile?duration=30"), body=b"",
                 headers={"Authorization": f"Bearer {ui.token}", "Host": f"{ui.host}:{ui.port}"})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not set(recording()) - before:
        time.sleep(0.2)
    started = set(recording()) - before
    assert started, "no py-spy record started"
    conn.close()  # the client leaves
    left = time.monotonic()
    while time.monotonic() - left < 10 and set(recording()) & started:
        time.sleep(0.2)
    assert not set(recording()) & started, "py-spy still records for a client that has gone"
    # The slot is free again, and the dashboard answers.
    assert ui.api("GET", "/api/v1/apps")[0] == 200


def test_a_component_load_whose_client_leaves_is_stopped(ui):
    """A component file that takes a minute to import, asked for by a client that leaves after a
    second: its Python child is stopped then, not at the 10 s limit nor at the end of the import."""
    (ui.tmp / "slow_import.py").write_text("import time\ntime.sleep(60)\n" + COMPONENT)

    def loaders():
        out = subprocess.run(["pgrep", "-f", "torchx.components._bridge"], capture_output=True, text=True).stdout
        return set(out.split())

    before = loaders()
    conn = http.client.HTTPConnection(ui.host, ui.port, timeout=10)
    conn.request("GET", component_path(str(ui.tmp / "slow_import.py") + ":hello"),
                 headers={"Authorization": f"Bearer {ui.token}", "Host": f"{ui.host}:{ui.port}"})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not loaders() - before:
        time.sleep(0.1)
    started = loaders() - before
    assert started, "no component loader started"
    conn.close()
    left = time.monotonic()
    while time.monotonic() - left < 5 and loaders() & started:
        time.sleep(0.1)
    assert not loaders() & started, "the loader still runs for a client that has gone"
    assert time.monotonic() - left < 5

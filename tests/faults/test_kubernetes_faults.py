"""kubernetes when its API server misbehaves (ctest label `faults` + `kubernetes`), through the
torchx CLI and libcurl over real TLS against the API server fake (tests/integration/kubernetes):
refused connections, 503s, 429s with Retry-After, a create whose answer is lost after the server
took the Job, a followed log stream cut mid-way, an expired token. Retries are bounded and only
where they are safe; no Job is ever created twice; every log line is read once."""

import json
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "integration" / "kubernetes"))
from apiserver_fixtures import BINARY, make_cli, pki, server  # noqa: E402,F401  (fixtures)
from fake_apiserver import kubeconfig  # noqa: E402

JOBS = r"/apis/batch\.volcano\.sh/v1alpha1/namespaces/default/jobs$"


@pytest.fixture
def torchx(server, pki, tmp_path):
    return make_cli(tmp_path, kubeconfig(server.url, pki, "cert"), {"TORCHX_STATE_DIR": str(tmp_path / "state")})


def submit(torchx):
    handle = torchx("run", "-s", "kubernetes", "-cfg", "queue=default", "utils.echo", "--msg", "x").stdout.split()[0]
    ns, name = handle.split("/")[-1].split(":")
    return handle, ns, name


def requests_to(server, method, pattern):
    return [r for r in server.requests if r[0] == method and re.search(pattern, r[1])]


def test_a_refused_connection_is_retried_with_backoff_then_a_clear_error(pki, tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    torchx = make_cli(tmp_path, kubeconfig(f"https://127.0.0.1:{port}", pki, "cert"))
    started = time.monotonic()
    res = torchx("status", "kubernetes://torchx/default:x", check=False)
    took = time.monotonic() - started
    assert res.returncode == 1, res.stderr
    assert f"kubernetes API server https://127.0.0.1:{port} (context `fake`" in res.stderr
    assert "cannot be reached" in res.stderr
    assert 3.5 <= took < 30, took  # 5 attempts: 0.25 + 0.5 + 1 + 2 s of backoff, not forever


def test_503_and_429_with_retry_after_are_retried(torchx, server):
    handle, ns, name = submit(torchx)
    server.fail_next("GET", JOBS[:-1] + "/" + name + "$", 503, (429, 2))
    started = time.monotonic()
    status = json.loads(torchx("status", "--json", handle).stdout)
    assert status["state"] == "SUBMITTED"  # created, no phase yet
    assert time.monotonic() - started >= 2  # the 429's Retry-After was honoured
    assert len(requests_to(server, "GET", "/jobs/" + name + "$")) == 3  # two failures, then the answer


def test_a_create_answered_429_is_retried_and_makes_one_job(torchx, server):
    server.fail_next("POST", JOBS, (429, 1))
    handle, ns, name = submit(torchx)
    assert list(server.jobs) == [(ns, name)]
    assert len(requests_to(server, "POST", JOBS)) == 2


def test_a_create_whose_answer_is_lost_after_the_server_took_it_makes_one_job(torchx, server):
    server.fail_next("POST", JOBS, "done-then-drop")
    handle, ns, name = submit(torchx)  # the retry's 409 is recognised as this submission's own
    assert list(server.jobs) == [(ns, name)]
    assert len(requests_to(server, "POST", JOBS)) == 2
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "SUBMITTED"


def test_a_create_dropped_before_the_server_took_it_is_retried(torchx, server):
    server.fail_next("POST", JOBS, "drop")
    handle, ns, name = submit(torchx)
    assert list(server.jobs) == [(ns, name)]


def test_a_cancel_whose_answer_is_lost_is_still_one_abort(torchx, server):
    handle, ns, name = submit(torchx)
    server.set_phase(ns, name, "Running", {"echo-0": "Running"})
    torchx("cancel", handle)
    torchx("cancel", handle)  # idempotent: the job is already aborted
    assert json.loads(torchx("status", "--json", handle).stdout)["state"] == "CANCELLED"


@pytest.mark.parametrize("mode", ["clean", "drop"])
def test_a_followed_log_cut_midway_goes_on_and_reads_each_line_once(torchx, server, mode):
    handle, ns, name = submit(torchx)
    pod = f"{name}-echo-0-0"
    server.set_phase(ns, name, "Running", {"echo-0": "Running"})
    for i in range(3):
        server.add_log(ns, pod, f"line {i}")
    server.cut_log(ns, pod, 2, mode)  # after two lines (and half the third, for "drop")
    follower = subprocess.Popen([BINARY, "log", "-t", f"{handle}/echo/0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=torchx.env)
    try:
        def later():
            time.sleep(1.5)
            for i in range(3, 6):
                server.add_log(ns, pod, f"line {i}")
            time.sleep(0.5)
            server.set_phase(ns, name, "Completed", {"echo-0": "Succeeded"})
        threading.Thread(target=later).start()
        out, err = follower.communicate(timeout=60)
    finally:
        follower.kill()
    assert follower.returncode == 0, err
    assert [l.split(" ", 2)[2] for l in out.splitlines()] == [f"line {i}" for i in range(6)], out
    streams = [r for r in server.requests if r[1].endswith(f"/pods/{pod}/log") and r[2].get("follow") == "true"]
    assert len(streams) >= 2 and "sinceTime" in streams[1][2]  # asked again from the last line's second


def test_an_expired_token_is_a_clear_error_not_retried(server, pki, tmp_path):
    torchx = make_cli(tmp_path, kubeconfig(server.url, pki, "token", token="expired"))
    res = torchx("status", "kubernetes://torchx/default:x", check=False)
    assert res.returncode == 1
    assert "401" in res.stderr and "expired token?" in res.stderr
    assert len(server.requests) == 1

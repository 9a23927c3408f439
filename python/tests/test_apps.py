"""The helper apps that builtin components run, driven through the components themselves: the
AppDef comes from `torchx run --dryrun <component>`, and its role's command runs as a job would."""

import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


from torchx.runtime.tracking import FsspecResultTracker


def appdef(torchx_bin, *argv):
    out = subprocess.run([torchx_bin, "run", "--dryrun", *argv], check=True, capture_output=True, text=True).stdout
    text = out.split("=== APPLICATION ===\n", 1)[1].split("\n\n=== SCHEDULER REQUEST ===", 1)[0]
    return json.loads(text)


def run_role(app, env, timeout=60):
    role = app["roles"][0]
    cmd = [sys.executable if role["entrypoint"] == "python" else role["entrypoint"], *role["args"]]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def test_booth_writes_tracker_result(torchx_bin, app_env, tmp_path):
    base = str(tmp_path / "tracker")
    app = appdef(torchx_bin, "utils.booth", "--x1", "1", "--x2", "2.5", "--trial_idx", "4", "--tracker_base", base)
    res = run_role(app, app_env)
    assert res.returncode == 0, res.stderr
    expected = (1 + 2 * 2.5 - 7) ** 2 + (2 * 1 + 2.5 - 5) ** 2
    assert FsspecResultTracker(base)[4] == {"booth_eval": expected}
    assert json.loads((tmp_path / "tracker" / "4").read_text()) == {"booth_eval": expected}


def test_tracker_missing_key_is_empty_and_file_urls_work(tmp_path):
    t = FsspecResultTracker(f"file://{tmp_path}")
    assert t["nope"] == {}
    t["a/b"] = {"m/mean": 1.5, "m/sem": 0.1}
    assert FsspecResultTracker(str(tmp_path))["a/b"]["m/mean"] == 1.5


def test_copy_copies_bytes(torchx_bin, app_env, tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(bytes(range(256)) * 1000)
    dst = tmp_path / "out" / "dst.bin"
    res = run_role(appdef(torchx_bin, "utils.copy", "--src", str(src), "--dst", str(dst)), app_env)
    assert res.returncode == 0, res.stderr
    assert dst.read_bytes() == src.read_bytes()


def monitor_cmd(tmp_path, *extra):
    return [sys.executable, "-m", "torchx.apps.utils.process_monitor", "--poll_rate", "0.05", "--kill_timeout", "1", *extra]


def test_process_monitor_propagates_exit_code(app_env, tmp_path):
    res = subprocess.run(monitor_cmd(tmp_path, "--", sys.executable, "-c", "raise SystemExit(3)"),
                         env=app_env, capture_output=True, text=True, timeout=30)
    assert res.returncode == 3


def test_process_monitor_stops_on_exit_file(app_env, tmp_path):
    done = tmp_path / "done"
    proc = subprocess.Popen(monitor_cmd(tmp_path, "--exit_on_file", str(done), "--", "sleep", "60"),
                            env=app_env, stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    assert proc.poll() is None
    done.touch()
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "exit file found" in out


def test_process_monitor_timeout_and_start_file(app_env, tmp_path):
    start = time.monotonic()
    res = subprocess.run(monitor_cmd(tmp_path, "--timeout", "0.5", "--", "sleep", "60"),
                         env=app_env, capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and "timeout reached" in res.stdout
    assert time.monotonic() - start < 20
    res = subprocess.run(monitor_cmd(tmp_path, "--timeout", "0.3", "--start_on_file", str(tmp_path / "never"),
                                     "--", "echo", "started"), env=app_env, capture_output=True, text=True, timeout=30)
    assert "started" not in res.stdout and "timed out waiting" in res.stdout


def test_tensorboard_component_runs_under_the_monitor(torchx_bin, app_env, tmp_path):
    app = appdef(torchx_bin, "metrics.tensorboard", "--logdir", str(tmp_path), "--timeout", "0.5")
    role = app["roles"][0]
    # tensorboard itself may not be installed: swap the monitored command for a stand-in that
    # sleeps, and check the monitor stops it on the component's timeout.
    sep = role["args"].index("--")
    args = role["args"][:sep + 1] + ["sleep", "60"]
    res = subprocess.run([sys.executable, *args], env=app_env, capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and "timeout reached" in res.stdout


class _FakeManagementApi(BaseHTTPRequestHandler):
    registered = {}

    def do_POST(self):  # noqa: N802 (http.server naming)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        url = query["url"][0]
        with urllib.request.urlopen(url, timeout=10) as resp:  # TorchServe downloads the archive
            type(self).registered = {"body": resp.read(), "query": query}
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"status": "registered"}')

    def log_message(self, *args):
        pass


def test_torchserve_serves_and_registers(torchx_bin, app_env, tmp_path):
    mar = tmp_path / "m.mar"
    mar.write_bytes(b"model-archive-bytes")
    api = ThreadingHTTPServer(("127.0.0.1", 0), _FakeManagementApi)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{api.server_address[1]}"
        app = appdef(torchx_bin, "serve.torchserve", "--model_path", str(mar), "--management_api", url,
                     "--params", "model_name=mymodel,initial_workers=2")
        role = app["roles"][0]
        res = subprocess.run([sys.executable, *role["args"], "--port", "0"], env=app_env,
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        assert _FakeManagementApi.registered["body"] == b"model-archive-bytes"
        assert _FakeManagementApi.registered["query"]["initial_workers"] == ["2"]
        assert _FakeManagementApi.registered["query"]["model_name"] == ["mymodel"]
    finally:
        api.shutdown()
        api.server_close()


def test_torchserve_dryrun(torchx_bin, app_env):
    app = appdef(torchx_bin, "serve.torchserve", "--model_path", "x", "--management_api", "http://127.0.0.1:1", "--dryrun", "true")
    res = run_role(app, app_env)
    assert res.returncode == 0 and "dry run" in res.stdout

#!/usr/bin/env python3
"""Every benchmark of this project against both reference TorchX installs, in one run, with ratios.

Ours is what `pip install .` installed for the interpreter running this script (its `torchx` CLI,
supervisor and Python package); the references are PyPI's `torchx` (0.7.0) and `torchx-nightly`
(TorchX HEAD), each in its own virtual env made by bench/setup_reference.sh. The release build
provides two helpers only: a raw spawn+wait loop (the floor for fan-out) and a store filler.

    bash scripts/build-python.sh && bench/setup_reference.sh
    cmake --preset release && cmake --build --preset release --target raw_spawn populate_store peak_rss sweep_record
    bash scripts/engines/slurm-up.sh       # optional: the Slurm rows need a cluster
    python3 bench/bench.py [--markdown out.md] [--quick]

Benchmarks, not tests: nothing asserts. Each row prints the goal of issue 17 and whether it holds.
"""

import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
HELPERS = REPO / "build" / "release" / "bench"
REFS = {"0.7.0": REPO / ".venv-torchx-ref", "nightly": REPO / ".venv-torchx-nightly"}
# Ours in a venv like the references' (torch and numpy installed): the Python rows run there.
TORCH_VENV = REPO / ".venv-bench-torch"


def spread(samples):
    """(low, high) of repeated measurements: the 10th and 90th percentiles from 10 runs up, else
    the least and the most."""
    s = sorted(samples)
    if len(s) < 10:
        return s[0], s[-1]
    return s[len(s) // 10], s[(len(s) * 9) // 10]


def ours_in_torch_venv():
    """TORCH_VENV's interpreter with the package installed for this interpreter (the wheel or `pip install .`)
    linked into its site-packages (the package directory and its dist-info, as pip lays them out),
    so that it runs exactly what the other rows run; None when setup_reference.sh has not made it."""
    python = TORCH_VENV / "bin" / "python"
    if not python.exists():
        return None
    import torchx
    package = pathlib.Path(torchx.__file__).resolve().parent
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       capture_output=True, text=True, check=True).stdout.strip())
    for old in [*site.glob("torchx"), *site.glob("torchx.libs"), *site.glob("torchx-*.dist-info")]:
        if old.is_symlink() or old.is_file():
            old.unlink()
        else:
            shutil.rmtree(old)
    # torchx.libs: the libraries a wheel carries, which its objects find beside the package.
    for src in [package, *package.parent.glob("torchx.libs"), *package.parent.glob("torchx-*.dist-info")]:
        (site / src.name).symlink_to(src)
    return str(python)


class Bench:
    def __init__(self, ours_cli, quick):
        self.ours = str(ours_cli)
        self.ours_python = ours_in_torch_venv() or sys.executable
        self.refs = {k: v for k, v in REFS.items() if (v / "bin" / "torchx").exists()}
        self.spread = None  # (low, high) seconds of the last timeit
        self.quick = quick
        self.rows = []
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="torchx-bench-"))
        self.env = dict(os.environ, TORCHX_STATE_DIR=str(self.tmp / "state"), LOGLEVEL="WARNING")

    def n(self, full):
        return max(3, full // 5) if self.quick else full

    def ref_cli(self, ref):
        return str(self.refs[ref] / "bin" / "torchx")

    def ref_python(self, ref):
        return str(self.refs[ref] / "bin" / "python")

    # --- measuring -------------------------------------------------------------------------
    def timeit(self, cmd, n, env=None, cwd=None, check=True):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            res = subprocess.run(cmd, env=env or self.env, cwd=cwd or self.tmp, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            times.append(time.perf_counter() - t)
            if res.returncode != 0:
                if not check:
                    return None
                raise RuntimeError(f"{cmd} failed: {res.stderr.decode()[-2000:]}")
        self.spread = spread(times)
        return statistics.median(times)

    def spread_of(self, scale=1000):
        """The last timeit's spread, scaled like its median (default: ms)."""
        return (self.spread[0] * scale, self.spread[1] * scale)

    def peak_rss_kib(self, cmd):
        """Peak RSS of `cmd` (KiB), started by the small peak_rss helper (see peak_rss.cc for why)."""
        out = subprocess.run([str(HELPERS / "peak_rss"), *cmd], env=self.env, cwd=self.tmp, capture_output=True,
                             text=True, check=True)
        return int(out.stdout)

    def row(self, name, ours, unit, peers, goal, met, spread=None):
        """peers: {ref: value}; values in `unit` ("ms", "MiB", "x" ...); spread: ours' (low, high)."""
        self.rows.append((name, ours, unit, peers, goal, met, spread))

    # --- the benchmarks ----------------------------------------------------------------------
    def cli(self):
        ms = 1000
        ours = self.timeit([self.ours, "--version"], self.n(30)) * ms
        sp = self.spread_of()
        peers = {r: self.timeit([self.ref_cli(r), "--version"], self.n(5), check=False) for r in self.refs}
        self.row("`torchx --version`", ours, "ms", {r: v * ms for r, v in peers.items() if v}, "<= 2 ms", ours <= 2, sp)

        dry = ["run", "--dryrun", "-s", "local_cwd", "utils.echo", "--msg", "hi"]
        ours = self.timeit([self.ours, *dry], self.n(30)) * ms
        sp = self.spread_of()
        peers = {r: self.timeit([self.ref_cli(r), *dry], self.n(5)) * ms for r in self.refs}
        ref = peers.get("0.7.0")
        self.row("CLI dry run, `utils.echo`", ours, "ms", peers, "<= 1/200 of 0.7.0", bool(ref) and ours <= ref / 200, sp)

        k8s = ["run", "--dryrun", "-s", "kubernetes", "-cfg", "queue=default", "dist.ddp", "-j", "4x8", "--script",
               "train.py"]
        ours = self.timeit([self.ours, *k8s], self.n(30)) * ms
        # The references build an image of the current directory unless the workspace is empty, and
        # HEAD asks the API server to validate the spec unless told not to (0.7.0 ignores the option).
        ref_k8s = [k8s[0], "--workspace", "", *k8s[1:]]
        ref_k8s[ref_k8s.index("queue=default")] = "queue=default,validate_spec=False"
        peers = {r: self.timeit([self.ref_cli(r), *ref_k8s], self.n(5), check=False) for r in self.refs}
        self.row("kubernetes dry run, `dist.ddp -j 4x8`", ours, "ms", {r: v * ms for r, v in peers.items() if v},
                 "(informative)", None)

        rss = self.peak_rss_kib([self.ours, *dry]) / 1024
        peers = {r: self.peak_rss_kib([self.ref_cli(r), *dry]) / 1024 for r in self.refs}
        ref = min(peers.values()) if peers else None
        self.row("CLI peak RSS, dry run", rss, "MiB", peers, "<= 1/2 of TorchX's", bool(ref) and rss <= ref / 2)

    def store(self):
        store = self.tmp / "store10k"
        subprocess.run([str(HELPERS / "populate_store"), str(store), "10000"], check=True)
        env = dict(self.env, TORCHX_STATE_DIR=str(store))
        ours = self.timeit([self.ours, "status", "local_cwd://torchx/bench-5000"], self.n(30), env) * 1000
        self.row("status, 10,000 apps recorded", ours, "ms", {}, "<= 3 ms (TorchX keeps no local state)", ours <= 3,
                 self.spread_of())
        ours = self.timeit([self.ours, "list", "-s", "local_cwd"], self.n(10), env) * 1000
        self.row("list, 10,000 apps recorded", ours, "ms", {}, "<= 50 ms (TorchX's local list raises)", ours <= 50,
                 self.spread_of())

    def ui(self):
        """`torchx ui` over 10,000 recorded apps: the apps page's API call, and (with chromium and
        selenium) the page in a headless browser until its first 50 rows show. `torchx list` of the
        same store, timed in the same run, is shown beside it."""
        import http.client
        import urllib.parse
        store = self.tmp / "store10k-ui"
        subprocess.run([str(HELPERS / "populate_store"), str(store), "10000"], check=True)
        # and a 1,000-trial sweep's record (issue 56: one row of the page, its trials paged)
        subprocess.run([str(HELPERS / "sweep_record"), str(store), "1000", "50"], check=True,
                       stdout=subprocess.DEVNULL)
        env = dict(self.env, TORCHX_STATE_DIR=str(store))
        listed = self.timeit([self.ours, "list", "-s", "local_cwd"], self.n(10), env) * 1000
        proc, url = self._start_ui([], env, self.tmp)
        try:
            parsed = urllib.parse.urlparse(url)
            times = []
            for _ in range(self.n(10)):
                t = time.perf_counter()
                conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
                conn.request("GET", "/api/v1/apps?limit=50")
                body = json.loads(conn.getresponse().read())
                conn.close()
                times.append(time.perf_counter() - t)
                assert body["total"] == 10001 and len(body["apps"]) == 50
            api = statistics.median(times) * 1000
            self.row(f"ui: GET /api/v1/apps, first 50 of 10,000 and a 1,000-trial sweep (`torchx list` of the "
                     f"same store: {listed:.0f} ms)", api, "ms", {}, "<= 1 s (issue 18)", api <= 1000)
            shown = self._ui_page_ms(url)
            if shown is not None:
                page, height, expand = shown
                self.row(f"ui: apps page rendered in Chromium at 1280x800 (10,000 apps and a 1,000-trial sweep as "
                         f"one row; the page {height} px tall)", page, "ms", {}, "<= 1 s (issue 18), < 3,000 px",
                         page <= 1000 and height < 3000)
                self.row("ui: the sweep's row expanded in Chromium, its first 50 trials shown", expand, "ms", {},
                         "<= 500 ms", expand <= 500)
        finally:
            proc.terminate()
            proc.wait(timeout=15)

    def dashboard(self):
        """`torchx ui` at the size users run (issue 57): 10,000 recorded apps, a 1,000-trial sweep
        that ran, and 100 apps running (bench/dashboard_scale.py has the clients)."""
        import dashboard_scale as ds
        state = self.tmp / "dash-state"
        subprocess.run([str(HELPERS / "populate_store"), str(state), "10000"], check=True)
        env = dict(self.env, TORCHX_STATE_DIR=str(state))
        cwd = self.tmp / "dash"
        cwd.mkdir(mode=0o700)

        def ours(*args):
            return subprocess.run([self.ours, *args], env=env, cwd=cwd, capture_output=True, text=True,
                                  check=True).stdout.split()[0]

        t = time.perf_counter()
        sweep = ours("sweep", "run", "--wait", "--max_parallel", "32", "-p",
                     f"i={','.join(str(i) for i in range(1000))}", "utils.sh", "true", "@{i}")
        print(f"[dashboard: a 1,000-trial sweep ran in {time.perf_counter() - t:.0f} s]", file=sys.stderr, flush=True)
        running = [ours("run", "-s", "local_cwd", "utils.sh", "sleep", "600") for _ in range(100)]
        proc, url = self._start_ui([], env, cwd)
        port = int(url.rsplit(":", 1)[1].strip("/"))
        try:
            # Fresh: 1.1 s apart, each answer listed anew (what one user alone waits); shared:
            # back to back, within the server's 1 s shared listing (what a busy dashboard's users wait).
            api = ds.median_get_ms(port, "/api/v1/apps?limit=50", 20, apart=1.1)
            shared = ds.median_get_ms(port, "/api/v1/apps?limit=50", 20)
            self.row("ui: GET /api/v1/apps?limit=50 over 10,000 apps, a 1,000-trial sweep and 100 running "
                     f"(median of 20, each listed afresh; within a shared listing: {shared:.1f} ms)", api, "ms", {},
                     "<= 30 ms", api <= 30)
            page = ds.median_get_ms(port, ds.app_path(sweep), 20, apart=1.1)
            shared = ds.median_get_ms(port, ds.app_path(sweep), 20)
            self.row(f"ui: the 1,000-trial sweep's page document (median of 20, each built afresh; shared: "
                     f"{shared:.1f} ms)", page, "ms", {}, "<= 100 ms", page <= 100)
            share, events = ds.event_stream_cpu(port, proc.pid, 20)
            self.row(f"ui: server CPU while a page holds the apps event stream open, 100 apps running "
                     f"(20 s, {events} events)", share, "% of a core", {}, "<= 2% of a core", share <= 2)
            paths = ["/api/v1/apps?limit=50", ds.app_path(running[0]), ds.app_path(sweep),
                     "/api/v1/apps?limit=50&state=RUNNING", ds.app_path("local_cwd://torchx/bench-4321"),
                     "/api/v1/apps?limit=50&offset=5000"]
            latencies, failures = ds.clients_load(port, paths, clients=50, seconds=60, period=1.0)
            worst = ds.p99(latencies)
            self.row(f"ui: 50 clients for 60 s, each an open page (its event stream) and a request a second "
                     f"over keep-alive "
                     f"({len(latencies)} answered, {len(failures)} failed, median "
                     f"{statistics.median(latencies) if latencies else float('nan'):.1f} ms): p99", worst, "ms", {},
                     "<= 100 ms, none failed", worst <= 100 and not failures)
        finally:
            proc.terminate()
            proc.wait(timeout=15)
            for handle in running:
                subprocess.run([self.ours, "cancel", handle], env=env, cwd=cwd, capture_output=True)

    def _start_ui(self, args, env, cwd):
        """`torchx ui ARGS` on a free loopback port: the process and the URL it prints."""
        import re
        proc = subprocess.Popen([self.ours, "ui", *args, "--port", "0", "--token_file", str(cwd / "ui-token")],
                                env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        while True:
            line = proc.stdout.readline()
            if not line:
                proc.kill()
                raise RuntimeError("torchx ui did not start")
            m = re.search(r"open (http://\S+)", line)
            if m:
                return proc, m.group(1)

    def _ui_page_ms(self, url):
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.service import Service
            from selenium.webdriver.common.by import By
            from selenium.webdriver.support.ui import WebDriverWait
        except ImportError:
            return None
        chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
        if not (chromium and driver_bin):
            return None
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800",
                    f"--user-data-dir={self.tmp / 'chromium'}"):
            opts.add_argument(arg)
        driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
        def shown(d):
            count = d.find_elements(By.ID, "apps-count")
            return bool(count) and "of 10001" in count[0].text

        def trials(d):
            return len(d.find_elements(By.CSS_SELECTOR, "tr.member[data-step]")) == 50

        try:
            times, expands = [], []
            for _ in range(self.n(5)):
                driver.get("about:blank")
                t = time.perf_counter()
                driver.get(url)
                WebDriverWait(driver, 30, poll_frequency=0.01).until(shown)
                times.append(time.perf_counter() - t)
                height = driver.execute_script("return document.documentElement.scrollHeight")
                t = time.perf_counter()
                driver.find_element(By.CSS_SELECTOR, 'tr[data-handle="sweep://torchx/bench-sweep"] button.expand').click()
                WebDriverWait(driver, 30, poll_frequency=0.01).until(trials)
                expands.append(time.perf_counter() - t)
            return statistics.median(times) * 1000, height, statistics.median(expands) * 1000
        finally:
            driver.quit()

    def python(self):
        """Python rows, each interpreter in a venv with torch and numpy (setup_reference.sh): ours in
        .venv-bench-torch, TorchX in its reference venvs."""
        def interpreter_ms(python, code, n):
            base, full = [], []
            for _ in range(n):  # interleaved with the bare interpreter, so both see the same machine
                for out, c in ((base, "pass"), (full, code)):
                    t = time.perf_counter()
                    subprocess.run([python, "-c", c], check=True, stdout=subprocess.DEVNULL)
                    out.append(time.perf_counter() - t)
            b = statistics.median(base)
            lo, hi = spread(full)
            return (statistics.median(full) - b) * 1000, ((lo - b) * 1000, (hi - b) * 1000)

        where = "venvs with torch" if self.ours_python != sys.executable else "ours without a torch venv"
        ours, s = interpreter_ms(self.ours_python, "import torchx", self.n(30))
        peers = {r: interpreter_ms(self.ref_python(r), "import torchx", self.n(20))[0] for r in self.refs}
        self.row(f"`import torchx` over the interpreter ({where})", ours, "ms", peers, "<= 20 ms (issue 5)",
                 ours <= 20, s)

        code = "import torchx.runner, torchx.specs"
        ours, s = interpreter_ms(self.ours_python, code, self.n(30))
        peers = {r: interpreter_ms(self.ref_python(r), code, self.n(20))[0] for r in self.refs}
        self.row(f"`import torchx.runner, torchx.specs` over the interpreter ({where})", ours, "ms", peers,
                 "<= 1/4 of TorchX's", bool(peers) and all(ours <= p / 4 for p in peers.values()), s)

        snippet = RUN_SNIPPET
        ours, s = self.run_stats(self.ours_python, snippet, self.n(50), "ours")
        peers = {r: self.run_stats(self.ref_python(r), snippet, self.n(20), r)[0] for r in self.refs}
        ref = peers.get("0.7.0")
        self.row("Python `get_runner().run(app)`, local_cwd", ours, "ms", peers, "<= 0.7.0's",
                 bool(ref) and ours <= ref, s)

    def run_stats(self, python, snippet, n, tag):
        env = dict(self.env, TORCHX_STATE_DIR=str(self.tmp / f"py-{tag}"))
        out = subprocess.run([python, "-c", snippet, str(n)], env=env, cwd=self.tmp, check=True, capture_output=True,
                             text=True)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        return res["run"] * 1000, (res["low"] * 1000, res["high"] * 1000)

    def fanout(self):
        n = 500
        fan = [self.ours, "run", "--wait", "-s", "local_cwd", "utils.binary", "--entrypoint", "true", "--num_replicas",
               str(n)]
        shm = pathlib.Path("/dev/shm")
        for where, base in (("disk", self.tmp), ("tmpfs", shm if shm.is_dir() else self.tmp)):
            d = pathlib.Path(tempfile.mkdtemp(prefix="torchx-fan-", dir=base))
            env = dict(self.env, TORCHX_STATE_DIR=str(d / "state"))
            raws, ours = [], []
            for _ in range(self.n(7)):  # interleaved, so both see the same machine
                raws.append(self.timeit([str(HELPERS / "raw_spawn"), str(n), "true"], 1))
                ours.append(self.timeit(fan, 1, env))
                shutil.rmtree(d / "state" / "logs", ignore_errors=True)
            shutil.rmtree(d, ignore_errors=True)
            raw, our = statistics.median(raws), statistics.median(ours)
            goal = "<= 1.5x raw" if where == "disk" else "(informative)"
            lo, hi = spread(ours)
            self.row(f"{n}-replica fan-out of `true`, `run --wait` ({where}), x raw spawn+wait ({raw * 1000:.0f} ms)",
                     our / raw, "x", {}, goal, our <= 1.5 * raw if where == "disk" else None, (lo / raw, hi / raw))
        peers = {}
        for r in self.refs:
            t = self.timeit([self.ref_cli(r), "run", "-s", "local_cwd", "utils.binary", "--entrypoint", "true",
                             "--num_replicas", str(n)], 1, check=False)
            if t:
                peers[r] = t * 1000
        ours = self.timeit(fan, 1) * 1000
        self.row(f"{n}-replica fan-out, ours (disk) against TorchX's `run` (which does not wait)", ours, "ms", peers,
                 "(informative)", None)

    def logs(self):
        size = (256 if self.quick else 1024) * 1024 * 1024
        line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"
        gen = f"yes {line} | head -c {size}"
        out = subprocess.run([self.ours, "run", "--wait", "-s", "local_cwd", "utils.sh", "sh", "-c", gen],
                             env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
        handle = out.stdout.split()[0]
        app_dir = self.tmp / "state" / "logs" / "torchx" / handle.rsplit("/", 1)[1]
        combined = app_dir / "sh" / "0" / "combined.log"
        cats, ours = [], []
        for _ in range(self.n(7)):  # interleaved, so both see the same machine
            cats.append(self.timeit(["cat", str(combined)], 1))
            ours.append(self.timeit([self.ours, "log", handle], 1))
        cat, our = statistics.median(cats), statistics.median(ours)
        mib = size / 2**20
        lo, hi = spread(ours)
        self.row(f"`torchx log` of a {mib:.0f} MiB log (prefixed), throughput x `cat` ({mib / cat:.0f} MiB/s)",
                 cat / our, "x", {}, ">= 0.5x cat", cat / our >= 0.5, (cat / hi, cat / lo))
        subprocess.run([self.ours, "delete", handle], env=self.env, check=True, capture_output=True)

        # run --log: each line stamped when written, read back as the CLI prints it.
        prog = "import time,sys\nfor i in range(40):\n print(repr(time.time()), flush=True); time.sleep(0.05)\n"
        (self.tmp / "stamp.py").write_text(prog)
        proc = subprocess.Popen([self.ours, "run", "--log", "-s", "local_cwd", "utils.python", "--script",
                                 str(self.tmp / "stamp.py")], env=self.env, cwd=self.tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        delays = []
        for text in proc.stdout:
            stamp = text.rsplit(" ", 1)[-1].strip()
            try:
                delays.append(time.time() - float(stamp))
            except ValueError:
                pass  # the handle and state lines
        proc.wait()
        worst = max(delays) * 1000 if delays else float("nan")
        self.row(f"`run --log`: worst delay of {len(delays)} lines from write to print "
                 f"(median {statistics.median(delays) * 1000:.1f} ms)" if delays else "`run --log` delay",
                 worst, "ms", {}, "<= 50 ms", worst <= 50)
        self._run_log_first_line()

    def _run_log_first_line(self):
        """From `torchx run --log` to the replica's first line on local_cwd, against the same
        `python3 -c 'print(...)'` run directly (issue 57: at most 20 ms more). Interleaved."""
        python = shutil.which("python3")
        code = "print('first-line', flush=True)"

        def first_line(cmd):
            t = time.perf_counter()
            proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True)
            took = None
            for line in proc.stdout:
                if line.rstrip().endswith("first-line"):
                    took = time.perf_counter() - t
                    break
            proc.stdout.close()
            proc.wait()
            if took is None:
                raise RuntimeError(f"{cmd}: no first line")
            return took * 1000

        direct, ours = [], []
        for _ in range(self.n(20)):
            direct.append(first_line([python, "-c", code]))
            ours.append(first_line([self.ours, "run", "--log", "-s", "local_cwd", "utils.sh", python, "-c", code]))
        d, o = statistics.median(direct), statistics.median(ours)
        self.row(f"`run --log` to the replica's first line, local_cwd (`python3 -c 'print()'` alone: {d:.1f} ms)", o,
                 "ms", {}, "<= 20 ms over python3 alone", o - d <= 20, spread(ours))

    def supervisor_memory(self):
        for n in (1, 100):
            out = subprocess.run([self.ours, "run", "-s", "local_cwd", "utils.binary", "--entrypoint", "sleep",
                                  "--num_replicas", str(n), "3"], env=self.env, cwd=self.tmp, capture_output=True,
                                 text=True, check=True)
            app_id = out.stdout.split()[0].rsplit("/", 1)[1]
            time.sleep(1.0)
            pids = subprocess.run(["pgrep", "-f", f"torchx-supervisor .* {app_id}$"], capture_output=True,
                                  text=True).stdout.split()
            rss = max(_rss_kib(int(p)) for p in pids) / 1024 if pids else float("nan")
            subprocess.run([self.ours, "cancel", f"local_cwd://torchx/{app_id}"], env=self.env, capture_output=True)
            limit = 5 + n * 10 / 1024
            self.row(f"supervisor RSS, {n} replica(s) running", rss, "MiB", {}, f"<= {limit:.2f} MiB", rss <= limit)

    def sampling(self):
        """The supervisor's CPU for resource sampling: 100 replicas, sampled every 0.5 s for 10 s
        (20 samples), against the same app with sampling off; the difference per sample, at one
        sample per 5 s (the default), as a share of one core."""
        ticks = os.sysconf("SC_CLK_TCK")
        cpu = {}
        for interval in ("0.5", "0.0"):
            out = subprocess.run([self.ours, "run", "-s", "local_cwd", "-cfg", f"resource_interval={interval}",
                                  "utils.binary", "--entrypoint", "sleep", "--num_replicas", "100", "30"],
                                 env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
            app_id = out.stdout.split()[0].rsplit("/", 1)[1]
            time.sleep(1.5)  # started, and the first sample taken
            pids = subprocess.run(["pgrep", "-f", f"torchx-supervisor .* {app_id}$"], capture_output=True,
                                  text=True).stdout.split()
            # The supervisor is the parent of the replicas (its watchdog has the same command line).
            sup = max(pids, key=lambda p: len(subprocess.run(["pgrep", "-P", p], capture_output=True,
                                                             text=True).stdout.split()))

            def used(pid=sup):
                fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / ticks

            start = used()
            time.sleep(10)
            cpu[interval] = used() - start
            subprocess.run([self.ours, "cancel", f"local_cwd://torchx/{app_id}"], env=self.env, capture_output=True)
        per_sample = max(0.0, cpu["0.5"] - cpu["0.0"]) / 20
        share = per_sample / 5 * 100
        self.row("resource sampling, 100 replicas every 5 s (supervisor CPU)", share, "% of a core", {},
                 "< 1% of a core", share < 1)

    def slurm(self):
        if shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
            self.row("Slurm rows", float("nan"), "", {}, "skipped: no Slurm cluster (scripts/engines/slurm-up.sh)", None)
            return
        dry = ["run", "--dryrun", "-s", "slurm", "utils.echo", "--num_replicas", "256"]
        ours = self.timeit([self.ours, *dry], self.n(10)) * 1000
        peers = {r: self.timeit([self.ref_cli(r), *dry], self.n(3), check=False) for r in self.refs}
        self.row("Slurm: dry run of 256 replicas", ours, "ms", {r: v * 1000 for r, v in peers.items() if v},
                 "(informative)", None)
        self._slurm_run_against_sbatch()
        ids = []
        try:
            for _ in range(1000):  # held: queued, never started
                out = subprocess.run(["sbatch", "--parsable", "--hold", "--job-name=bench-0", "--wrap", "true"],
                                     cwd=self.tmp, capture_output=True, text=True, check=True)
                ids.append(out.stdout.strip())
            for name, args in (("status of one job, 1,000 queued", ["status", f"slurm://torchx/{ids[500]}"]),
                               ("list, 1,000 queued", ["list", "-s", "slurm"])):
                ours = self.timeit([self.ours, *args], self.n(10)) * 1000
                peers = {r: self.timeit([self.ref_cli(r), *args], self.n(5), check=False) for r in self.refs}
                peers = {r: v * 1000 for r, v in peers.items() if v}
                self.row(f"Slurm: {name}", ours, "ms", peers, "<= TorchX's",
                         bool(peers) and all(ours <= p for p in peers.values()))
        finally:
            for i in range(0, len(ids), 200):
                subprocess.run(["scancel", *ids[i:i + 200]], capture_output=True)

    def _slurm_run_against_sbatch(self):
        """`torchx run -s slurm` of a one-replica job against a bare `sbatch` of the script it submits
        (issue 57: at most 10 ms over it). Each job is cancelled as soon as it is timed."""
        def timed(cmd):
            times = []
            for _ in range(self.n(20)):
                t = time.perf_counter()
                out = subprocess.run(cmd, env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
                times.append(time.perf_counter() - t)
                subprocess.run(["scancel", out.stdout.strip().split()[0].rsplit("/", 1)[-1].split(";")[0]],
                               capture_output=True)
            return statistics.median(times) * 1000

        dry = subprocess.run([self.ours, "run", "--dryrun", "-s", "slurm", "utils.sh", "true"], env=self.env,
                             cwd=self.tmp, capture_output=True, text=True, check=True).stdout
        script = self.tmp / "bench-sbatch.sh"
        script.write_text(dry[dry.index("#!/bin/bash"):])
        ours = timed([self.ours, "run", "-s", "slurm", "utils.sh", "true"])
        bare = timed(["sbatch", "--parsable", str(script)])
        self.row(f"Slurm: `torchx run -s slurm` of one replica (a bare sbatch of its script: {bare:.1f} ms)", ours,
                 "ms", {}, "<= 10 ms over the bare sbatch", ours - bare <= 10)

    def slurm_reads(self, jobs=500, window=20.0):
        if shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
            self.row("Slurm reads", float("nan"), "", {}, "skipped: no Slurm cluster (scripts/engines/slurm-up.sh)", None)
            return
        self._slurm_reads(jobs, window)

    def _slurm_reads(self, jobs, window):
        """Slurm at scale (issue 57): `jobs` of the user's jobs held in the queue, followed at once
        by a sweep driver, a managed driver, the dashboard (its apps list every second) and a loop
        of `torchx status`, for `window` seconds: squeue, sacct and scontrol calls per refresh
        interval (2 s), all processes together, counted by wrappers on PATH. TorchX runs one
        squeue per status: the status calls of the loop are its figure."""
        import http.client
        import random
        import threading
        import urllib.parse
        work = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        bin_dir, log, run_dir = work / "bin", work / "calls.log", work / "run"
        bin_dir.mkdir()
        run_dir.mkdir(mode=0o700)
        for tool in ("squeue", "sacct", "scontrol"):
            (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool}" >> {log}\nexec {shutil.which(tool)} "$@"\n')
            (bin_dir / tool).chmod(0o755)
        env = dict(self.env, PATH=f"{bin_dir}:{self.env.get('PATH', os.environ['PATH'])}", XDG_RUNTIME_DIR=str(run_dir))
        ids, procs, handles = [], [], []
        stop = threading.Event()
        statuses = [0]
        try:
            for _ in range(jobs):  # held: queued, never started
                out = subprocess.run(["sbatch", "--parsable", "--hold", "--job-name=bench-0", "--wrap", "true"],
                                     cwd=work, capture_output=True, text=True, check=True)
                ids.append(out.stdout.strip())
            sweep = subprocess.run([self.ours, "sweep", "run", "-s", "slurm", "--max_parallel", "2", "-p",
                                    "i=0,1,2,3", "utils.sh", "sleep", "120", "@{i}"],
                                   env=env, cwd=work, capture_output=True, text=True, check=True)
            handles.append(sweep.stdout.split()[0])
            managed = subprocess.run([self.ours, "run", "--managed", "-s", "slurm", "utils.sh", "sleep", "120"],
                                     env=env, cwd=work, capture_output=True, text=True, check=True)
            handles.append(managed.stdout.split()[0])
            ui, url = self._start_ui(["-s", "slurm"], env, work)
            procs.append(ui)
            parsed = urllib.parse.urlparse(url)

            listed = [0]

            def dashboard():
                while not stop.is_set():
                    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
                    conn.request("GET", "/api/v1/apps?limit=50&scheduler=slurm")
                    body = json.loads(conn.getresponse().read())
                    conn.close()
                    listed[0] = body.get("total", 0)
                    stop.wait(1)

            def status_loop():
                while not stop.is_set():
                    subprocess.run([self.ours, "status", f"slurm://torchx/{random.choice(ids)}"], env=env, cwd=work,
                                   capture_output=True)
                    statuses[0] += 1

            threads = [threading.Thread(target=f) for f in (dashboard, status_loop)]
            for t in threads:
                t.start()
            time.sleep(5)  # every follower running
            log.unlink(missing_ok=True)
            statuses[0] = 0
            time.sleep(window)
            lines = log.read_text().split() if log.exists() else []
            status_calls = statuses[0]
            stop.set()
            for t in threads:
                t.join(timeout=120)
        finally:
            stop.set()
            for h in handles:
                subprocess.run([self.ours, "cancel", h], env=env, cwd=work, capture_output=True)
            for p in procs:
                p.terminate()
                p.wait(timeout=15)
            for i in range(0, len(ids), 200):
                subprocess.run(["scancel", *ids[i:i + 200]], capture_output=True)
        if listed[0] < jobs:
            raise RuntimeError(f"the dashboard listed {listed[0]} Slurm apps, not the {jobs} queued")
        intervals = window / 2
        per = {tool: lines.count(tool) / intervals for tool in ("squeue", "sacct", "scontrol")}
        followers = "a sweep driver, a managed driver, the dashboard and a status loop"
        self.row(f"Slurm: squeue calls per 2 s interval, {jobs} jobs followed by {followers} "
                 f"(sacct {per['sacct']:.1f}, scontrol {per['scontrol']:.1f} per interval; TorchX runs one squeue "
                 f"per status: {status_calls / intervals:.1f} per interval from the loop alone)", per["squeue"],
                 "calls", {}, "<= 1 squeue and <= 1 sacct per interval", per["squeue"] <= 1 and per["sacct"] <= 1)

    @staticmethod
    def _driver_hwm_kib(handle):
        """The peak RSS (VmHWM) of composite `handle`'s driver processes now, the largest (0: none)."""
        composite_id = handle.rsplit("/", 1)[1].encode()
        peak = 0
        for pid in os.listdir("/proc"):
            try:
                argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if argv[0].endswith(b"torchx-composite-driver") and composite_id in argv:
                    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
            except (OSError, IndexError):
                continue
        return peak

    def _driver_peak_rss_kib(self, handle):
        """Waits for sweep `handle` to end, sampling its driver's peak RSS (VmHWM) while it lives."""
        peak = 0
        while True:
            peak = max(peak, self._driver_hwm_kib(handle))
            state = json.loads(subprocess.run([self.ours, "status", "--json", handle], env=self.env, cwd=self.tmp,
                                              capture_output=True, text=True, check=True).stdout)["state"]
            if state in ("SUCCEEDED", "FAILED", "CANCELLED"):
                return peak
            time.sleep(0.2)

    def sweep_driver_at_scale(self, trials, parallel):
        """The driver of a `trials`-trial local sweep once `parallel` trials run: it has read the
        record, claimed, submitted and recorded them, and turns over the rest (issue 51: under
        16 MiB at 10,000 trials). The trials sleep; the sweep is cancelled after."""
        values = ",".join(str(i) for i in range(trials))
        out = subprocess.run([self.ours, "sweep", "run", "--max_parallel", str(parallel), "-p", f"i={values}",
                              "utils.sh", "sleep", "600", "@{i}"], env=self.env, cwd=self.tmp, capture_output=True,
                             text=True, check=True)
        handle = out.stdout.split()[0]
        peak = 0
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                peak = max(peak, self._driver_hwm_kib(handle))
                view = json.loads(subprocess.run([self.ours, "sweep", "status", "--json", handle], env=self.env,
                                                 cwd=self.tmp, capture_output=True, text=True, check=True).stdout)
                if sum(t["state"] == "RUNNING" for t in view["trials"]) >= parallel:
                    break
                time.sleep(0.5)
            time.sleep(3)  # idle turns over the whole record
            peak = max(peak, self._driver_hwm_kib(handle))
        finally:
            subprocess.run([self.ours, "cancel", handle], env=self.env, cwd=self.tmp, capture_output=True)
        mib = peak / 1024
        self.row(f"sweep driver peak RSS, {trials:,} local trials, {parallel} running", mib, "MiB", {}, "< 16 MiB",
                 0 < mib < 16)

    def sweep_record_at_scale(self, trials, parallel):
        """A 10,000-trial sweep's record as its driver writes it (sweep_record.cc: each trial
        claimed, recorded, ended with a metric, `parallel` at a time; no trial run), then read by
        `sweep status` (issue 51: a change to one trial is a line, not the record)."""
        out = json.loads(subprocess.run([str(HELPERS / "sweep_record"), str(self.tmp / "state"), str(trials),
                                         str(parallel)], env=self.env, capture_output=True, text=True,
                                        check=True).stdout)
        mib = out["record_bytes"] / 2**20
        self.row(f"sweep record on disk, {trials:,} trials ended", mib, "MiB", {}, "< 3 MiB", mib < 3)
        written = out["written_bytes"] / 2**20
        self.row(f"bytes the store wrote for {trials:,} trials' {out['updates']:,} updates "
                 f"({out['seconds']:.1f} s)", written, "MiB", {}, "< 20x the record", written < 20 * mib)
        rss = out["peak_rss_kib"] / 1024
        self.row(f"record store's peak RSS, {trials:,} trials (the driver's share)", rss, "MiB", {}, "< 16 MiB",
                 rss < 16)
        ms = self.timeit([self.ours, "sweep", "status", "sweep://torchx/bench-sweep"], self.n(20)) * 1000
        self.row(f"`sweep status`, {trials:,} trials", ms, "ms", {}, "< 100 ms", ms < 100)

    def _sweep_refill(self):
        """How soon a sweep fills the slots its trials free: 39 trials of 0.1 s beside one of 30 s,
        4 at a time, on local_cwd (the driver is woken by whichever running trial ends; it used to
        wait on the first one, 1 s at a time). The floor is 13 rounds of a 0.1 s trial."""
        d = ",".join(["30"] + ["0.1"] * 39)
        t0 = time.perf_counter()
        handle = subprocess.run([self.ours, "sweep", "run", "--max_parallel", "4", "-p", f"d={d}", "utils.sh",
                                 "sleep", "@{d}"], env=self.env, cwd=self.tmp, capture_output=True, text=True,
                                check=True).stdout.split()[0]
        try:
            while True:
                view = json.loads(subprocess.run([self.ours, "sweep", "status", "--json", handle], env=self.env,
                                                 cwd=self.tmp, capture_output=True, text=True, check=True).stdout)
                if sum(1 for t in view["trials"] if t.get("state") == "SUCCEEDED") >= 39:
                    break
                if time.perf_counter() - t0 > 120:
                    raise RuntimeError("the short trials did not end within 120 s")
                time.sleep(0.05)
            took = time.perf_counter() - t0
        finally:
            subprocess.run([self.ours, "cancel", handle], env=self.env, cwd=self.tmp, capture_output=True)
        self.row("sweep: 39 trials of 0.1 s beside one of 30 s, 4 at a time (floor 1.3 s)", took, "s", {},
                 "< 3 s", took < 3)

    def sweeps(self):
        """Sweeps at scale (issue 36): the driver's peak RSS with 1,000 local trials against 10,
        `sweep status` of 1,000 trials from the record, and (with a cluster) a 1,000-trial grid
        submitted to Slurm as one job array. TorchX has no sweep: the goals are absolute."""
        rss = {}
        handles = {}
        for n in (10, 1000):
            out = subprocess.run([self.ours, "sweep", "run", "--max_parallel", "16", "--objective", "v", "-p",
                                  f"i={','.join(str(i) for i in range(n))}", "utils.sh", "true", "@{i}"],
                                 env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
            handles[n] = out.stdout.split()[0]
            rss[n] = self._driver_peak_rss_kib(handles[n]) / 1024
        self.row("sweep driver peak RSS, 1,000 local trials (10 trials: "
                 f"{rss[10]:.1f} MiB)", rss[1000], "MiB", {}, "< 2x its RSS at 10 trials", rss[1000] < 2 * rss[10])
        ms = self.timeit([self.ours, "sweep", "status", handles[1000]], self.n(20)) * 1000
        self.row("`sweep status`, 1,000 trials", ms, "ms", {}, "< 100 ms", ms < 100)
        self._sweep_refill()
        values = ",".join(str(i) for i in range(10000))
        ms = self.timeit([self.ours, "sweep", "run", "--dryrun", "-p", f"i={values}", "utils.sh", "true", "@{i}"],
                         self.n(10)) * 1000
        self.row("`sweep run --dryrun`, 10,000 local trials (each trial's app built and dry-run)", ms, "ms", {},
                 "< 2000 ms", ms < 2000, self.spread_of())
        self.sweep_record_at_scale(10000, 16)
        self.sweep_driver_at_scale(10000, 16)
        if shutil.which("sinfo") is None or subprocess.run(["sinfo"], capture_output=True).returncode != 0:
            self.row("Slurm: 1,000-trial sweep as one array", float("nan"), "", {},
                     "skipped: no Slurm cluster (scripts/engines/slurm-up.sh)", None)
            return
        t = time.perf_counter()
        out = subprocess.run([self.ours, "sweep", "run", "-s", "slurm", "--max_parallel", "1", "-p",
                              f"i={','.join(str(i) for i in range(1000))}", "utils.sh", "sleep", "600", "@{i}"],
                             env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
        submit = time.perf_counter() - t
        handle = out.stdout.split()[0]
        try:
            view = json.loads(subprocess.run([self.ours, "sweep", "status", "--json", handle], env=self.env,
                                             cwd=self.tmp, capture_output=True, text=True, check=True).stdout)
            arrays = {t["handle"].rsplit("/", 1)[1].split("_")[0] for t in view["trials"]}
            ok = len(arrays) == 1 and len(view["trials"]) == 1000
            self.row("Slurm: 1,000-trial sweep submitted as one array", submit * 1000, "ms", {},
                     "< 2000 ms, one sbatch", ok and submit < 2)
        finally:
            subprocess.run([self.ours, "cancel", handle], env=self.env, cwd=self.tmp, capture_output=True)

    def ray(self):
        """`torchx run -s ray` against `ray job submit` of the same job, both to the cluster of
        scripts/engines/ray-up.sh, neither waiting for the job (issue 57: at most 1/10 of its time).
        Each job is stopped as soon as it is timed."""
        import urllib.request
        dashboard = os.environ.get("TORCHX_RAY_DASHBOARD", "127.0.0.1:8275")  # scripts/engines/ray-env.sh
        ray_cli = pathlib.Path(os.environ.get("RAY_VENV", "/var/cache/engines/ray-venv")) / "bin" / "ray"
        try:
            with urllib.request.urlopen(f"http://{dashboard}/api/version", timeout=3) as r:
                up = "ray_version" in json.loads(r.read())
        except OSError:
            up = False
        if not up or not ray_cli.exists():
            self.row("Ray rows", float("nan"), "", {}, "skipped: no Ray cluster (scripts/engines/ray-up.sh)", None)
            return
        env = dict(self.env, RAY_ADDRESS=f"http://{dashboard}")
        workspace = self.tmp / "ray-ws"
        workspace.mkdir(exist_ok=True)
        (workspace / "job.py").write_text("print('hello from ray')\n")

        def timed(cmd, stop):
            times = []
            for _ in range(self.n(10)):
                t = time.perf_counter()
                out = subprocess.run(cmd, env=env, cwd=workspace, capture_output=True, text=True, check=True)
                times.append(time.perf_counter() - t)
                subprocess.run(stop(out.stdout + out.stderr), env=env, capture_output=True)
            return statistics.median(times) * 1000, spread(times)

        ours, sp = timed([self.ours, "run", "-s", "ray", "--workspace", str(workspace), "utils.python", "--script",
                          "job.py"], lambda out: [self.ours, "cancel", out.split()[0]])
        peer, _ = timed([str(ray_cli), "job", "submit", "--address", f"http://{dashboard}", "--no-wait",
                         "--working-dir", str(workspace), "--", "python", "job.py"],
                        lambda out: [str(ray_cli), "job", "stop", "--no-wait", "--address", f"http://{dashboard}",
                                     next((w.strip("'.") for w in out.split() if "raysubmit_" in w), "")])
        self.row(f"Ray: `torchx run -s ray` submit (`ray job submit --no-wait` of the same job: {peer:.0f} ms)", ours,
                 "ms", {}, "<= 1/10 of ray job submit", ours <= peer / 10, (sp[0] * 1000, sp[1] * 1000))

    def managed(self):
        """Managed jobs (issue 37): what `run --managed` costs at launch beside a plain `run` (and
        beside TorchX's `run`, which has no managed mode), how soon a job whose supervisor is killed
        -9 runs again, and its driver's peak RSS while it watches."""
        ms = 1000
        plain = self.timeit([self.ours, "run", "-s", "local_cwd", "utils.sh", "true"], self.n(20)) * ms
        managed = self.timeit([self.ours, "run", "--managed", "-s", "local_cwd", "utils.sh", "true"], self.n(20)) * ms
        peers = {r: self.timeit([self.ref_cli(r), "run", "-s", "local_cwd", "utils.sh", "true"], self.n(5),
                                check=False) for r in self.refs}
        peers = {r: v * ms for r, v in peers.items() if v}
        self.row(f"`run --managed` submit, local_cwd (plain `run`: {plain:.1f} ms)", managed, "ms", peers,
                 "<= 3x plain run, < TorchX's plain run", managed <= 3 * plain and all(managed < v for v in peers.values()))
        latencies = []
        for _ in range(self.n(5)):
            out = subprocess.run([self.ours, "run", "--managed", "-s", "local_cwd", "utils.sh", "sh", "-c",
                                  '[ "$TORCHX_RECOVERY_COUNT" = 0 ] && sleep 60; true'],
                                 env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
            handle = out.stdout.split()[0]
            first = self._managed_attempt(handle, 0, "RUNNING")
            app_id = first.rsplit("/", 1)[1]
            t = time.perf_counter()
            subprocess.run(["pkill", "-9", "-f", f"torchx-supervisor .* {app_id}$"], check=True)
            self._managed_attempt(handle, 1, ("RUNNING", "SUCCEEDED"))
            latencies.append(time.perf_counter() - t)
        lat = statistics.median(latencies) * ms
        self.row("managed: supervisor killed -9 -> next attempt running, local_cwd", lat, "ms", {}, "< 5000 ms",
                 lat < 5000)
        out = subprocess.run([self.ours, "run", "--managed", "-s", "local_cwd", "utils.sh", "sleep", "5"],
                             env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
        rss = self._driver_peak_rss_kib(out.stdout.split()[0]) / 1024
        self.row("managed job driver peak RSS while it watches", rss, "MiB", {}, "< 16 MiB", rss < 16)
        self.idle_managed_drivers(100)

    def idle_managed_drivers(self, jobs, seconds=20):
        """`jobs` managed jobs whose apps sleep: their drivers' CPU together over `seconds`, once
        every app runs, and their PSS (issue 51: an idle driver waits on its child's scheduler and
        its record, not on a poll, 100 of them under 1% of a core; issue 57: at most 300 MiB).
        Every job is cancelled after."""
        handles = []
        try:
            for _ in range(jobs):
                out = subprocess.run([self.ours, "run", "--managed", "-s", "local_cwd", "utils.sh", "sleep", "600"],
                                     env=self.env, cwd=self.tmp, capture_output=True, text=True, check=True)
                handles.append(out.stdout.split()[0])
            for handle in handles:
                self._managed_attempt(handle, 0, "RUNNING", timeout=120)
            time.sleep(2)  # past the turns that recorded the start
            ids = {h.rsplit("/", 1)[1].encode() for h in handles}

            def drivers():
                """(CPU seconds, PSS KiB) of every driver process (the drivers and their watchdogs)."""
                cpu = pss = 0
                for pid in os.listdir("/proc"):
                    try:
                        argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                        if argv[0].endswith(b"torchx-composite-driver") and ids & set(argv):
                            # Time on a CPU in ns (utime and stime count 10 ms ticks: a driver's
                            # turns, well under a tick each, would round to nothing).
                            cpu += int(pathlib.Path(f"/proc/{pid}/schedstat").read_text().split()[0])
                            for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                                if line.startswith("Pss:"):
                                    pss += int(line.split()[1])
                    except (OSError, IndexError, ValueError):
                        continue
                return cpu / 1e9, pss

            (before, _), t = drivers(), time.monotonic()
            time.sleep(seconds)
            after, pss = drivers()
            share = (after - before) / (time.monotonic() - t) * 100
            # The supervisor alone killed, as the OOM killer or a person does (its watchdog lives on
            # and records the end): five of the jobs, one at a time, while the others wait.
            recoveries = []
            for handle in handles[::jobs // 5][:5]:
                app_id = self._managed_attempt(handle, 0, "RUNNING").rsplit("/", 1)[1]
                pid = _supervisor_pid(app_id)
                t0 = time.perf_counter()
                os.kill(pid, 9)
                self._managed_attempt(handle, 1, "RUNNING")
                recoveries.append(time.perf_counter() - t0)
        finally:
            for handle in handles:
                subprocess.run([self.ours, "cancel", handle], env=self.env, cwd=self.tmp, capture_output=True)
        self.row(f"{jobs} idle managed jobs: their drivers' CPU together over {seconds} s", share, "% of a core", {},
                 "< 1% of a core", share < 1)
        self.row(f"{jobs} idle managed jobs: their drivers' PSS together (watchdogs included)", pss / 1024, "MiB", {},
                 "<= 300 MiB (issue 57)", pss / 1024 <= 300)
        worst = max(recoveries) * 1000
        self.row(f"{jobs} managed jobs: the supervisor alone killed -9 in 5 of them -> next attempt running (worst; "
                 f"median {statistics.median(recoveries) * 1000:.0f} ms)", worst, "ms", {}, "<= 2000 ms", worst <= 2000)

    def _managed_attempt(self, handle, index, states, timeout=60):
        """Attempt `index`'s handle once it is in one of `states`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            d = json.loads(subprocess.run([self.ours, "describe", "--json", handle], env=self.env, cwd=self.tmp,
                                          capture_output=True, text=True, check=True).stdout)
            if len(d["attempts"]) > index and d["attempts"][index]["state"] in states:
                return d["attempts"][index]["handle"]
            time.sleep(0.01)
        raise RuntimeError(f"{handle}: attempt {index} not in {states} after {timeout} s")

    # --- output ------------------------------------------------------------------------------
    def table(self):
        refs = list(REFS)
        head = ["benchmark", "ours", "ours' spread", *[f"torchx {r}" for r in refs], *[f"ours/{r}" for r in refs],
                "goal", ""]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for name, ours, unit, peers, goal, met, s in self.rows:
            fmt = (lambda v, unit=unit: f"{v:.2f} {unit}") if unit != "x" else (lambda v: f"{v:.2f}x")
            cells = [name, fmt(ours) if ours == ours else "n/a", f"{s[0]:.2f}-{s[1]:.2f}" if s else ""]
            cells += [fmt(peers[r]) if r in peers else "n/a" for r in refs]
            cells += [f"{ours / peers[r]:.3f}" if peers.get(r) else "" for r in refs]
            cells += [goal, "" if met is None else ("met" if met else "NOT met")]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _supervisor_pid(app_id):
    """The pid of app `app_id`'s supervisor: the torchx-supervisor process of that app whose parent
    is not one (its watchdog is its child, with the same command line)."""
    procs = {}
    for pid in os.listdir("/proc"):
        try:
            argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if argv[0].endswith(b"torchx-supervisor") and app_id.encode() in argv:
                stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
                procs[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    tops = [pid for pid, parent in procs.items() if parent not in procs]
    if len(tops) != 1:
        raise RuntimeError(f"{app_id}: no single supervisor among {procs}")
    return tops[0]


def _rss_kib(pid):
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# Runs in a fresh interpreter: imports, then times `runner.run` of a trivial app N times.
RUN_SNIPPET = r"""
import json, sys, time
from torchx.runner import get_runner
from torchx import specs
runner = get_runner()
app = specs.AppDef("bench", [specs.Role("r", image="", entrypoint="true",
                   resource=specs.Resource(cpu=1, gpu=0, memMB=64))])
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    runner.run(app, "local_cwd")
    times.append(time.perf_counter() - t)
times.sort()
low, high = (times[0], times[-1]) if len(times) < 10 else (times[len(times) // 10], times[len(times) * 9 // 10])
print(json.dumps({"run": times[len(times) // 2], "low": low, "high": high}))
"""


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    distro = ""
    if pathlib.Path("/etc/os-release").exists():
        info = dict(line.split("=", 1) for line in pathlib.Path("/etc/os-release").read_text().splitlines()
                    if "=" in line)
        distro = info.get("PRETTY_NAME", "").strip('"')
    return f"{platform.node()}: {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {distro}, Python {platform.python_version()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", default=str(pathlib.Path(sys.executable).parent / "torchx"),
                        help="our CLI (default: the one `pip install .` put beside this interpreter)")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and a 256 MiB log")
    parser.add_argument("--only", nargs="*", help="sections: cli store ui python fanout logs memory sampling slurm slurm_reads sweeps "
                        "managed dashboard ray")
    args = parser.parse_args()
    if not pathlib.Path(args.ours).exists():
        sys.exit(f"{args.ours}: not found; install the package first (bash scripts/build-python.sh)")
    for helper in ("raw_spawn", "populate_store", "peak_rss", "sweep_record"):
        if not (HELPERS / helper).exists():
            sys.exit(f"{HELPERS / helper}: build the helpers first (cmake --preset release && "
                     "cmake --build --preset release --target raw_spawn populate_store peak_rss sweep_record)")
    import torchx  # ours, for the version line

    bench = Bench(args.ours, args.quick)
    versions = {r: subprocess.run([bench.ref_python(r), "-c", "import torchx; print(torchx.__version__)"],
                                  capture_output=True, text=True).stdout.strip() for r in bench.refs}
    def torch_of(python):
        out = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
        return f"torch {out.stdout.strip()}" if out.returncode == 0 else "no torch"

    header = [f"machine: {machine()}",
              f"Python rows: ours in {bench.ours_python} ({torch_of(bench.ours_python)}), the references in their "
              f"venvs ({', '.join(f'{r}: {torch_of(bench.ref_python(r))}' for r in bench.refs)})",
              f"ours: {args.ours} (torchx {torchx.__version__}, {pathlib.Path(torchx.__file__).parent})",
              *[f"reference {r}: torchx {v} ({REFS[r]})" for r, v in versions.items()],
              *[f"reference {r}: missing, run bench/setup_reference.sh" for r in REFS if r not in bench.refs]]
    print("\n".join(header), flush=True)
    sections = {"cli": bench.cli, "store": bench.store, "ui": bench.ui, "python": bench.python, "fanout": bench.fanout,
                "logs": bench.logs, "memory": bench.supervisor_memory, "sampling": bench.sampling,
                "slurm": bench.slurm, "slurm_reads": bench.slurm_reads, "sweeps": bench.sweeps,
                "managed": bench.managed, "dashboard": bench.dashboard, "ray": bench.ray}
    try:
        for name in args.only or sections:
            t = time.perf_counter()
            sections[name]()
            print(f"[{name}: {time.perf_counter() - t:.0f} s]", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["pkill", "-f", f"torchx-supervisor .*{bench.tmp}"], check=False)
        shutil.rmtree(bench.tmp, ignore_errors=True)
    table = bench.table()
    print(table)
    if args.markdown:
        pathlib.Path(args.markdown).write_text("\n".join(f"- {h}" for h in header) + "\n\n" + table + "\n")


if __name__ == "__main__":
    main()

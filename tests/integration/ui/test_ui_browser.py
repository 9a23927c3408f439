"""The dashboard in a real browser (Debian's Chromium, headless, driven by selenium through
chromium-driver): open the apps page, see a running 2x2 dist.ddp job, open it, watch its log
lines arrive and its replicas' CPU and memory plotted, cancel it and see the state change; then
dry-run a component from the run page; a pipeline listed with its steps and drawn as a graph.
A screenshot of each page is kept in $TORCHX_UI_SCREENSHOTS (CI keeps them as files).

Skips without chromium, chromedriver or selenium unless TORCHX_REQUIRE_ENGINES names browser."""

import os
import pathlib
import re
import time
import shutil
import subprocess
import urllib.parse

import pytest

from ui_server import UiServer, torchx_bin

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    from selenium import webdriver
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover - reported by the skip below
    webdriver = None

if not (CHROMIUM and DRIVER and webdriver):
    if "browser" in os.environ.get("TORCHX_REQUIRE_ENGINES", "").split(","):
        raise RuntimeError("the browser tests are required (TORCHX_REQUIRE_ENGINES) but chromium, chromedriver "
                           "or selenium is missing: run scripts/install-deps.sh")
    pytest.skip("no chromium/chromedriver/selenium (scripts/install-deps.sh installs them)", allow_module_level=True)

TRAIN = """\
import os, time
rank = os.environ["RANK"]
buf = bytearray(32 << 20)  # some resident memory to see
for step in range(600):
    print(f"rank {rank} step {step}", flush=True)
    t = time.time()
    while time.time() - t < 0.05:  # and some CPU
        pass
    time.sleep(0.15)
"""


@pytest.fixture
def shots():
    d = pathlib.Path(os.environ.get("TORCHX_UI_SCREENSHOTS") or pathlib.Path.cwd() / "ui-screenshots")
    d.mkdir(parents=True, exist_ok=True)
    return d


def save(browser, shots, name):
    path = shots / name
    browser.save_screenshot(str(path))
    print(f"screenshot: {path}")


@pytest.fixture
def browser(tmp_path):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", f"--user-data-dir={tmp_path / 'chromium'}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


@pytest.fixture
def ui(tmp_path):
    server = UiServer(tmp_path)
    yield server
    assert server.stop() == 0, server.stderr()


def test_watch_and_cancel_a_ddp_job(ui, browser, shots, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    handle = ui.submit("dist.ddp", "-j", "2x2", "--script", str(tmp_path / "train.py"),
                       cfg={"log_dir": str(tmp_path / "logs"), "resource_interval": 1.0})
    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    browser.get(ui.url)
    row = f'tr[data-handle="{handle}"]'
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f'{row} [data-state="RUNNING"]')))
    # The list refreshes itself: read the row in a wait that retries when a refresh replaced it.
    wait.until(lambda d: "train" in d.find_element(By.CSS_SELECTOR, row).text)  # the app's name
    wait.until(lambda d: "×2" in d.find_element(By.CSS_SELECTOR, row).text)     # two nodes
    save(browser, shots, "apps.png")

    browser.find_element(By.CSS_SELECTOR, f"{row} a").click()
    wait.until(EC.url_contains("#/app/"))
    assert urllib.parse.unquote(browser.current_url.split("#/app/")[1]) == handle
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#replicas tbody tr")) == 2)
    # The timeline has a bar for each replica's running attempt.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline rect.bar-RUNNING")) == 2
    # A running attempt's duration counts on between refreshes.
    first = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#attempts td.duration .ticking").text)
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#attempts td.duration .ticking").text != first)
    # Log lines arrive as the job writes them: the count grows while we watch.
    wait.until(lambda d: "step 3" in d.find_element(By.ID, "log").text)
    seen = browser.find_element(By.ID, "log").text.count("\n")
    wait.until(lambda d: d.find_element(By.ID, "log").text.count("\n") > seen + 3)
    # Every replica by default, interleaved, each line prefixed as `torchx log` prints them.
    both = re.compile(r"(?ms)^train/0 .*step.*^train/1 .*step|^train/1 .*step.*^train/0 .*step")
    wait.until(lambda d: both.search(d.find_element(By.ID, "log").text))
    save(browser, shots, "app.png")
    # The download is the same view as a file (whole, not followed).
    link = browser.find_element(By.ID, "log-download")
    assert link.get_attribute("download").endswith(".log")
    status, _, body = ui.request("GET", urllib.parse.urlparse(link.get_attribute("href")).path + "?" +
                                 urllib.parse.urlparse(link.get_attribute("href")).query)
    assert status == 200 and both.search(body.decode()), body[:2000]
    # One replica when chosen: its lines only, without prefixes (its ranks are 2 and 3).
    Select(browser.find_element(By.ID, "log-replica")).select_by_value("1")
    wait.until(lambda d: "step" in d.find_element(By.ID, "log").text
               and "train/" not in d.find_element(By.ID, "log").text
               and "rank 0 " not in d.find_element(By.ID, "log").text)
    Select(browser.find_element(By.ID, "log-replica")).select_by_value("all")

    # Resources: each replica's CPU and memory, plotted over time and in the table (the card
    # refreshes itself), agreeing with the API: non-zero CPU and RSS for both replicas.
    deadline = time.monotonic() + 30
    while True:
        status, usage = ui.api("GET", f"/api/v1/apps/{urllib.parse.quote(handle, safe='')}/resources")
        assert status == 200, usage
        newest = [r["samples"][-1] for r in usage["replicas"] if len(r["samples"]) >= 2]
        if len(newest) == 2 and all(s["cpu_percent"] > 0 and s["rss_bytes"] > (32 << 20) for s in newest):
            break
        assert time.monotonic() < deadline, usage
        time.sleep(0.5)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart-cpu polyline")) == 2)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart-rss polyline")) == 2)
    # The card redraws itself every couple of seconds: read the table inside a wait that retries
    # when a redraw replaced the rows.

    def table(d):
        rows = [[td.text for td in r.find_elements(By.TAG_NAME, "td")]
                for r in d.find_elements(By.CSS_SELECTOR, "#resources-table tbody tr")]
        return rows if [r[0] for r in rows] == ["train/0", "train/1"] and all("MiB" in r[3] for r in rows) else None

    wait.until(table)
    browser.execute_script("document.getElementById('resources').scrollIntoView()")
    save(browser, shots, "app-resources.png")
    # A time range: the last minute up to now, asked of the server (`since`), kept as the card
    # refreshes; every plotted sample lies in it.
    Select(browser.find_element(By.ID, "resources-range")).select_by_value("60")

    def ranged(d):
        view = d.find_element(By.CSS_SELECTOR, "#resources [data-since]")
        since = view.get_attribute("data-since")
        t0 = d.find_element(By.ID, "chart-cpu").get_attribute("data-t0")
        return since and float(t0) >= float(since) and float(since) > time.time() - 90

    wait.until(ranged)
    time.sleep(2.5)  # past a refresh
    wait.until(ranged)
    assert Select(browser.find_element(By.ID, "resources-range")).first_selected_option.text == "last minute"
    browser.execute_script("window.scrollTo(0, 0)")

    browser.find_element(By.ID, "cancel").click()
    WebDriverWait(browser, 10).until(EC.alert_is_present())
    browser.switch_to.alert.accept()
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '.titlebar [data-state="CANCELLED"]')))
    wait.until(lambda d: all(e.text == "CANCELLED" for e in d.find_elements(By.CSS_SELECTOR, "#replicas .state")))
    assert ui.app(handle)[1]["status"]["state"] == "CANCELLED"
    # Ended: no duration counts on, the app's nor an attempt's.
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#attempts .ticking, #duration .ticking"))
    # "Cancel requested." goes once the app has ended.
    wait.until(lambda d: "Cancel requested" not in d.find_element(By.ID, "notice").text)
    # The definition reads as a command line, not JSON.
    command = browser.find_element(By.ID, "role-command-train").text
    assert command.startswith("bash -c 'torchrun ") and "[\"" not in command, command
    save(browser, shots, "app-cancelled.png")

    # A page opens at its top: scrolled to the logs here, the run page starts at its title.
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    assert browser.execute_script("return window.scrollY") > 0
    browser.get(ui.url + "#/run")
    wait.until(EC.presence_of_element_located((By.ID, "component")))
    assert browser.execute_script("return window.scrollY") == 0

    browser.get(ui.url + "#/")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f'{row} [data-state="CANCELLED"]')))


def test_run_page_dry_runs_and_runs_a_component(ui, browser, shots):
    wait = WebDriverWait(browser, 30)
    browser.get(ui.url + "#/run")
    wait.until(EC.presence_of_element_located((By.ID, "p-msg")))
    # Only schedulers an app can go to (no pipeline); a bool option is a choice, not a text box.
    offered = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#scheduler option")]
    assert "local_cwd" in offered and "pipeline" not in offered, offered
    wait.until(EC.presence_of_element_located((By.ID, "c-prepend_cwd")))
    assert browser.find_element(By.ID, "c-prepend_cwd").tag_name == "select"
    assert browser.find_element(By.ID, "c-kill_grace_seconds").get_attribute("type") == "number"
    msg = browser.find_element(By.ID, "p-msg")
    msg.clear()
    msg.send_keys("hello from the browser")
    browser.find_element(By.ID, "dryrun-btn").click()
    wait.until(lambda d: "hello from the browser" in d.find_element(By.ID, "dryrun").text)
    save(browser, shots, "run.png")
    assert ui.api("GET", "/api/v1/apps")[1]["total"] == 0

    browser.find_element(By.ID, "run-btn").click()
    wait.until(EC.url_contains("#/app/"))
    handle = urllib.parse.unquote(browser.current_url.split("#/app/")[1])
    ui.handles.append(handle)
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, '.titlebar [data-state="SUCCEEDED"]')))
    wait.until(lambda d: "hello from the browser" in d.find_element(By.ID, "log").text)


def test_a_retried_replicas_first_attempt_log_and_why_it_failed(ui, browser, shots):
    marker = ui.tmp / "tried"
    script = (f"if [ -e {marker} ]; then echo second-run; echo 'broke for good' >&2; exit 9; "
              f"else touch {marker}; echo first-run; exit 7; fi")
    appdef = {"name": "flaky", "roles": [{"name": "r", "image": str(ui.tmp), "entrypoint": "sh",
                                          "args": ["-c", script], "max_retries": 1, "retry_policy": "REPLICA"}]}
    status, body = ui.api("POST", "/api/v1/apps", {"appdef": appdef, "scheduler": "local_cwd"})
    assert status == 201, body
    handle = body["app_handle"]
    ui.handles.append(handle)
    ui.wait_state(handle, {"FAILED"})
    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(ui.url + "#/app/" + urllib.parse.quote(handle, safe=""))
    # Why it failed: the failed replica's last stderr lines, on the page.
    wait.until(lambda d: "broke for good" in d.find_element(By.CSS_SELECTOR, ".failure-log pre").text)
    # The latest attempt's log by default; the first run's when chosen.
    wait.until(lambda d: "second-run" in d.find_element(By.ID, "log").text)
    Select(browser.find_element(By.ID, "log-attempt")).select_by_value("0")
    wait.until(lambda d: d.find_element(By.ID, "log").text.strip() == "first-run")
    save(browser, shots, "app-retried-attempt0.png")


def test_a_pipeline_is_listed_with_its_steps_and_drawn_as_a_graph(ui, browser, shots):
    (ui.tmp / "flow.yaml").write_text(
        "name: flow\n"
        "steps:\n"
        "  prepare: {component: utils.sh, args: [sh, -c, 'echo prepared']}\n"
        "  train: {component: utils.sh, args: [sh, -c, 'echo no data >&2; exit 3'], depends_on: prepare}\n"
        "  evaluate: {component: utils.sh, args: [echo, evaluated], depends_on: [train]}\n")
    res = subprocess.run([torchx_bin(), "pipeline", "run", "--wait", "flow.yaml"], capture_output=True, text=True,
                         env=ui.env, cwd=ui.tmp, timeout=120)
    assert res.returncode != 0, res.stdout + res.stderr  # a step failed
    handle = res.stdout.split()[0]
    assert handle.startswith("pipeline://"), res.stdout
    # The apps listing has the pipeline by default as one row, its steps counted, paged on their own
    # and not listed on their own.
    status, listing = ui.api("GET", "/api/v1/apps")
    assert status == 200, listing
    top = {a["app_handle"]: a for a in listing["apps"]}
    assert top[handle]["composite"] and top[handle]["member_counts"] == {"SUCCEEDED": 1, "FAILED": 1, "CANCELLED": 1}
    status, page = ui.api("GET", f"/api/v1/apps/{urllib.parse.quote(handle, safe='')}/members")
    assert status == 200, page
    members = {m["name"]: m for m in page["members"]}
    assert list(members) == ["prepare", "train", "evaluate"]
    assert members["train"]["depends_on"] == ["prepare"] and members["train"]["state"] == "FAILED"
    assert members["evaluate"]["state"] == "CANCELLED" and not members["evaluate"]["app_handle"]
    assert members["prepare"]["app_handle"] not in top  # nested, not listed twice
    assert "/prepare-" in members["prepare"]["app_handle"]  # the step's app is named after the step

    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(ui.url)
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f'tr[data-handle="{handle}"]')))
    # One row, its steps counted; expanded, the steps follow it.
    assert not browser.find_elements(By.CSS_SELECTOR, "tr.member")
    wait.until(lambda d: "1 failed" in d.find_element(By.CSS_SELECTOR, f'tr[data-handle="{handle}"] .member-counts').text)
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f'tr[data-handle="{handle}"] button.expand').click() or True)
    # The list is drawn again as events arrive: read its rows in waits that retry on a redraw.
    wait.until(lambda d: [s.get_attribute("data-step") for s in d.find_elements(By.CSS_SELECTOR, "tr.member[data-step]")]
               == ["prepare", "train", "evaluate"])
    wait.until(lambda d: "after prepare" in d.find_elements(By.CSS_SELECTOR, "tr.member[data-step]")[1].text)
    save(browser, shots, "apps-pipeline.png")

    browser.get(ui.url + "#/app/" + urllib.parse.quote(handle, safe=""))
    # The graph is drawn again as the app's events arrive: read it in waits that retry on a redraw.
    wait.until(lambda d: {g.get_attribute("data-step"): g.get_attribute("data-state")
                          for g in d.find_elements(By.CSS_SELECTOR, "#steps-graph g.step")}
               == {"prepare": "SUCCEEDED", "train": "FAILED", "evaluate": "CANCELLED"})
    wait.until(lambda d: {(e.get_attribute("data-from"), e.get_attribute("data-to"))
                          for e in d.find_elements(By.CSS_SELECTOR, "#steps-graph path.edge")}
               == {("prepare", "train"), ("train", "evaluate")})
    save(browser, shots, "app-pipeline-graph.png")
    # Each submitted step links to its own app.
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#steps-graph g.step[data-step="train"]').click() or True)
    wait.until(lambda d: urllib.parse.unquote(d.current_url.split("#/app/")[-1]) == members["train"]["app_handle"])
    wait.until(lambda d: "no data" in d.find_element(By.CSS_SELECTOR, ".failure-log pre").text)


def test_a_finished_sweeps_page_shows_its_trials_sortable_and_plotted(ui, browser, shots):
    (ui.tmp / "report.py").write_text(
        "import sys\nfrom torchx.tracker import app_run_from_env\n"
        "x = float(sys.argv[1])\napp_run_from_env().add_metadata(loss=(x - 0.3) ** 2, step=1)\n")
    res = subprocess.run([torchx_bin(), "sweep", "run", "--wait", "--max_parallel", "3", "--objective", "loss", "-p",
                          "x=0.0,0.1,0.2,0.3,0.4,0.5", "--name", "pagesweep", "utils.sh", "python3", "report.py", "@{x}"],
                         capture_output=True, text=True, env=ui.env, cwd=ui.tmp, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    handle = res.stdout.split()[0]
    # Listed once, its trials nested; its page's data has the trials with their reports.
    status, listing = ui.api("GET", "/api/v1/apps")
    assert status == 200, listing
    top = {a["app_handle"]: a for a in listing["apps"]}
    assert top[handle]["member_counts"] == {"SUCCEEDED": 6} and "members" not in top[handle], top[handle]
    q = urllib.parse.quote(handle, safe="")
    status, page = ui.api("GET", f"/api/v1/apps/{q}/members?offset=4&limit=10")
    assert status == 200 and page["total"] == 6 and [m["name"] for m in page["members"]] == ["4", "5"], page
    status, detail = ui.api("GET", "/api/v1/apps/" + urllib.parse.quote(handle, safe=""))
    assert status == 200 and detail["sweep"]["best"] == 3, detail.get("sweep")

    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(ui.url + "#/app/" + urllib.parse.quote(handle, safe=""))
    # Best first (the objective's order), every trial a row linking to its app.
    wait.until(lambda d: [r.get_attribute("data-index") for r in d.find_elements(By.CSS_SELECTOR, "#sweep-trials tr.trial")]
               [:1] == ["3"])
    # Read in one wait: the table may be drawn again (a refresh) between finding a row and reading it.
    wait.until(lambda d: (lambda rows: len(rows) == 6 and "best" in (rows[0].get_attribute("class") or ""))(
        d.find_elements(By.CSS_SELECTOR, "#sweep-trials tr.trial")))
    # The objective against x, and over time with the best so far.
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#sweep-plot-x circle.pt")) == 6)
    assert browser.find_elements(By.CSS_SELECTOR, "#sweep-plot-time polyline.best-line")
    save(browser, shots, "app-sweep.png")
    # Sorted by x on a click.
    browser.find_element(By.CSS_SELECTOR, '#sweep-trials th[data-key="p:x"]').click()
    wait.until(lambda d: [r.get_attribute("data-index") for r in d.find_elements(By.CSS_SELECTOR, "#sweep-trials tr.trial")]
               == ["0", "1", "2", "3", "4", "5"])
    # Trials, not roles: no role card with the sweep's placeholder entrypoint and -1 resources.
    assert browser.find_elements(By.ID, "definition-trials")
    assert "-1 CPU" not in browser.find_element(By.TAG_NAME, "main").text
    # The sweep's own log, its driver's: each trial submitted and how it ended, then the end.
    assert detail["composite"] is True
    Select(browser.find_element(By.ID, "log-role")).select_by_value("(driver)")
    wait.until(lambda d: "sweep ended SUCCEEDED" in d.find_element(By.ID, "log").text)
    assert "trial 4: submitted as local_cwd://torchx/pagesweep-4-" in browser.find_element(By.ID, "log").text
    # A trial links to its own app page.
    browser.find_element(By.CSS_SELECTOR, '#sweep-trials tr.trial[data-index="4"] a').click()
    wait.until(lambda d: urllib.parse.unquote(d.current_url.split("#/app/")[-1]).startswith("local_cwd://torchx/pagesweep-4-"))


def test_a_managed_jobs_page_draws_its_attempts_on_a_timeline_with_their_causes(ui, browser, shots):
    res = subprocess.run([torchx_bin(), "run", "--managed", "--recover_on", "user_error", "--wait", "utils.sh", "sh",
                          "-c", "sleep 1; [ $TORCHX_RECOVERY_COUNT -ge 1 ]"],
                         capture_output=True, text=True, env=ui.env, cwd=ui.tmp, timeout=180)
    assert res.returncode == 0, res.stdout + res.stderr
    handle = res.stdout.split()[0]
    status, detail = ui.api("GET", "/api/v1/apps/" + urllib.parse.quote(handle, safe=""))
    assert status == 200 and [a["cause"] for a in detail["managed"]["attempts"][:1]] == ["user_error"], detail
    wait = WebDriverWait(browser, 30, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(ui.url + "#/app/" + urllib.parse.quote(handle, safe=""))
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#managed-timeline rect.bar")) == 2)
    assert browser.find_elements(By.CSS_SELECTOR, "#managed-timeline rect.bar.FAILED")
    assert browser.find_elements(By.CSS_SELECTOR, "#managed-timeline rect.bar.SUCCEEDED")
    # Read through the wait: the page redraws while it refreshes, and a row found just before a
    # redraw is stale by the time its text is read.
    cause = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#managed-attempts tr[data-attempt="0"] td.cause').text)
    assert cause.startswith("user_error: sh/0 exited with code 1"), cause
    why = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#managed-attempts tr[data-attempt="1"]').text)
    assert "recovery 1 after user_error" in why, why
    # The ended job's axis ends at its end, however long after it the page is read.
    time.sleep(2)
    browser.refresh()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#managed-timeline rect.bar")) == 2)
    axis_end = float(browser.find_element(By.ID, "managed-timeline").get_attribute("data-t1"))
    ended = max(a["ended"] for a in detail["managed"]["attempts"])
    assert axis_end == pytest.approx(ended, abs=0.01), (axis_end, ended)
    save(browser, shots, "app-managed.png")


def helper(name):
    """A bench/ helper the test build makes (ctest names it); skipped when run outside ctest."""
    path = os.environ.get("TORCHX_" + name.upper()) or str(pathlib.Path(torchx_bin()).parents[1] / "bench" / name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built (ctest passes it as TORCHX_{name.upper()})")
    return path


def test_the_apps_page_at_scale_shows_a_1000_trial_sweep_as_one_row_that_pages_its_trials(browser, shots, tmp_path):
    # 10,000 ended apps recorded as local_cwd records them, and a 1,000-trial sweep's record as its
    # driver writes it (bench/populate_store.cc, bench/sweep_record.cc: the bench's own store).
    state = tmp_path / "state"
    subprocess.run([helper("populate_store"), str(state), "10000"], check=True, timeout=300)
    subprocess.run([helper("sweep_record"), str(state), "1000", "50"], check=True, timeout=300,
                   stdout=subprocess.DEVNULL)
    ui = UiServer(tmp_path)
    try:
        sweep = "sweep://torchx/bench-sweep"
        status, listing = ui.api("GET", "/api/v1/apps?limit=50")
        assert status == 200 and listing["total"] == 10001, listing.get("total")
        row = listing["apps"][0]  # the newest
        assert row["app_handle"] == sweep and row["member_counts"] == {"SUCCEEDED": 1000} and row["roles"] == [], row

        browser.set_window_size(1280, 800)
        wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))
        browser.get(ui.url)
        wait.until(lambda d: "of 10001" in d.find_element(By.ID, "apps-count").text)
        sel = f'tr[data-handle="{sweep}"]'
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"{sel} .member-counts").text == "1000 succeeded")
        height = browser.execute_script("return document.documentElement.scrollHeight")
        assert height < 3000, f"the apps page is {height} px tall"
        assert not browser.find_elements(By.CSS_SELECTOR, "tr.member")
        save(browser, shots, "apps-at-scale.png")

        # Expanded: its first 50 trials follow it, then the next 50 on a click.
        browser.find_element(By.CSS_SELECTOR, f"{sel} button.expand").click()
        pager = f'tr.member-pager[data-pager-of="{sweep}"]'

        def steps(d):
            return [r.get_attribute("data-step") for r in d.find_elements(By.CSS_SELECTOR, "tr.member[data-step]")]

        wait.until(lambda d: steps(d) == [str(i) for i in range(50)])
        wait.until(lambda d: "1\u201350 of 1000" in d.find_element(By.CSS_SELECTOR, pager).text)
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"{pager} button:last-child").click() or True)
        wait.until(lambda d: steps(d) == [str(i) for i in range(50, 100)])
        wait.until(lambda d: "51\u2013100 of 1000" in d.find_element(By.CSS_SELECTOR, pager).text)
        save(browser, shots, "apps-at-scale-expanded.png")
        # Collapsed again: one row.
        browser.find_element(By.CSS_SELECTOR, f"{sel} button.expand").click()
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "tr.member"))
    finally:
        assert ui.stop() == 0, ui.stderr()


def test_the_stacks_button_shows_where_each_process_stands(ui, browser, shots, tmp_path):
    (tmp_path / "stuck.py").write_text("import time\n\ndef stuck_here():\n    time.sleep(600)\n\nstuck_here()\n")
    handle = ui.submit("utils.python", "--script", str(tmp_path / "stuck.py"))
    ui.wait_state(handle, {"RUNNING"})
    # It attaches a debugger: a POST, refused without the token or the page's CSRF token.
    status, _ = ui.api("POST", f"/api/v1/apps/{urllib.parse.quote(handle, safe='')}/stacks", token=False)
    assert status == 403
    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))
    browser.get(ui.url + "#/app/" + urllib.parse.quote(handle, safe=""))
    # Clicked until the interpreter stands in the function (it may still be starting).

    def stuck(d):
        summaries = d.find_elements(By.CSS_SELECTOR, "#stacks details.stack-group summary")
        if any("1 process in stuck_here (stuck.py:4)" in s.text for s in summaries):
            return True
        button = d.find_element(By.ID, "stacks-button")
        if button.is_enabled():
            button.click()
        return False

    wait.until(stuck)
    assert "stuck_here (stuck.py:4)" in browser.find_element(By.CSS_SELECTOR, "#stacks details[open] pre").text
    save(browser, shots, "app-stacks.png")

    # Profile: one replica sampled for a second, handed over as a speedscope file to download.
    status, _ = ui.api("POST", f"/api/v1/apps/{urllib.parse.quote(handle, safe='')}/profile?duration=1", token=False)
    assert status == 403
    browser.find_element(By.ID, "profile-button").click()
    wait.until(lambda d: d.find_element(By.ID, "profile-replica").get_attribute("value") == "python/0")
    duration = browser.find_element(By.ID, "profile-duration")
    duration.clear()
    duration.send_keys("1")
    browser.find_element(By.ID, "profile-start").click()
    link = wait.until(lambda d: d.find_elements(By.ID, "profile-download"))[0]
    assert link.get_attribute("download").endswith(".python.0.speedscope.json"), link.get_attribute("download")
    assert int(link.get_attribute("data-bytes")) > 100
    assert link.get_attribute("href").startswith("blob:")
    save(browser, shots, "app-profile.png")

    # Hosts: this host, with the app on it, linking to its page.
    browser.get(ui.url + "#/hosts")
    row = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'table.hosts[data-scheduler="local_cwd"] tr.host'))
    assert len(row) == 1
    apps = row[0].find_elements(By.CSS_SELECTOR, "td.host-apps a")
    assert any(a.get_attribute("href").endswith("#/app/" + urllib.parse.quote(handle, safe="")) for a in apps), \
        [a.get_attribute("href") for a in apps]
    assert "python/0" in row[0].find_element(By.CSS_SELECTOR, "td.host-apps").text
    save(browser, shots, "hosts.png")

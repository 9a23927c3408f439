"""The dashboard at the size users run (issue 57): `torchx ui` over 10,000 recorded apps, a
1,000-trial sweep and 100 running apps. Measures what a team sharing one dashboard feels: the apps
page's first 50, the sweep's page document, the server's CPU while a page holds the apps event
stream open, and the latency 50 browser-like clients see over a minute.

Used by bench/bench.py (section `dashboard`); nothing here asserts.
"""

import http.client
import os
import random
import statistics
import threading
import time
import urllib.parse


def get_ms(port, path, conn=None):
    """(milliseconds, status, body) of one GET; a new connection unless `conn` is given."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t = time.perf_counter()
    conn.request("GET", path)
    res = conn.getresponse()
    body = res.read()
    took = (time.perf_counter() - t) * 1000
    if own:
        conn.close()
    return took, res.status, body


def median_get_ms(port, path, n, apart=0.0):
    """The median of `n` GETs, each on a new connection, `apart` seconds between them (past the
    server's shared listing, 1 s: each answer then is taken afresh)."""
    times = []
    for _ in range(n):
        time.sleep(apart)
        took, status, body = get_ms(port, path)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status} {body[:300]!r}")
        times.append(took)
    return statistics.median(times)


def cpu_seconds(pid):
    """utime + stime of a whole process (every thread, ended ones included)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def event_stream_cpu(port, pid, seconds):
    """The server's share of a core while one client holds /api/v1/events open for `seconds`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=seconds + 30)
    conn.request("GET", "/api/v1/events")
    res = conn.getresponse()
    if res.status != 200:
        raise RuntimeError(f"GET /api/v1/events: {res.status}")
    stop = threading.Event()
    events = []

    def read():
        while not stop.is_set():
            line = res.fp.readline()
            if not line:
                return
            if line.startswith(b"event:"):
                events.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(2)  # past the first event and the first re-list
    before, t = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    share = (cpu_seconds(pid) - before) / (time.monotonic() - t) * 100
    stop.set()
    conn.sock.shutdown(2)
    conn.close()
    return share, len(events)


def drain_events(port):
    """Opens /api/v1/events as an open apps page does and reads it on a thread until the server
    or the caller closes it; the connection (None if refused)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", "/api/v1/events")
    res = conn.getresponse()
    if res.status != 200:
        conn.close()
        return None

    def read():
        try:
            while res.fp.readline():
                pass
        except (OSError, ValueError, AttributeError):
            pass

    threading.Thread(target=read, daemon=True).start()
    return conn


def clients_load(port, paths, clients, seconds, period):
    """`clients` browser-like clients: each holds the apps event stream open (as the dashboard's
    page does) and, on one keep-alive connection, asks for the next of `paths` every `period`
    seconds for `seconds`. Every latency in ms, and the failures (a refused stream is one)."""
    latencies, failures = [], []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(seed):
        rng = random.Random(seed)
        stream = drain_events(port)
        if stream is None:
            with lock:
                failures.append("event stream refused")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        i = rng.randrange(len(paths))
        time.sleep(rng.random() * period)  # clients do not start in step
        while time.monotonic() < deadline:
            start = time.monotonic()
            try:
                took, status, _ = get_ms(port, paths[i % len(paths)], conn)
                with lock:
                    (latencies if status == 200 else failures).append(took if status == 200 else status)
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    failures.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            i += 1
            time.sleep(max(0.0, period - (time.monotonic() - start)))
        conn.close()
        if stream is not None:
            stream.sock.shutdown(2)
            stream.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return latencies, failures


def p99(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))] if values else float("nan")


def app_path(handle):
    return "/api/v1/apps/" + urllib.parse.quote(handle, safe="")

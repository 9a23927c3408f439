#!/usr/bin/env python3
"""The Python package against the reference TorchX, in the same run (targets from issue 5):
`import torchx` <= 20 ms with no scan of installed distributions, and `get_runner().run(...)` of a
trivial app <= 10 ms. Not a test: nothing asserts.

    bash scripts/build-python.sh && bench/setup_reference.sh
    python3 bench/python_bench.py         # TORCHX_REF_PYTHON=/path/to/python overrides the reference
"""

import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
REF_PY = pathlib.Path(os.environ.get("TORCHX_REF_PYTHON", REPO / ".venv-torchx-ref" / "bin" / "python"))

# Runs in a fresh interpreter: imports, then times `runner.run` of a trivial app N times.
RUN_SNIPPET = r"""
import json, sys, time
t0 = time.perf_counter()
from torchx.runner import get_runner
from torchx import specs
imported = time.perf_counter() - t0
runner = get_runner()
app = specs.AppDef("bench", [specs.Role("r", image="", entrypoint="true",
                   resource=specs.Resource(cpu=1, gpu=0, memMB=64))])
times = []
for _ in range(int(sys.argv[1])):
    t = time.perf_counter()
    runner.run(app, "local_cwd")
    times.append(time.perf_counter() - t)
scanned = any(m in sys.modules for m in ("importlib.metadata", "pkg_resources", "importlib_metadata"))
print(json.dumps({"run": sorted(times)[len(times) // 2], "import_runner": imported, "scanned": scanned}))
"""


def interpreter_ms(python, code, n=30):
    """Median wall time of `python -c code`, minus that of `python -c pass` (interleaved)."""
    base, full = [], []
    for _ in range(n):
        for out, c in ((base, "pass"), (full, code)):
            t = time.perf_counter()
            subprocess.run([python, "-c", c], check=True, stdout=subprocess.DEVNULL)
            out.append(time.perf_counter() - t)
    return (statistics.median(full) - statistics.median(base)) * 1000


def run_stats(python, env, n):
    out = subprocess.run([python, "-c", RUN_SNIPPET, str(n)], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    have_ref = REF_PY.exists()
    tmp = tempfile.mkdtemp(prefix="torchx-pybench-")
    env = dict(os.environ, TORCHX_STATE_DIR=os.path.join(tmp, "state"), LOGLEVEL="WARNING")
    rows = []
    try:
        ours = interpreter_ms(sys.executable, "import torchx")
        peer = interpreter_ms(str(REF_PY), "import torchx") if have_ref else 0
        rows.append(("import torchx", ours, peer, "<= 20 ms", ours <= 20))
        code = "import torchx.runner, torchx.specs"
        ours_r = interpreter_ms(sys.executable, code)
        peer_r = interpreter_ms(str(REF_PY), code) if have_ref else 0
        rows.append(("import torchx.runner, torchx.specs (Ax's imports)", ours_r, peer_r, "(informative)", True))
        stats = run_stats(sys.executable, env, 50)
        ref_env = dict(env, TORCHX_STATE_DIR=os.path.join(tmp, "ref"))
        ref_stats = run_stats(str(REF_PY), ref_env, 10) if have_ref else {"run": 0, "scanned": None}
        rows.append(("get_runner().run(trivial app), local_cwd", stats["run"] * 1000, ref_stats["run"] * 1000,
                     "<= 10 ms", stats["run"] <= 0.010))
    finally:
        subprocess.run(["pkill", "-f", f"torchx-supervisor.*{tmp}"], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    head = ("benchmark", "ours", "reference torchx", "ours/peer", "target", "")
    table = [head] + [(n, f"{o:.1f} ms", f"{p:.1f} ms" if p else "n/a", f"{o / p:.3f}" if p else "n/a", t,
                       "met" if ok else "NOT met") for n, o, p, t, ok in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print(f"\ndistribution metadata imported by `import torchx.runner`: ours {stats['scanned']}, "
          f"reference {ref_stats['scanned']}")
    if not have_ref:
        print(f"(reference TorchX not found at {REF_PY}: run bench/setup_reference.sh)")


if __name__ == "__main__":
    main()

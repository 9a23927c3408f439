#!/usr/bin/env python3
"""The CLI fuzz stage: mutated command lines over every verb, built from the CLI's own option
tables (`torchx __complete options`) plus huge, empty, binary and unicode values, each run with a
time limit in a temporary state directory, HOME and working directory, with every engine pointed
at nothing (no Slurm, Docker, Ray or Kubernetes is reached).

A finding is a line that crashed (a signal, a sanitizer report, a Python traceback, an uncaught
C++ exception), hung past its limit, exited with a code outside the CLI's table (0, 1, 2), or
failed without a word on stderr. Each is saved as JSON ({"argv": [...], "why": ...}); once fixed,
it goes into tests/fuzz/cli/corpus/, which `--replay` runs in the unit stage (an entry's optional
"exit" is the code it must end with).

  cli_fuzz.py --seconds 100 --findings DIR     generate for that long (scripts/test.sh's stage)
  cli_fuzz.py --replay tests/fuzz/cli/corpus   run the saved lines; exit 1 on any finding

`run`, `sweep run`, `pipeline run` and `composite run` run for real only on local_cwd with
harmless entrypoints; otherwise they get --dryrun. `ui`, `top` and `log -t` are stopped at their
limit without counting as hangs; `debug profile` has its --duration more than other lines. Every process a line leaves behind is stopped at the end.
"""

import argparse
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = pathlib.Path(__file__).resolve().parents[3]
LIMIT_S = 10.0          # a line still running after this is a hang
WATCH_LIMIT_S = 3.0     # ui, top, log -t: stopped here, not a hang
EXIT_CODES = {0, 1, 2}  # cli/exit_codes.h
CRASH_WORDS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "Traceback (most recent call last)",
               "terminate called", "Segmentation fault", "core dumped")
HARMLESS = [["utils.echo", "--msg", "hi"], ["utils.sh", "true"], ["utils.sh", "echo", "fuzz"]]
RUN_VERBS = ("run", "sweep run", "pipeline run", "composite run")
UI_OPTIONS = [("--port", "value"), ("-s", "value"), ("--token_file", "value"), ("--token_required", "flag"),
              ("--allow_host", "value")]


def torchx_bin():
    # Absolute: each line runs in a working directory of its own.
    return os.path.abspath(os.environ.get("TORCHX_BIN") or str(REPO / "build" / "ci" / "cli" / "torchx"))


def values(rng):
    """A value for an option or positional: plausible, hostile, or plain odd; never an absolute
    path (a line may write where a value names, as the server's --token_file or a profile's -o
    do: relative paths stay in the stage's own directory)."""
    value = any_value(rng)
    return "." + value if value.startswith("/") else value


def any_value(rng):
    pool = [
        "", " ", "-", "--", "=", "0", "1", "-1", "2", "9223372036854775808", "1e309", "nan", "inf", "0x10",
        "local_cwd", "local_docker", "slurm", "kubernetes", "ray", "sweep", "pipeline", "managed", "nosuch",
        "local_cwd://torchx/x", "local_cwd://torchx/echo-abc123", "slurm://torchx/12", "sweep://torchx/s",
        "pipeline://torchx/p", "ray://torchx/127.0.0.1:9-raysubmit_x", "kubernetes://torchx/ns:app",
        "local_docker://torchx/x", "://", "a://b/c/d", "utils.echo", "dist.ddp", "utils.sh", "nosuch.comp",
        "./comp.py:main", "comp.py", "flow.yaml", "bad.yaml", "empty.yaml", "no/such/file", "../../etc/passwd",
        "x=1", "x=1,2,3", "x=randint(0,9)", "x=uniform(0,1)", "x=uniform(-1.79e308,1.79e308)", "x=loguniform(0,1)",
        "x=", "=1", "lr=choice(1,2", "log_dir=logs,prepend_cwd=True", "k=v,k=w", "a=b=c", ",", "@{x}",
        "${app_id}", "$HOME", "%s%n%x", "\\", "'", '"', "`id`", "$(id)", "; true", "*", "?", "[", "(", ")",
        "user_error", "infra,user_error", "stdout", "stderr,stdout", "1h", "-5m", "2026-11-30T09:00:00",
        "RUNNING", "SUCCEEDED,FAILED", "bash", "zsh", "fish", "scheduler", "named_resource",
        "ünïcødé", "名前", "🔥🔥", "\u202eevil", "a\u0301", "\ufeff", "\u2028", "\t", "\n", "a\nb",
    ]
    roll = rng.random()
    if roll < 0.70:
        return rng.choice(pool)
    if roll < 0.78:
        n = rng.choice([1000, 10000, 100000])  # Linux takes no single argument over 128 KiB
        return (rng.choice(["(", "a", "/", "x=", "[", "{", "9"]) * n)[:n]
    if roll < 0.86:  # bytes that are no UTF-8 (no NUL: argv cannot carry one)
        return os.fsdecode(bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 64))))
    if roll < 0.93:
        return "".join(chr(rng.choice([rng.randrange(0x20, 0x7f), rng.randrange(0xa0, 0xd7ff)]))
                       for _ in range(rng.randrange(1, 40)))
    return rng.choice(pool) + rng.choice(pool)


def grammar():
    """{verb path: [(name, kind)]} from the CLI's own tables."""
    out = subprocess.run([torchx_bin(), "__complete", "options"], capture_output=True, text=True, check=True,
                         timeout=60).stdout
    table = {}
    for line in out.splitlines():
        path, name, kind = line.split("\t")
        table.setdefault(path, []).append((name, kind))
    table["ui"] = list(UI_OPTIONS)
    for verb in ("version", "stop", "builtins", "list"):
        table.setdefault(verb, [])
    return table


def generate(rng, table):
    """One command line: a verb path, some of its options in any order, mutated now and then."""
    path = rng.choice(sorted(table))
    argv = path.split()
    if argv[0] == "stop":
        table_of = table.get("cancel", [])
    else:
        table_of = table[path]
    positionals = [n for n, k in table_of if k == "positional"]
    options = [(n, k) for n, k in table_of if k != "positional"]
    words = []
    for _ in range(rng.randrange(0, 5)):
        if not options:
            break
        name, kind = rng.choice(options)
        words.append([name] if kind == "flag" else ([f"{name}={values(rng)}"] if rng.random() < 0.15 and
                                                   name.startswith("--") else [name, values(rng)]))
    for _ in positionals:
        if rng.random() < 0.9:
            words.append([values(rng)])
    if path in ("run", "sweep run"):  # the component and its arguments (everything after it)
        words.append([rng.choice(["utils.echo", "utils.sh", "dist.ddp", values(rng)])] +
                     [values(rng) for _ in range(rng.randrange(0, 3))])
    if path != "run" and path != "sweep run":
        rng.shuffle(words)
    line = argv + [w for group in words for w in group]
    roll = rng.random()  # mutations: an unknown option, a word dropped, a word repeated
    if roll < 0.1:
        line.insert(rng.randrange(1, len(line) + 1), rng.choice(["--nosuch", "-Z", "--", "-", "--=x"]))
    elif roll < 0.2 and len(line) > 1:
        del line[rng.randrange(1, len(line))]
    elif roll < 0.3 and len(line) > 1:
        w = line[rng.randrange(1, len(line))]
        line.insert(rng.randrange(1, len(line) + 1), w)
    return line


def make_safe(argv, rng):
    """What the line may do: a run verb runs for real only on local_cwd with a harmless entrypoint,
    else it is a dry run; `ui` listens on loopback."""
    path = " ".join(argv[:2]) if len(argv) > 1 and argv[0] in ("sweep", "pipeline", "composite") else argv[0]
    if argv[0] == "ui":
        out, skip = [], False
        for w in argv:
            if skip:
                skip = False
                continue
            if w == "--host":
                skip = True
                continue
            if not w.startswith("--host="):
                out.append(w)
        return out + ["--host", "127.0.0.1"]
    if path not in RUN_VERBS:
        return argv
    if "--dryrun" in argv or rng.random() < 0.7:
        return argv if "--dryrun" in argv else argv[:len(path.split())] + ["--dryrun"] + argv[len(path.split()):]
    head = path.split()
    if path == "run":
        return head + ["-s", "local_cwd", "--wait"] + rng.choice(HARMLESS)
    if path == "sweep run":
        return head + ["-s", "local_cwd", "--wait", "-p", "x=1,2", "--max_parallel", "2"] + rng.choice(HARMLESS)
    if path == "pipeline run":
        return head + ["--wait", rng.choice(["flow.yaml", "bad.yaml", "empty.yaml"])]
    return head + ["--dryrun"] + argv[len(head):]


ENGINE_COMMANDS = {"sbatch", "squeue", "scancel", "sinfo", "sacct", "scontrol", "srun", "salloc", "sstat", "sattach",
                   "docker", "podman", "dockerd", "ray", "kubectl"}


def without_engines(bin_dir, path):
    """A PATH of one directory: every command on `path` but the engines' clients, as on a machine
    with none installed (Slurm's clients with no configuration retry for a minute)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for d in path.split(":"):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            link = bin_dir / name
            if name in ENGINE_COMMANDS or link.exists() or link.is_symlink():
                continue
            target = pathlib.Path(d) / name
            if os.access(target, os.X_OK) and not target.is_dir():
                link.symlink_to(target)
    return bin_dir


def workspace(root):
    """The temporary world a line runs in: its own state, HOME and files; engines unreachable."""
    cwd = root / "w" / "x" / "y" / "cwd"  # deep: `../../etc/passwd` and the like stay inside root
    (cwd).mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    (cwd / "flow.yaml").write_text("steps:\n  a: {component: utils.sh, args: [true]}\n"
                                   "  b: {component: utils.echo, args: [--msg, hi], depends_on: a}\n")
    (cwd / "bad.yaml").write_text("steps: [\n  {{{ ((( \x7f\n")
    (cwd / "empty.yaml").write_text("")
    (cwd / "comp.py").write_text("def main(msg: str = 'x'):\n    raise SystemExit(3)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHX_", "SLURM", "RAY_", "KUBE"))}
    env.update(TORCHX_STATE_DIR=str(root / "state"), HOME=str(root / "home"), XDG_CONFIG_HOME=str(root / "home"),
               PATH=str(without_engines(root / "bin", os.environ.get("PATH", "/usr/bin:/bin"))),
               DOCKER_HOST="unix:///nonexistent/docker.sock",
               RAY_ADDRESS="http://127.0.0.1:9", KUBECONFIG="/nonexistent/kubeconfig", NO_COLOR="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0"),
               UBSAN_OPTIONS=os.environ.get("UBSAN_OPTIONS", "print_stacktrace=1"))
    return cwd, env


def watch_line(argv):
    """Lines that run for as long as they are asked to: a server, a watch, a profile's sampling."""
    return argv[:1] in (["ui"], ["top"]) or (argv[:1] == ["log"] and ("-t" in argv or "--tail" in argv))


def limit_of(argv):
    """How long a line may run: a watch stops at WATCH_LIMIT_S; a profile samples for its
    --duration (1 s by default here), then has LIMIT_S like any line."""
    if watch_line(argv):
        return WATCH_LIMIT_S
    if argv[:2] == ["debug", "profile"]:
        for i, w in enumerate(argv):
            value = argv[i + 1] if w == "--duration" and i + 1 < len(argv) else (
                w.split("=", 1)[1] if w.startswith("--duration=") else None)
            try:
                if value is not None:
                    return LIMIT_S + min(3600.0, max(0.0, float(value)))
            except ValueError:
                pass
        return LIMIT_S + 5
    return LIMIT_S


def run_line(argv, cwd, env, seen=None):
    """None, or why the line is a finding. `seen` counts the exit codes."""
    limit = limit_of(argv)
    try:
        proc = subprocess.Popen([torchx_bin(), *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:  # E2BIG: more than the kernel takes; no line a user could type
        return None if e.errno == 7 else f"could not start: {e}"
    try:
        _, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it ended just then
            pass
        _, err = proc.communicate()
        return None if watch_line(argv) else f"hung past {limit:.0f} s"
    text = err.decode("utf-8", "replace")
    if seen is not None:
        seen[proc.returncode] = seen.get(proc.returncode, 0) + 1
    for word in CRASH_WORDS:
        if word in text:
            return f"crashed ({word}): {text[-2000:]}"
    if proc.returncode < 0:
        return f"killed by signal {-proc.returncode}: {text[-2000:]}"
    if proc.returncode not in EXIT_CODES:
        return f"exit code {proc.returncode} is outside the CLI's table: {text[-2000:]}"
    if proc.returncode != 0 and not text.strip():
        return f"exit code {proc.returncode} with nothing said on stderr"
    return None


def stop_leftovers(root):
    """Every process whose environment names this run's state directory (supervisors, drivers,
    replicas the harmless runs left), stopped."""
    marker = f"TORCHX_STATE_DIR={root / 'state'}".encode()
    for _ in range(3):
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            try:
                if marker in pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                    found.append(int(pid))
            except OSError:
                continue
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.5)


def save(findings_dir, n, argv, why):
    findings_dir.mkdir(parents=True, exist_ok=True)
    path = findings_dir / f"finding-{n:04d}.json"
    path.write_text(json.dumps({"argv": argv, "why": why}, indent=1))
    return path


MAX_FINDINGS = 20  # then the stage stops: one bug tends to be found many times over


def fuzz(seconds, seed, findings_dir, workers):
    if subprocess.run([torchx_bin(), "version"], capture_output=True, timeout=60).returncode != 0:
        print(f"cli_fuzz: {torchx_bin()} does not run (`torchx version` failed)", flush=True)
        return 1
    table = grammar()
    print(f"cli_fuzz: {sum(len(v) for v in table.values())} options over {len(table)} verbs; seed {seed}; "
          f"{seconds} s", flush=True)
    root = pathlib.Path(tempfile.mkdtemp(prefix="torchx-cli-fuzz-"))
    cwd, env = workspace(root)
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    counts = {"lines": 0, "findings": 0}
    seen = {}

    def worker(k):
        rng = random.Random(seed * 1000 + k)
        while time.monotonic() < deadline and counts["findings"] < MAX_FINDINGS:
            argv = make_safe(generate(rng, table), rng)
            why = run_line(argv, cwd, env, seen)
            with lock:
                counts["lines"] += 1
                if why:
                    counts["findings"] += 1
                    path = save(findings_dir, counts["findings"], argv, why)
                    print(f"cli_fuzz: FINDING {path}: {why[:300]}\n  argv: {json.dumps(argv)[:1000]}", flush=True)

    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop_leftovers(root)
        shutil.rmtree(root, ignore_errors=True)
    codes = ", ".join(f"{n} exited {rc}" for rc, n in sorted(seen.items()))
    print(f"cli_fuzz: {counts['lines']} lines ({codes}), {counts['findings']} findings", flush=True)
    return 1 if counts["findings"] else 0


def replay(corpus):
    files = sorted(pathlib.Path(corpus).glob("*.json"))
    if not files:
        print(f"cli_fuzz: no corpus in {corpus}", file=sys.stderr)
        return 1
    root = pathlib.Path(tempfile.mkdtemp(prefix="torchx-cli-replay-"))
    cwd, env = workspace(root)
    failed = 0
    try:
        for f in files:
            entry = json.loads(f.read_text())
            # {"repeat": "(", "times": 10000} stands for a long word
            argv = [a if isinstance(a, str) else a["repeat"] * a["times"] for a in entry["argv"]]
            seen = {}
            why = run_line(argv, cwd, env, seen)
            if not why and "exit" in entry and entry["exit"] not in seen:
                why = f"exited {list(seen)}, not {entry['exit']}"
            if why:
                failed += 1
                print(f"cli_fuzz: {f.name}: {why[:2000]}", flush=True)
    finally:
        stop_leftovers(root)
        shutil.rmtree(root, ignore_errors=True)
    print(f"cli_fuzz: replayed {len(files)} lines, {failed} failed", flush=True)
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=100)
    p.add_argument("--seed", type=int, default=None, help="default: from the clock (printed)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--findings", default=str(pathlib.Path.cwd() / "cli-fuzz-findings"))
    p.add_argument("--replay", metavar="CORPUS_DIR")
    a = p.parse_args()
    if a.replay:
        return replay(a.replay)
    seed = a.seed if a.seed is not None else int(time.time())
    return fuzz(a.seconds, seed, pathlib.Path(a.findings), a.workers)


if __name__ == "__main__":
    sys.exit(main())

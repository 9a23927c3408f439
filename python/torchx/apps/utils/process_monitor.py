"""Runs a command and stops it when a condition is met: --exit_on_file appears, or --timeout
seconds pass. With --start_on_file it waits for that file before starting. On stop it sends
SIGTERM, then SIGKILL after --kill_timeout seconds. Exits with the command's exit code (or 0 when
it was stopped on purpose). The app behind ``metrics.tensorboard``.

    python -m torchx.apps.utils.process_monitor --timeout 60 --exit_on_file /tmp/done -- cmd args
"""

import argparse
import os
import subprocess
import sys
import time
from typing import List, Optional


def _exists(path: str) -> bool:
    if not path:
        return False
    if path.startswith("file://"):
        path = path[len("file://"):]
    if "://" not in path:
        return os.path.exists(path)
    import fsspec

    fs, _, paths = fsspec.get_fs_token_paths(path)
    return fs.exists(paths[0])


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timeout", type=float, default=60 * 60)
    p.add_argument("--start_on_file", type=str, default="")
    p.add_argument("--exit_on_file", type=str, default="")
    p.add_argument("--poll_rate", type=float, default=5.0)
    p.add_argument("--kill_timeout", type=float, default=60.0)
    p.add_argument("entrypoint", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = args.entrypoint[1:] if args.entrypoint[:1] == ["--"] else args.entrypoint
    if not cmd:
        p.error("no command given (put it after --)")

    deadline = time.monotonic() + args.timeout
    while args.start_on_file and not _exists(args.start_on_file):
        if time.monotonic() >= deadline:
            print(f"timed out waiting for {args.start_on_file}")
            return 0
        time.sleep(min(args.poll_rate, max(0.0, deadline - time.monotonic())))

    print(f"starting {cmd}")
    proc = subprocess.Popen(cmd)
    while True:
        try:
            return proc.wait(timeout=min(args.poll_rate, max(0.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            pass
        if _exists(args.exit_on_file) or time.monotonic() >= deadline:
            break
    reason = "exit file found" if _exists(args.exit_on_file) else "timeout reached"
    print(f"{reason}, terminating {cmd}")
    proc.terminate()
    try:
        proc.wait(timeout=args.kill_timeout)
    except subprocess.TimeoutExpired:
        print("still running after kill_timeout, killing")
        proc.kill()
        proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""What the cluster tests of `torchx debug stack` share: the hung job (hang_rank1.py) put in a
job's directory, and the wait until its dump shows rank 0 in all_reduce and rank 1 in stuck_here."""

import json
import pathlib
import shutil
import time

SCRIPT = pathlib.Path(__file__).resolve().parent / "hang_rank1.py"


def put_script(directory: pathlib.Path) -> None:
    shutil.copy(SCRIPT, directory / "hang.py")


def wait_for_the_hang(torchx, handle: str, timeout: float = 180):
    """`torchx debug stack --json` until both ranks stand where they stay (a dump fails while the
    replicas start): the dump and its groups by innermost function."""
    deadline = time.monotonic() + timeout
    dump, groups = {}, {}
    while time.monotonic() < deadline:
        res = torchx("debug", "stack", handle, "--json", check=False)
        if res.returncode == 0:
            dump = json.loads(res.stdout)
            groups = {g["innermost"]["function"]: g for g in dump["groups"] if g["innermost"]}
            if "all_reduce" in groups and "stuck_here" in groups:
                break
        time.sleep(2)
    assert groups.get("all_reduce", {}).get("count") == 1 and groups.get("stuck_here", {}).get("count") == 1, dump
    return dump, groups

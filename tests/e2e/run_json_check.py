#!/usr/bin/env python3
"""Compares `torchx run --json` output (stdin) with torchx-nightly's recorded for the same kind of
run (golden/torchx_nightly_run_json.json): the same keys, at the top and in each role of a dry
run's app, values of the same JSON types, and the expected state. Values themselves differ (ids,
paths, the back-end's request).

Usage: run_json_check.py dryrun|submitted|failed   (exit 0: matches; 1: differs, with why)
"""

import json
import sys
from pathlib import Path

GOLDEN = Path(__file__).with_name("golden") / "torchx_nightly_run_json.json"


def kind(v: object) -> str:
    return "null" if v is None else type(v).__name__


def same_shape(ours: dict, theirs: dict, where: str) -> list:
    errors = []
    if set(ours) != set(theirs):
        errors.append(f"{where}: keys {sorted(ours)} != nightly's {sorted(theirs)}")
    for key in set(ours) & set(theirs):
        # null where nightly has a value is a type TorchX's schema allows (state, ui_url, log_dir)
        if ours[key] is not None and theirs[key] is not None and kind(ours[key]) != kind(theirs[key]):
            errors.append(f"{where}.{key}: {kind(ours[key])} != nightly's {kind(theirs[key])}")
    return errors


def main() -> int:
    case = sys.argv[1]
    golden = json.loads(GOLDEN.read_text())
    theirs = golden[case]["stdout"] if case == "failed" else golden[case]
    lines = [line for line in sys.stdin.read().splitlines() if line.strip()]
    if len(lines) != 1:
        print(f"stdout must be exactly one JSON line, got {len(lines)}: {lines!r}")
        return 1
    ours = json.loads(lines[0])
    errors = same_shape(ours, theirs, "run --json")
    if case == "dryrun":
        for i, (role, nightly_role) in enumerate(zip(ours["app"]["roles"], theirs["app"]["roles"])):
            errors += same_shape(role, nightly_role, f"app.roles[{i}]")
    else:
        if ours["state"] != theirs["state"]:
            errors.append(f"state {ours['state']!r} != nightly's {theirs['state']!r}")
        if not ours["handle"].endswith("/" + ours["app_id"]) or not ours["handle"].startswith(ours["scheduler"] + "://"):
            errors.append(f"handle {ours['handle']!r} disagrees with app_id and scheduler")
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

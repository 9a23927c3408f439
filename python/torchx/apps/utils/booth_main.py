"""Evaluates the Booth function f(x1, x2) = (x1 + 2 x2 - 7)^2 + (2 x1 + x2 - 5)^2 (minimum 0 at
(1, 3)) and records {"booth_eval": f} for the trial in a result tracker. The app behind
``utils.booth``, the hyper-parameter search example Ax drives."""

import argparse
import sys
from typing import List, Optional

from torchx.runtime.tracking import FsspecResultTracker


def booth(x1: float, x2: float) -> float:
    return (x1 + 2 * x2 - 7) ** 2 + (2 * x1 + x2 - 5) ** 2


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--x1", type=float, required=True)
    p.add_argument("--x2", type=float, required=True)
    p.add_argument("--trial_idx", type=int, default=0)
    p.add_argument("--tracker_base", type=str, default="/tmp/torchx-util-booth")
    args = p.parse_args(argv)
    value = booth(args.x1, args.x2)
    FsspecResultTracker(args.tracker_base)[args.trial_idx] = {"booth_eval": value}
    print(f"booth({args.x1}, {args.x2}) = {value} (trial {args.trial_idx}, tracker {args.tracker_base})")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Copies one file from --src to --dst, streaming in --bufsize chunks. Local paths and file://
URLs work as is; other URLs (s3://, gs://, ...) need fsspec. The app behind ``utils.copy``."""

import argparse
import os
import shutil
import sys
from typing import BinaryIO, List, Optional, cast


def _open(url: str, mode: str) -> BinaryIO:
    local = url[len("file://"):] if url.startswith("file://") else (None if "://" in url else url)
    if local is not None:
        if "w" in mode:
            os.makedirs(os.path.dirname(os.path.abspath(local)), exist_ok=True)
        return cast(BinaryIO, open(local, mode))
    import fsspec

    return fsspec.open(url, mode).open()


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--src", type=str, required=True)
    p.add_argument("--dst", type=str, required=True)
    p.add_argument("--bufsize", type=int, default=64 * 1024 * 1024)
    args = p.parse_args(argv)
    print(f"copying {args.src} to {args.dst}")
    with _open(args.src, "rb") as src, _open(args.dst, "wb") as dst:
        shutil.copyfileobj(src, dst, args.bufsize)
    print("done")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Registers a model archive (.mar) with a TorchServe management API: fetches the archive, serves
it over HTTP on --port from the address that routes to the management API, and POSTs
``<management_api>/models?url=<archive url>&<params>`` so TorchServe downloads it. The app behind
``serve.torchserve``. --dryrun only checks the arguments."""

import argparse
import os
import shutil
import socket
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import List, Optional

# TorchServe's register-a-model parameters.
TORCHSERVE_PARAMS = (
    "model_name", "handler", "runtime", "batch_size", "max_batch_delay",
    "initial_workers", "synchronous", "response_timeout",
)


def _address_towards(url: str) -> str:
    parsed = urllib.parse.urlparse(url)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:  # no packet is sent
        s.connect((parsed.hostname or "127.0.0.1", parsed.port or 80))
        return s.getsockname()[0]


def _fetch(src: str, dst: str) -> None:
    local = src[len("file://"):] if src.startswith("file://") else (None if "://" in src else src)
    if local is not None:
        shutil.copyfile(local, dst)
        return
    import fsspec

    with fsspec.open(src, "rb") as f, open(dst, "wb") as out:
        shutil.copyfileobj(f, out)


def main(argv: Optional[List[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model_path", required=True)
    p.add_argument("--management_api", required=True)
    p.add_argument("--timeout", type=int, default=60)
    p.add_argument("--port", type=int, default=8222)
    p.add_argument("--dryrun", action="store_true")
    for name in TORCHSERVE_PARAMS:
        p.add_argument(f"--{name}", type=str)
    args = p.parse_args(argv)
    if args.dryrun:
        print("serve: arguments ok (dry run)")
        return

    with tempfile.TemporaryDirectory() as tmp:
        name = f"{args.model_name or 'model'}_{os.urandom(6).hex()}.mar"
        _fetch(args.model_path, os.path.join(tmp, name))
        host = _address_towards(args.management_api)
        server = ThreadingHTTPServer((host, args.port), partial(SimpleHTTPRequestHandler, directory=tmp))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            model_url = f"http://{host}:{server.server_address[1]}/{name}"
            query = {"url": model_url}
            query.update({k: getattr(args, k) for k in TORCHSERVE_PARAMS if getattr(args, k) is not None})
            register = f"{args.management_api.rstrip('/')}/models?{urllib.parse.urlencode(query)}"
            print(f"registering {model_url} with {args.management_api}")
            req = urllib.request.Request(register, method="POST")
            with urllib.request.urlopen(req, timeout=args.timeout) as resp:
                print(resp.read().decode("utf-8", "replace"))
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])

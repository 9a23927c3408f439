"""``Tee``: copies what is written to several files (a replica's stdout and stderr files) into one
output as it arrives, on a background thread (TorchX's torchx.schedulers.streams). The local
scheduler's own combined log is written by its supervisor; this is for Python schedulers."""

import io
import os
import threading
import time
from typing import List


class Tee:
    _POLL_S = 0.1
    _CHUNK = 64 * 1024

    def __init__(self, out: io.FileIO, *sources: str) -> None:
        if not sources:
            raise ValueError("Tee needs at least one source file")
        self.out = out
        self._lock = threading.Lock()
        self.streams: List[io.FileIO] = []
        for path in sources:
            f = io.open(path, "rb", buffering=0)
            os.set_blocking(f.fileno(), False)
            self.streams.append(f)  # type: ignore[arg-type]
        self._closed = False
        self.thread = threading.Thread(target=self._copy, daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        while True:
            # Read the flag before the pass: stop only after a pass that began after close() and
            # found nothing, so nothing written before close() is lost.
            closing = self._closed
            copied = False
            for f in self.streams:
                data = f.read(self._CHUNK)
                if data:
                    copied = True
                    self.write(data)
            if not copied:
                if closing:
                    return
                time.sleep(self._POLL_S)

    def write(self, data: bytes) -> int:
        with self._lock:
            return self.out.write(data)

    def close(self) -> None:
        """Copies what remains, stops the thread, closes the sources and the output."""
        if self._closed:
            return
        self._closed = True
        self.thread.join()
        with self._lock:
            for f in self.streams:
                f.close()
            self.out.close()

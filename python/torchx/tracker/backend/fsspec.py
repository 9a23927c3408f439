"""The ``fsspec`` tracker: each run's metadata, artifacts and sources kept as small JSON files under
a root directory on any fsspec file system (the local disk by default), in TorchX's layout so either
package reads what the other wrote:

``<root>/<run>/metadata/<ns>``   ``{"metadata": {...}}``, one file per ``add_metadata`` call
``<root>/<run>/artifacts/<ns>``  ``{"name": ..., "path": ..., "metadata": ...}``
``<root>/<run>/sources/<src>``   the source run's artifact names, one per line
``<root>/<src>/descendants/<run>``

where ``<run>`` is the run id in base32 (run ids are app handles, ``scheduler://session/id``) and
``<ns>`` the write time in nanoseconds, so a run's reports read back in the order they were made.
``torchx sweep`` reads the metadata files of its trials (``src/sweeps/metrics.h``).

Configured by a ``key=value`` file (``create(config_file)``): ``protocol`` and ``root_path`` are
required; other keys (``a.b=c`` nests) go to the file system's constructor.
"""

import base64
import json
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional

from torchx.tracker.api import Lineage, TrackerArtifact, TrackerBase, TrackerSource


def _encode(run_id: str) -> str:
    return base64.b32encode(run_id.encode("utf-8")).decode("ascii")


def _decode(name: str) -> str:
    return base64.b32decode(name).decode("utf-8")


class FsspecTracker(TrackerBase):
    def __init__(self, fs: Any, root_dir: str) -> None:
        self.fs = fs
        self.root_dir = root_dir

    def _dir(self, run_id: str, *parts: str) -> str:
        return os.path.join(self.root_dir, _encode(run_id), *parts)

    def _write(self, run_id: str, category: str, entry: Mapping[str, object]) -> None:
        d = self._dir(run_id, category)
        self.fs.makedirs(d, exist_ok=True)
        path = os.path.join(d, str(time.time_ns()))
        while self.fs.exists(path):  # two writes in one clock tick keep their order
            path = os.path.join(d, str(time.time_ns()))
        with self.fs.open(path, "w") as f:
            json.dump(entry, f)

    def _read(self, run_id: str, category: str) -> List[Mapping[str, Any]]:
        d = self._dir(run_id, category)
        if not self.fs.exists(d):
            return []
        names = sorted(self.fs.ls(d, detail=False), key=lambda p: (len(os.path.basename(p)), os.path.basename(p)))
        out = []
        for p in names:
            with self.fs.open(p, "r") as f:
                out.append(json.load(f))
        return out

    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        self._write(run_id, "metadata", {"metadata": kwargs})

    def metadata(self, run_id: str) -> Mapping[str, object]:
        merged: Dict[str, object] = {}
        for entry in self._read(run_id, "metadata"):
            merged.update(entry.get("metadata", {}))
        return merged

    def add_artifact(self, run_id: str, name: str, path: str, metadata: Optional[Mapping[str, object]] = None) -> None:
        self._write(run_id, "artifacts", {"name": name, "path": path, "metadata": metadata})

    def artifacts(self, run_id: str) -> Mapping[str, TrackerArtifact]:
        out: Dict[str, TrackerArtifact] = {}
        for entry in self._read(run_id, "artifacts"):
            name = str(entry["name"])
            out[name] = TrackerArtifact(name, str(entry["path"]), entry.get("metadata"))
        return out

    def _append_line(self, path: str, line: str) -> None:
        lines: List[str] = []
        if self.fs.exists(path):
            with self.fs.open(path, "r") as f:
                lines = f.read().splitlines()
        if line not in lines:
            lines.append(line)
            with self.fs.open(path, "w") as f:
                f.write("\n".join(lines) + "\n")

    def add_source(self, run_id: str, source_id: str, artifact_name: Optional[str] = None) -> None:
        sources = self._dir(run_id, "sources")
        self.fs.makedirs(sources, exist_ok=True)
        self._append_line(os.path.join(sources, _encode(source_id)), artifact_name or "")
        descendants = self._dir(source_id, "descendants")
        self.fs.makedirs(descendants, exist_ok=True)
        self._append_line(os.path.join(descendants, _encode(run_id)), artifact_name or "")

    def sources(self, run_id: str, artifact_name: Optional[str] = None) -> Iterable[TrackerSource]:
        d = self._dir(run_id, "sources")
        if not self.fs.exists(d):
            return []
        out = []
        for p in self.fs.ls(d, detail=False):
            with self.fs.open(p, "r") as f:
                names = f.read().splitlines()
            for n in names:
                if artifact_name is None or n == artifact_name:
                    out.append(TrackerSource(_decode(os.path.basename(p)), n or None))
        return out

    def run_ids(self, **kwargs: str) -> Iterable[str]:
        parent = kwargs.get("parent_run_id")
        if parent is not None:
            d = self._dir(parent, "descendants")
            return [_decode(os.path.basename(p)) for p in self.fs.ls(d, detail=False)] if self.fs.exists(d) else []
        if not self.fs.exists(self.root_dir):
            return []
        return [_decode(os.path.basename(p)) for p in self.fs.ls(self.root_dir, detail=False)]

    def lineage(self, run_id: str) -> Lineage:
        raise NotImplementedError("the fsspec tracker keeps sources and descendants, not a lineage graph")

    def __repr__(self) -> str:
        return f"<FsspecTracker: root_path={self.root_dir}>"


def _read_config(config_file: str) -> Dict[str, Any]:
    config: Dict[str, Any] = {}
    with open(config_file) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, _, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if key.endswith(".") or not key:
                raise ValueError(f"tracker config {config_file}: invalid key `{key}`")
            node = config
            *parents, leaf = key.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[leaf] = value
    return config


def create(config_file: str) -> TrackerBase:
    """The ``fsspec`` tracker's factory (the ``torchx.tracker`` entry point), from its config file."""
    import fsspec

    config = _read_config(config_file)
    missing = [k for k in ("protocol", "root_path") if k not in config]
    if missing:
        raise ValueError(f"tracker config {config_file}: missing {', '.join(missing)}")
    protocol = config.pop("protocol")
    root = config.pop("root_path")
    return FsspecTracker(fsspec.filesystem(protocol, **config), root)


__all__ = ["FsspecTracker", "create"]

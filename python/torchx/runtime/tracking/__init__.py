"""Result trackers: where an app leaves results for whoever launched it (e.g. Ax reads a trial's
metric from ``FsspecResultTracker(tracker_base)[trial_index]``).

Layout, shared with TorchX: one pretty-printed JSON object per key, at ``<tracker_base>/<key>``.
``tracker_base`` is a local path, a ``file://`` URL, or any fsspec URL when fsspec is installed.
"""

import abc
import json
import os
from typing import Dict, Union

KeyType = Union[int, str]
ResultType = Union[int, float, str]


class ResultTracker(abc.ABC):
    """A key -> {name: value} store. ``tracker[key] = {...}`` puts, ``tracker[key]`` gets (an
    empty dict for a key never put)."""

    def __getitem__(self, key: KeyType) -> Dict[str, ResultType]:
        return self.get(key)

    def __setitem__(self, key: KeyType, results: Dict[str, ResultType]) -> None:
        self.put(key, **results)

    @abc.abstractmethod
    def put(self, key: KeyType, **results: ResultType) -> None: ...

    @abc.abstractmethod
    def get(self, key: KeyType) -> Dict[str, ResultType]: ...


def _local_path(url: str) -> Union[str, None]:
    if url.startswith("file://"):
        return url[len("file://"):]
    return None if "://" in url else url


class FsspecResultTracker(ResultTracker):
    """Stores each key's results as JSON in the file ``<tracker_base>/<key>``."""

    def __init__(self, tracker_base: str) -> None:
        self._tracker_base = tracker_base

    def put(self, key: KeyType, **results: ResultType) -> None:
        data = json.dumps(results, indent=2).encode("utf-8")
        local = _local_path(self._tracker_base)
        if local is not None:
            path = os.path.join(local, str(key))
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:  # write then rename: readers never see half a file
                f.write(data)
            os.replace(tmp, path)
            return
        import fsspec  # remote URLs need fsspec

        fsspec.get_mapper(self._tracker_base, create=True)[str(key)] = data

    def get(self, key: KeyType) -> Dict[str, ResultType]:
        local = _local_path(self._tracker_base)
        try:
            if local is not None:
                with open(os.path.join(local, str(key)), "rb") as f:
                    return json.loads(f.read().decode("utf-8"))
            import fsspec

            return json.loads(fsspec.get_mapper(self._tracker_base)[str(key)].decode("utf-8"))
        except (FileNotFoundError, KeyError):
            return {}


__all__ = ["ResultTracker", "FsspecResultTracker"]

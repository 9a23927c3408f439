"""A tracker plugin for the tests (`demo_json`): runs and metadata in a JSON file named by its config."""

import json
import os
from typing import Any, Dict, Iterable, Mapping, Optional

from torchx.plugins import register
from torchx.tracker.api import Lineage, TrackerArtifact, TrackerBase, TrackerSource


class JsonFileTracker(TrackerBase):
    def __init__(self, path: str) -> None:
        self.path = path

    def _load(self) -> Dict[str, Any]:
        if not os.path.exists(self.path):
            return {}
        with open(self.path) as f:
            return json.load(f)

    def _save(self, data: Dict[str, Any]) -> None:
        with open(self.path, "w") as f:
            json.dump(data, f)

    def add_artifact(self, run_id: str, name: str, path: str, metadata: Optional[Mapping[str, object]] = None) -> None:
        data = self._load()
        data.setdefault(run_id, {"metadata": {}, "artifacts": {}})["artifacts"][name] = [path, dict(metadata or {})]
        self._save(data)

    def artifacts(self, run_id: str) -> Mapping[str, TrackerArtifact]:
        arts = self._load().get(run_id, {}).get("artifacts", {})
        return {n: TrackerArtifact(n, p, m) for n, (p, m) in arts.items()}

    def add_metadata(self, run_id: str, **kwargs: object) -> None:
        data = self._load()
        data.setdefault(run_id, {"metadata": {}, "artifacts": {}})["metadata"].update(kwargs)
        self._save(data)

    def metadata(self, run_id: str) -> Mapping[str, object]:
        return self._load().get(run_id, {}).get("metadata", {})

    def add_source(self, run_id: str, source_id: str, artifact_name: Optional[str] = None) -> None:
        pass

    def sources(self, run_id: str, artifact_name: Optional[str] = None) -> Iterable[TrackerSource]:
        return []

    def lineage(self, run_id: str) -> Lineage:
        return Lineage()

    def run_ids(self, **kwargs: str) -> Iterable[str]:
        return sorted(self._load())


@register.tracker()
def demo_json(config: Optional[str]) -> JsonFileTracker:
    return JsonFileTracker(config or "tracker.json")

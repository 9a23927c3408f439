"""The event a Runner API call produces (TorchX's torchx.runner.events.api)."""

import json
from dataclasses import dataclass, fields
from enum import Enum
from typing import Dict, Optional, Union


class SourceType(str, Enum):
    UNKNOWN = "<unknown>"
    INTERNAL = "INTERNAL"
    EXTERNAL = "EXTERNAL"


@dataclass
class TorchxEvent:
    """One Runner call: the session, scheduler and API, the app it concerned, its run config, how
    long it took (CPU and wall, microseconds) and the exception it raised, if any."""

    session: str
    scheduler: str
    api: str
    app_id: Optional[str] = None
    app_image: Optional[str] = None
    app_metadata: Optional[Dict[str, str]] = None
    runcfg: Optional[str] = None
    raw_exception: Optional[str] = None
    source: SourceType = SourceType.UNKNOWN
    cpu_time_usec: Optional[int] = None
    wall_time_usec: Optional[int] = None
    start_epoch_time_usec: Optional[int] = None
    workspace: Optional[str] = None
    exception_type: Optional[str] = None
    exception_message: Optional[str] = None
    exception_source_location: Optional[str] = None

    def __str__(self) -> str:
        return self.serialize()

    @staticmethod
    def deserialize(data: Union[str, "TorchxEvent"]) -> "TorchxEvent":
        """An event from its JSON (an event is returned as is); an unknown source is dropped."""
        if isinstance(data, TorchxEvent):
            return data
        if not isinstance(data, str):
            raise TypeError(f"expected a serialized TorchxEvent (str) or a TorchxEvent, got {type(data).__name__}")
        fields_ = json.loads(data)
        if "source" in fields_:
            try:
                fields_["source"] = SourceType(fields_["source"])
            except ValueError:
                del fields_["source"]
        return TorchxEvent(**fields_)

    def serialize(self) -> str:
        # The fields' values as they are (strings, numbers, a dict of strings): asdict's deep
        # copy of each was most of a Runner call's Python time.
        return json.dumps({f: getattr(self, f) for f in _FIELDS})


_FIELDS = tuple(f.name for f in fields(TorchxEvent))

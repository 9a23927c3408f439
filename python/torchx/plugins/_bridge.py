"""The CLI's bridge to Python plugins. The C++ CLI starts ``python -m torchx.plugins._bridge``
only when it needs a plugin it does not have (an unknown scheduler or named resource,
``torchx plugins``), and exchanges JSON lines (replies on $TORCHX_BRIDGE_FD):

  {"op": "discover", "type": "scheduler" | "named_resource" | "tracker"}
      -> {"entries": [{"name", "source", "resource"?: ..., "runopts"?: ...}], "errors": [...]}
  {"op": "scheduler", "name": ..., "session": ...}               -> {"id": n}
  {"op": "call", "id": n, "method": "dryrun" | ..., "arg": ...}  -> {"result": "..."}
  any failure                                                     -> {"error": {"type", "message"}}
"""

import json
import os
import sys
from typing import Any, Dict


def _serve() -> None:
    from torchx.plugins._registry import registry
    from torchx.plugins._scheduler_adapter import SchedulerAdapter
    from torchx.specs.api import resource_to_json

    out = os.fdopen(int(os.environ["TORCHX_BRIDGE_FD"]), "w")
    reg = registry()
    factories: Dict[str, Any] = {}
    adapters: Dict[int, SchedulerAdapter] = {}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "discover":
                provided = reg.provide(req["type"])
                entries = []
                for name, source, factory in provided["entries"]:
                    entry: Dict[str, Any] = {"name": name, "source": source}
                    if req["type"] == "named_resource":
                        try:
                            entry["resource"] = resource_to_json(factory())
                        except Exception as e:
                            provided["errors"].append((source, "python", f"named resource {name}: {e}"))
                            continue
                    if req["type"] == "scheduler":
                        factories[name] = factory
                    entries.append(entry)
                reply: Dict[str, Any] = {"entries": entries, "errors": provided["errors"]}
            elif req["op"] == "scheduler":
                adapter = SchedulerAdapter(factories[req["name"]](req["session"]), req["name"])
                adapters[len(adapters) + 1] = adapter
                reply = {"id": len(adapters), "runopts": adapter.runopts_json()}
            elif req["op"] == "call":
                reply = {"result": adapters[req["id"]].json_call(req["method"], req.get("arg"))}
            else:
                reply = {"error": {"type": "ValueError", "message": f"unknown op {req.get('op')!r}"}}
        except Exception as e:
            reply = {"error": {"type": type(e).__name__, "message": str(e)}}
        out.write(json.dumps(reply, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()

"""The CLI's bridge to Python component files (``torchx run ./file.py:fn ...``).

The C++ CLI starts ``python -m torchx.components._bridge`` only when such a component is named,
writes one JSON request per line on stdin and reads one JSON reply per line from the file
descriptor in $TORCHX_BRIDGE_FD (stdout stays free for the component's own prints, which the CLI
sends to stderr):

  {"op": "describe", "component": "./f.py:trainer"} -> {"spec": <ComponentSpec JSON>}
  {"op": "build", "values": {...}, "varargs": [...]} -> {"app": <AppDef JSON>}
  any failure                                         -> {"error": {"type": ..., "message": ...}}
"""

import json
import os
import sys
import traceback
from typing import Any, Callable, Dict, Optional


def _serve() -> None:
    from torchx.components._loader import call_with_values, component_spec, load_component_fn
    from torchx.specs.api import to_json

    out = os.fdopen(int(os.environ["TORCHX_BRIDGE_FD"]), "w")
    fn: Optional[Callable[..., Any]] = None
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "describe":
                fn = load_component_fn(req["component"])
                reply: Dict[str, Any] = {"spec": component_spec(req["component"], fn)}
            elif req["op"] == "build" and fn is not None:
                reply = {"app": to_json(call_with_values(fn, req["values"], req["varargs"]))}
            else:
                reply = {"error": {"type": "ValueError", "message": f"bridge: unexpected request {req.get('op')!r}"}}
        except Exception as e:  # every failure goes back to the CLI, which prints it
            message = str(e)
            if not type(e).__name__.startswith("Component") and not isinstance(e, (ValueError, TypeError)):
                message += "\n" + "".join(traceback.format_exception(e)).rstrip()
            reply = {"error": {"type": type(e).__name__, "message": message}}
        out.write(json.dumps(reply, default=str) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()

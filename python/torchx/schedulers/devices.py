"""Host devices for a Resource's named devices (TorchX's torchx.schedulers.devices): EFA and
Neuron devices become device mounts. The mapping is the core's (local_docker uses it too)."""

import warnings
from typing import Dict, List

from torchx.specs.api import DeviceMount


def get_device_mounts(devices: Dict[str, int]) -> List[DeviceMount]:
    """``{"vpc.amazonaws.com/efa": 2}`` -> mounts of /dev/infiniband/uverbs0 and 1; a device name
    without a mapping is skipped with a warning."""
    from torchx._core import core

    out: List[DeviceMount] = []
    for name, count in devices.items():  # one at a time: the caller's order is kept
        mounts, unknown = core().device_mounts({name: count})
        if unknown:
            warnings.warn(f"Could not find named device: {name}")
        out += [DeviceMount(src_path=src, dst_path=dst, permissions=perm) for src, dst, perm in mounts]
    return out

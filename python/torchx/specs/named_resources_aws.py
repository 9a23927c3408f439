"""Named resources for AWS EC2 instance types (``aws_p4d.24xlarge``, ...): cpu, gpu and memory
(less a 4% tax for the system), the instance type as the ``node.kubernetes.io/instance-type``
capability, and EFA / Neuron devices. The table is the core's (the CLI sees the same); each
``aws_<family>_<size>()`` function returns a fresh Resource, as in TorchX."""

import warnings
from typing import Callable, Mapping, Optional

from torchx.specs._builtin_resources import factories
from torchx.specs.api import Resource

EFA_DEVICE = "vpc.amazonaws.com/efa"
NEURON_DEVICE = "aws.amazon.com/neurondevice"
MEM_TAX = 0.96
K8S_ITYPE = "node.kubernetes.io/instance-type"
GiB: int = 1024

NAMED_RESOURCES: Mapping[str, Callable[[], Resource]] = factories("aws_")
globals().update({fn.__name__: fn for fn in NAMED_RESOURCES.values()})


def instance_type_from_resource(resource: Resource) -> Optional[str]:
    """The resource's instance type capability; None (with a warning: multi-node jobs on mixed
    node pools need it) when it has none."""
    instance_type = resource.capabilities.get(K8S_ITYPE)
    if instance_type is None:
        warnings.warn(
            "Cannot determine resource instance type which can cause issues for non-homogeneous compute"
            " environments and multinode jobs. Consider providing the torchx.specs.named_resources_aws:K8S_ITYPE"
            f" ({K8S_ITYPE}) resource capability.",
            stacklevel=2,
        )
    return instance_type

from enum import Enum


class PluginType(str, Enum):
    """What a plugin provides. Values are TorchX's entry-point group names."""

    SCHEDULER = "torchx.schedulers"
    TRACKER = "torchx.tracker"
    NAMED_RESOURCE = "torchx.named_resources"


# The core's names for each type (its registry also has "component" and "device").
CORE_NAMES = {
    PluginType.SCHEDULER: "scheduler",
    PluginType.TRACKER: "tracker",
    PluginType.NAMED_RESOURCE: "named_resource",
}

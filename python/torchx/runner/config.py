""".torchxconfig from Python (TorchX's torchx.runner.config).

INI files give defaults to schedulers (``[local_cwd]``), components (``[component:dist.ddp]``) and
CLI verbs (``[cli:run]``). Lookup: ``$TORCHXCONFIG`` alone when set (an empty value reads no file;
a missing file is an error), else ``.torchxconfig`` in each of ``dirs`` (default: ``$HOME``, then
the working directory); the first file to set a key wins and values already in a cfg are never
overridden. The files are found and read by ``torchx.util.torchxconfig`` (the core's INI reader,
the CLI's, so the same lines are accepted or refused; the tracker reads the same way); scheduler
values are cast as ``-cfg`` values are (``runopt.cast_to_type``), ``None`` being None.
"""

import logging
from typing import Dict, List, Optional, TextIO

from torchx._core import core
from torchx.schedulers import get_scheduler_factories
from torchx.specs.api import CfgVal, runopts
from torchx.util.torchxconfig import (
    CONFIG_FILE,
    CONFIG_PREFIX_DELIM,
    find_configs,
    get_config,
    get_configs,
    load_sections,
)
from torchx.util.torchxconfig import DEFAULT_CONFIG_DIRS as _DEFAULT_CONFIG_DIRS
from torchx.util.torchxconfig import entries as _entries

# TorchX's knob: tools and tests patch it; the shared reader looks here once this module is loaded.
DEFAULT_CONFIG_DIRS: List[str] = list(_DEFAULT_CONFIG_DIRS)

_NONE = "None"

log: logging.Logger = logging.getLogger(__name__)

__all__ = [
    "CONFIG_FILE", "CONFIG_PREFIX_DELIM", "DEFAULT_CONFIG_DIRS", "apply", "dump", "find_configs", "get_config",
    "get_configs", "get_scheduler_factories", "load", "load_sections",
]


def _run_opts(scheduler: str) -> runopts:
    factories = get_scheduler_factories()
    if scheduler not in factories:
        raise ValueError(f"`{scheduler}` is not a registered scheduler. Valid scheduler names: {', '.join(factories)}")
    return factories[scheduler]("torchx").run_opts()


def load(scheduler: str, f: TextIO, cfg: Dict[str, CfgVal]) -> None:
    """Adds ``[scheduler]``'s values from the INI text in ``f`` to ``cfg``, for keys ``cfg`` does
    not have; keys the scheduler does not declare are skipped with a warning."""
    opts = _run_opts(scheduler)
    for section, key, value in _entries(f.read(), getattr(f, "name", "<config>")):
        if section != scheduler or key in cfg:
            continue
        if value == _NONE:
            cfg[key] = None
            continue
        opt = opts.get(key)
        if opt is None:
            log.warning(
                "`%s = %s` was declared in the [%s] section of the config file but is not a runopt of `%s` scheduler,"
                " remove the entry from the config file to no longer see this warning",
                key, value, section, scheduler,
            )
            continue
        cfg[key] = opt.cast_to_type(value)


def apply(scheduler: str, cfg: Dict[str, CfgVal], dirs: Optional[List[str]] = None) -> None:
    """``load`` from every file ``find_configs(dirs)`` finds, in precedence order."""
    for path in find_configs(dirs):
        with open(path) as f:
            load(scheduler, f, cfg)


def dump(f: TextIO, schedulers: Optional[List[str]] = None, required_only: bool = False) -> None:
    """Writes a config template (``torchx configure``'s) for ``schedulers`` (default: every
    registered one): optional options with their defaults unless ``required_only``, required ones
    as ``#FIXME`` placeholders. ValueError for an unknown scheduler name."""
    names = list(schedulers) if schedulers else list(get_scheduler_factories())
    opts = [(name, _run_opts(name)._to_json()) for name in names]
    f.write(core().config_dump(opts, not required_only))

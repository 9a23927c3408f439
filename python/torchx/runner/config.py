""".torchxconfig from Python (TorchX's torchx.runner.config).

INI files give defaults to schedulers (``[local_cwd]``), components (``[component:dist.ddp]``) and
CLI verbs (``[cli:run]``). Lookup: ``$TORCHXCONFIG`` alone when set (an empty value reads no file;
a missing file is an error), else ``.torchxconfig`` in each of ``dirs`` (default: ``$HOME``, then
the working directory); the first file to set a key wins and values already in a cfg are never
overridden. The files are read by the core's INI reader (the CLI's, so the same lines are accepted
or refused); scheduler values are cast as ``-cfg`` values are (``runopt.cast_to_type``), ``None``
being None.
"""

import logging
import os
from pathlib import Path
from typing import Dict, Iterable, List, Optional, TextIO

from torchx import settings
from torchx._core import core
from torchx.schedulers import get_scheduler_factories
from torchx.specs.api import CfgVal, runopts

CONFIG_FILE = ".torchxconfig"
CONFIG_PREFIX_DELIM = ":"
DEFAULT_CONFIG_DIRS: List[str] = [str(Path.home()), str(Path.cwd())]

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


def _entries(text: str, origin: str) -> List["tuple[str, str, str]"]:
    return core().config_parse(text, origin)


def find_configs(dirs: Optional[Iterable[str]] = None) -> List[str]:
    """The config files to read, in precedence order: ``[$TORCHXCONFIG]`` when the variable is
    set ([] when it is empty; FileNotFoundError when it names no file), else the readable
    ``.torchxconfig`` of each of ``dirs`` (default ``DEFAULT_CONFIG_DIRS``)."""
    env = os.environ.get(settings.ENV_TORCHXCONFIG)
    if env is not None:
        if not env:
            return []
        if not Path(env).is_file():
            raise FileNotFoundError(f"`{settings.ENV_TORCHXCONFIG}={env}` does not exist or is not a file.")
        return [env]
    found = []
    for d in dirs or DEFAULT_CONFIG_DIRS:
        path = Path(d) / CONFIG_FILE
        if os.access(path, os.R_OK):
            found.append(str(path))
    return found


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


def load_sections(prefix: str, dirs: Optional[List[str]] = None) -> Dict[str, Dict[str, str]]:
    """``{name: {key: value}}`` of the ``[prefix:name]`` sections across the config files (the
    first file to set a key wins)."""
    sections: Dict[str, Dict[str, str]] = {}
    head = prefix + CONFIG_PREFIX_DELIM
    for path in find_configs(dirs):
        with open(path) as f:
            entries = _entries(f.read(), path)
        for section, key, value in entries:
            name = section[len(head):]
            if section.startswith(head) and name:  # `[component:]` names nothing: skipped, as TorchX
                sections.setdefault(name, {}).setdefault(key, value)
    return sections


def get_configs(prefix: str, name: str, dirs: Optional[List[str]] = None) -> Dict[str, str]:
    """The ``[prefix:name]`` section as a dict ({} if no file has it)."""
    return load_sections(prefix, dirs).get(name, {})


def get_config(prefix: str, name: str, key: str, dirs: Optional[List[str]] = None) -> Optional[str]:
    """``[prefix:name] key``, or None."""
    return get_configs(prefix, name, dirs).get(key)


def dump(f: TextIO, schedulers: Optional[List[str]] = None, required_only: bool = False) -> None:
    """Writes a config template (``torchx configure``'s) for ``schedulers`` (default: every
    registered one): optional options with their defaults unless ``required_only``, required ones
    as ``#FIXME`` placeholders. ValueError for an unknown scheduler name."""
    names = list(schedulers) if schedulers else list(get_scheduler_factories())
    opts = [(name, _run_opts(name)._to_json()) for name in names]
    f.write(core().config_dump(opts, not required_only))

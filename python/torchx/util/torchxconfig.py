"""Finding and reading ``.torchxconfig`` files: the one INI lookup that ``torchx.runner.config``
(scheduler, component and CLI defaults) and ``torchx.tracker`` (``[torchx:tracker]``,
``[tracker:<name>]``) share. It sits below both, so neither imports the other to read a file.

Lookup: ``$TORCHXCONFIG`` alone when set (an empty value reads no file; a missing file is an
error), else ``.torchxconfig`` in each of the directories (default: ``$HOME``, then the working
directory); the first file to set a key wins. The files are read by the core's INI reader (the
CLI's, so the same lines are accepted or refused).
"""

import os
import sys
from typing import Dict, Iterable, List, Optional, Tuple

from torchx import settings

CONFIG_FILE = ".torchxconfig"
CONFIG_PREFIX_DELIM = ":"
# os.path, not pathlib: pathlib (with urllib.parse) was a tenth of `import torchx.runner`.
DEFAULT_CONFIG_DIRS: List[str] = [os.path.expanduser("~"), os.getcwd()]


def default_dirs() -> List[str]:
    """Where files are looked for: ``torchx.runner.config.DEFAULT_CONFIG_DIRS`` once that module
    is loaded (TorchX's knob, which tools and tests patch), else this module's."""
    runner_config = sys.modules.get("torchx.runner.config")
    return list(getattr(runner_config, "DEFAULT_CONFIG_DIRS", DEFAULT_CONFIG_DIRS))


def entries(text: str, origin: str) -> List[Tuple[str, str, str]]:
    """(section, key, value) of INI text, in file order, by the core's reader."""
    from torchx._core import core

    return core().config_parse(text, origin)


def find_configs(dirs: Optional[Iterable[str]] = None) -> List[str]:
    """The config files to read, in precedence order: ``[$TORCHXCONFIG]`` when the variable is
    set ([] when it is empty; FileNotFoundError when it names no file), else the readable
    ``.torchxconfig`` of each of ``dirs`` (default ``default_dirs()``)."""
    env = os.environ.get(settings.ENV_TORCHXCONFIG)
    if env is not None:
        if not env:
            return []
        if not os.path.isfile(env):
            raise FileNotFoundError(f"`{settings.ENV_TORCHXCONFIG}={env}` does not exist or is not a file.")
        return [env]
    found = []
    for d in dirs or default_dirs():
        path = os.path.join(d, CONFIG_FILE)
        if os.access(path, os.R_OK):
            found.append(path)
    return found


def load_sections(prefix: str, dirs: Optional[List[str]] = None) -> Dict[str, Dict[str, str]]:
    """``{name: {key: value}}`` of the ``[prefix:name]`` sections across the config files (the
    first file to set a key wins)."""
    sections: Dict[str, Dict[str, str]] = {}
    head = prefix + CONFIG_PREFIX_DELIM
    for path in find_configs(dirs):
        with open(path) as f:
            found = entries(f.read(), path)
        for section, key, value in found:
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

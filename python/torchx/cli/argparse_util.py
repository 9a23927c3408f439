"""argparse actions that take their defaults from ``.torchxconfig``'s ``[cli:<subcommand>]``
section (TorchX's torchx.cli.argparse_util), and refuse an option given twice."""

import argparse
import logging
import sys
import weakref
from typing import Any, Dict, Optional, Sequence, Set, Union

from torchx.runner.config import get_configs

logger: logging.Logger = logging.getLogger(__name__)


class ArgOnceAction(argparse.Action):
    """Stores the value; the same option string given twice in one command line is an error
    (logged, exit 1, as TorchX's). What was seen is kept beside the namespace, not in it, so that
    ``vars(args)`` holds only the options."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Union[str, Sequence[Any], None],
        option_string: Optional[str] = None,
    ) -> None:
        _check_specified_once(namespace, option_string or self.dest)
        setattr(namespace, self.dest, values)


# id(namespace) -> the option strings given so far; an entry goes with its namespace.
_seen_options: Dict[int, Set[str]] = {}


def _check_specified_once(namespace: argparse.Namespace, option: str) -> None:
    key = id(namespace)
    if key not in _seen_options:
        _seen_options[key] = set()
        weakref.finalize(namespace, _seen_options.pop, key, None)
    if option in _seen_options[key]:
        logger.error(f"Cannot specify {option} more than once")
        sys.exit(1)
    _seen_options[key].add(option)


class torchxconfig(ArgOnceAction):
    """Default from ``[cli:<subcmd>] <dest> = value``; an option with such a default is no longer
    required."""

    _subcmd_configs: Dict[str, Dict[str, str]] = {}

    def __init__(self, subcmd: str, dest: str, option_strings: Sequence[str], required: bool = False,
                 default: Any = None, **kwargs: Any) -> None:
        configs = self._subcmd_configs.get(subcmd)
        if configs is None:
            configs = get_configs(prefix="cli", name=subcmd)
            self._subcmd_configs[subcmd] = configs
        if dest in configs:
            default, required = configs[dest], False
        super().__init__(option_strings=option_strings, dest=dest, required=required, default=default, **kwargs)


class torchxconfig_run(torchxconfig):
    def __init__(self, dest: str, option_strings: Sequence[str], **kwargs: Any) -> None:
        super().__init__("run", dest, option_strings, **kwargs)


class torchxconfig_list(torchxconfig):
    def __init__(self, dest: str, option_strings: Sequence[str], **kwargs: Any) -> None:
        super().__init__("list", dest, option_strings, **kwargs)

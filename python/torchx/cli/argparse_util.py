"""argparse actions that take their defaults from ``.torchxconfig``'s ``[cli:<subcommand>]``
section (TorchX's torchx.cli.argparse_util), and refuse an option given twice."""

import argparse
from typing import Any, Dict, Optional, Sequence, Union

from torchx.runner.config import get_configs


class ArgOnceAction(argparse.Action):
    """Stores the value; an option given twice in one command line is an error (exit 1)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Union[str, Sequence[Any], None],
        option_string: Optional[str] = None,
    ) -> None:
        seen = namespace.__dict__.setdefault("_torchx_seen_options", set())
        if self.dest in seen:
            parser.error(f"{option_string or self.dest}: given more than once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


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

"""Utility components: echo, touch, sh, python, binary, copy, booth (Ax's test function)."""

from typing import TYPE_CHECKING

from torchx.components._builtin import builtin

if TYPE_CHECKING:
    from torchx.specs import AppDef

echo = builtin("utils.echo", __name__)
touch = builtin("utils.touch", __name__)
sh = builtin("utils.sh", __name__)
python = builtin("utils.python", __name__)
binary = builtin("utils.binary", __name__)
copy = builtin("utils.copy", __name__)
booth = builtin("utils.booth", __name__)


def hydra(*overrides: str, config_name: str, config_dir: str = ".torchx") -> "AppDef":
    """An AppDef from a Hydra config: ``config_dir/config_name.yaml`` with an ``app`` key whose
    ``_target_`` is ``torchx.specs.AppDef`` (roles, resources likewise), composed with
    ``overrides`` (``role.num_replicas=2``). ``${torchx.app_id:}``, ``${torchx.replica_id:}``,
    ``${torchx.rank0_env:}`` and ``${torchx.img_root:}`` become TorchX's macros, replaced at launch.

    A Python component (Hydra instantiates Python objects): from the CLI,
    ``torchx run torchx.components.utils:hydra -cn NAME``. Needs ``pip install hydra-core``.
    """
    try:
        from hydra import compose, initialize_config_dir
        from hydra.utils import instantiate
        from omegaconf import OmegaConf
    except ImportError as e:
        raise ImportError(f"utils.hydra needs Hydra: pip install hydra-core ({e})") from e
    import os

    from torchx.specs import AppDef, macros

    # A resolver's string is taken literally, but "${...}" in it would be read as another
    # interpolation: the backslash keeps the macro as text for the scheduler to replace.
    for name, macro in (
        ("app_id", macros.app_id),
        ("replica_id", macros.replica_id),
        ("rank0_env", macros.rank0_env),
        ("img_root", macros.img_root),
    ):
        OmegaConf.register_new_resolver(f"torchx.{name}", lambda m=macro: "\\" + m, replace=True)
    with initialize_config_dir(config_dir=os.path.abspath(config_dir), version_base=None):
        cfg = compose(config_name=config_name, overrides=list(overrides))
    if "app" not in cfg:
        raise ValueError(f"config_name: `{config_name}` in {config_dir} has no `app` key (an AppDef to instantiate)")
    app = instantiate(cfg.app, _convert_="all")
    if not isinstance(app, AppDef):
        raise ValueError(f"config_name: `{config_name}`'s `app` made a {type(app).__name__}; set its _target_ to torchx.specs.AppDef")
    return app

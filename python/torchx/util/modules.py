"""Importing by dotted name."""

import importlib
import logging
from types import ModuleType
from typing import Callable, TypeVar, Union

logger: logging.Logger = logging.getLogger(__name__)

T = TypeVar("T")


def load_module(path: str) -> Union[ModuleType, Callable[..., object], None]:
    """``pkg.mod`` -> the module, ``pkg.mod:attr`` -> that attribute, None when it cannot be
    had. An absent module (or parent package) is the expected miss of an optional module and is
    silent; a module that exists but fails to import, or lacks ``attr``, is logged as a warning."""
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr) if attr else module
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        missing = e.name if isinstance(e, ModuleNotFoundError) else None
        if missing and (missing == module_name or module_name.startswith(missing + ".")):
            return None
        logger.warning("failed to load module `%s`: %s", path, e)
        return None


def import_attr(name: str, attr: str, default: T) -> T:
    """``getattr(import_module(name), attr)``, or ``default`` when the module is not installed
    (an installed module without ``attr`` is an AttributeError: that is a bug, not an absence)."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        return default
    return getattr(module, attr)

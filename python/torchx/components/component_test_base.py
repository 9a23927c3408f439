"""``ComponentTestCase``: unit-test helpers for component functions (TorchX's
torchx.components.component_test_base): ``validate`` checks that ``torchx run`` can parse the
component (as ``--help`` would), ``run_component`` runs it on a scheduler and waits."""

import os
import shutil
import tempfile
import time
import unittest
from types import ModuleType
from typing import Any, Callable, Dict, Optional

from torchx.runner import get_runner
from torchx.specs import AppDef, AppStatus
from torchx.specs.builders import _create_args_parser
from torchx.specs.finder import get_component


class ComponentTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.test_dir = tempfile.mkdtemp("torchx_component_test")
        self.old_cwd = os.getcwd()

    def tearDown(self) -> None:
        shutil.rmtree(self.test_dir, ignore_errors=True)
        os.chdir(self.old_cwd)

    def validate(self, module: ModuleType, function_name: str) -> None:
        """Fails unless ``module.function_name`` is a component the CLI can parse: a registered
        component (a builtin's function) is checked by the core's declaration, a Python function
        by the linter, as ``torchx run path/to/module.py:fn --help`` does."""
        fn = getattr(module, function_name, None)
        registered = getattr(fn, "_torchx_component", None)
        if registered:
            from torchx._core import core

            self.assertTrue(core().component_help(registered))
        else:
            path = os.path.abspath(module.__file__ or "")
            fn = get_component(f"{path}:{function_name}").fn
        with self.assertRaises(SystemExit):  # --help prints and exits
            _create_args_parser(fn).parse_args(["--help"])  # type: ignore[arg-type]

    def run_component(
        self,
        component: Callable[..., AppDef],
        args: Optional[Dict[str, Any]] = None,
        scheduler_params: Optional[Dict[str, Any]] = None,
        scheduler: str = "local_cwd",
        interval: float = 0.1,
        timeout: float = 1,
    ) -> Optional[AppStatus]:
        """Runs ``component(**args)`` on ``scheduler`` and polls its status every ``interval``
        seconds until it ends or ``timeout`` passes; the last status."""
        app = component(**(args or {}))
        runner = get_runner(name=None, component_defaults=None, **(scheduler_params or {}))
        handle = runner.run(app, scheduler)
        assert isinstance(handle, str)  # not a dry run
        waited = 0.0
        status = runner.status(handle)
        while (status is None or not status.is_terminal()) and waited < timeout:
            time.sleep(interval)
            waited += interval
            status = runner.status(handle)
        return status

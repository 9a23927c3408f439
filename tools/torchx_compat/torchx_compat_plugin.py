import importlib
import json
import os
import signal
import sys

import pytest

TREE = os.path.realpath(os.environ["TORCHX_COMPAT_TREE"])
RESULTS = os.environ["TORCHX_COMPAT_RESULTS"]
PER_TEST = int(os.environ.get("TORCHX_COMPAT_PER_TEST", "120"))
SUBPACKAGES = ["specs", "components", "runner", "plugins", "schedulers", "cli", "workspace", "util"]

_tests = {}
_collect_errors = {}
_import_errors = {}


def _overlay():
    import torchx

    where = os.path.realpath(getattr(torchx, "__file__", None) or "")
    if where.startswith(TREE + os.sep):
        raise RuntimeError("torchx was imported from the compat test tree, not from the installed package")
    for name in SUBPACKAGES:
        try:
            importlib.import_module("torchx." + name)
        except Exception as e:  # recorded; the placeholder will raise for tests that need it
            _import_errors["torchx." + name] = "%s: %s" % (type(e).__name__, e)
            sys.modules.pop("torchx." + name, None)
    torchx.__path__.append(os.path.join(TREE, "torchx"))
    for name in SUBPACKAGES:
        mod = sys.modules.get("torchx." + name)
        if mod is not None and hasattr(mod, "__path__"):
            mod.__path__.append(os.path.join(TREE, "torchx", name))
    return where


class _PrivateStub:
    """stands in for a private TorchX name the package under test lacks (see -p)"""

    def __init__(self, name):
        self.__dict__["_stub_name"] = name

    def __getattr__(self, attr):
        raise AttributeError("%s is a compat-harness stub (the package under test has no such name)" % self._stub_name)

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("%s is a compat-harness stub (the package under test has no such name)" % self._stub_name)


def _is_private(part):
    return part.startswith("_") and not part.startswith("__")


def _stub_private_imports():
    """for module-level `from torchx.m import _x` (or from a private module) in the test files: if
    the installed package lacks the name, put a stub there so the file's public tests can load"""
    import ast
    import types

    stubbed = []
    for root, _dirs, files in os.walk(os.path.join(TREE, "torchx")):
        for fn in sorted(files):
            if not fn.endswith(".py"):
                continue
            try:
                tree = ast.parse(open(os.path.join(root, fn)).read())
            except SyntaxError:
                continue
            nodes = []
            for node in tree.body:
                nodes.extend(ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node])
            for node in nodes:
                if not (isinstance(node, ast.ImportFrom) and node.level == 0):
                    continue
                mod = node.module or ""
                parts = mod.split(".")
                if parts[0] != "torchx" or "test" in parts[1:]:
                    continue
                private_mod = any(_is_private(p) for p in parts)
                names = [a.name for a in node.names if private_mod or _is_private(a.name)]
                if not names:
                    continue
                try:
                    m = importlib.import_module(mod)
                except ImportError:
                    parent = sys.modules.get(".".join(parts[:-1]))
                    if not (_is_private(parts[-1]) and parent is not None):
                        continue  # a public module is missing: that is the package's to provide
                    m = types.ModuleType(mod)
                    m.__stub__ = True
                    sys.modules[mod] = m
                    setattr(parent, parts[-1], m)
                    stubbed.append(mod)
                for n in names:
                    if not hasattr(m, n):
                        setattr(m, n, _PrivateStub(mod + "." + n))
                        stubbed.append(mod + "." + n)
    return sorted(set(stubbed))


_TORCHX_AT = _overlay()
_STUBBED = _stub_private_imports() if os.environ.get("TORCHX_COMPAT_STUB_PRIVATE") == "1" else []


def pytest_report_header(config):
    lines = ["torchx under test: %s" % _TORCHX_AT]
    if _STUBBED:
        lines.append("private names stubbed: %s" % ", ".join(_STUBBED))
    return lines


def _message(report):
    lr = report.longrepr
    crash = getattr(lr, "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2])
    text = str(lr).strip().splitlines()
    return text[-1] if text else ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    def on_alarm(signum, frame):
        raise TimeoutError("test ran past the compat harness limit of %ds" % PER_TEST)

    _untree_sys_path()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(PER_TEST)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def pytest_runtest_logreport(report):
    rec = _tests.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.failed and rec["outcome"] != "failed":
        rec["outcome"] = "failed"
        rec["message"] = "[%s] %s" % (report.when, _message(report))
    elif report.skipped and rec["outcome"] == "passed":
        rec["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        rec["message"] = _message(report)
    elif report.when == "call" and report.passed and hasattr(report, "wasxfail"):
        rec["outcome"] = "xpassed"


def _untree_sys_path():
    # pytest puts the tree's root on sys.path to import test modules and packages (again when it
    # sets up a package); take it off before each test so that subprocesses the tests start with
    # PYTHONPATH=sys.path import the installed torchx, not the tree's placeholder
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != TREE]


def _selection():
    path = os.environ.get("TORCHX_COMPAT_SELECTION")
    if not path:
        return None
    with open(path) as f:
        return {l.split("#")[0].strip() for l in f} - {""}


def pytest_collection_modifyitems(session, config, items):
    # pytest is given the selection's files (a node id in a file that fails to import would stop
    # the whole run); here the collected tests are cut down to the selection's node ids
    selected = _selection()
    if selected is None:
        return
    keep = [i for i in items if i.nodeid in selected]
    drop = [i for i in items if i.nodeid not in selected]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_collection_finish(session):
    _untree_sys_path()


def pytest_collectreport(report):
    if report.failed:
        _collect_errors[report.nodeid] = _message(report)


def pytest_sessionfinish(session, exitstatus):
    with open(RESULTS, "w") as f:
        json.dump({"torchx": _TORCHX_AT, "subpackage_import_errors": _import_errors, "stubbed": _STUBBED,
                   "tests": _tests, "collect_errors": _collect_errors}, f, indent=1, sort_keys=True)

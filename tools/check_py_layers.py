#!/usr/bin/env python3
"""Fails when the Python package's modules import each other in a cycle.

Every import counts: at module level, inside functions (a function-local import is still a
dependency; it only hides a cycle from the interpreter until the function runs) and under
`if TYPE_CHECKING:`. An import of a module depends on it and on the `__init__` of each package
above it (Python runs them first: importing `torchx.runner.config` runs `torchx/runner/__init__`);
`from pkg import name` depends on `pkg.name` when that is a module, else on `pkg`. Modules
reached by name at run time (`importlib.import_module("...")`: the core's plugin provider) are not
edges: that is how a lower layer calls into a higher one. Compiled extensions (`--extension`, by
default torchx._torchx) are leaves. A module's own parent packages are not edges (Python runs them
first for every module; a package's `__init__` importing its children is not a cycle).

Usage: check_py_layers.py [--root DIR] [--package NAME]   (exit 0: no cycle; 1: cycles, each
printed with one import per edge and where it is)
"""

import argparse
import ast
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

Edge = Tuple[str, int]  # (file, line) of the import that makes it


def modules_of(root: Path, package: str) -> Dict[str, Path]:
    """Dotted module name -> file, for every .py file of `package` under `root`."""
    out: Dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported_names(node: ast.AST, module: str, is_package: bool, known: Set[str]) -> List[str]:
    """The dotted names an import statement reaches: for `from a import b`, `a.b` when that is a
    module (or an extension), else `a` (b is a name defined in a)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([base] if base else []))
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    return []


def import_graph(root: Path, package: str, extensions: Tuple[str, ...] = ()) -> Dict[str, Dict[str, Edge]]:
    """module -> {module it imports: (file, line) of the first such import}."""
    modules = modules_of(root, package)
    known = set(modules) | set(extensions)
    graph: Dict[str, Dict[str, Edge]] = {m: {} for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        parents = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        for node in ast.walk(tree):
            for name in _imported_names(node, module, path.name == "__init__.py", known):
                if name in extensions:
                    continue
                target = _resolve(name, modules)
                if target:  # the packages above the target run first
                    tparts = target.split(".")
                    for i in range(1, len(tparts)):
                        pkg = ".".join(tparts[:i])
                        if pkg in modules and pkg != module and pkg not in parents and pkg not in graph[module]:
                            graph[module][pkg] = (str(path.relative_to(root)), getattr(node, "lineno", 0))
                if target and target != module and target not in parents and target not in graph[module]:
                    graph[module][target] = (str(path.relative_to(root)), getattr(node, "lineno", 0))
    return graph


def _resolve(name: str, modules: Dict[str, Path]) -> Optional[str]:
    """The module a dotted name is (or is in): `a.b.C` -> `a.b` when that is a module."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def cycles(graph: Dict[str, Dict[str, Edge]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for v in graph:
        if v not in index:
            visit(v)
    return sorted(found)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=Path, default=here / "python", help="the folder holding the package")
    parser.add_argument("--package", default="torchx")
    parser.add_argument("--extension", action="append", default=None,
                        help="a compiled module of the package (a leaf); default torchx._torchx")
    args = parser.parse_args(argv)
    extensions = tuple(args.extension if args.extension is not None else ["torchx._torchx"])
    graph = import_graph(args.root, args.package, extensions)
    found = cycles(graph)
    for component in found:
        members = set(component)
        print(f"check_py_layers: import cycle among {len(component)} modules:")
        for m in component:
            for target, (path, line) in sorted(graph[m].items()):
                if target in members:
                    print(f"  {m} -> {target}   ({path}:{line})")
    if found:
        print("check_py_layers: break each cycle by moving what the lower module needs down "
              "(docs/python.md, 'Layers')")
        return 1
    print(f"check_py_layers: {len(graph)} modules of {args.package}, no import cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())

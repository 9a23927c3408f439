#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer it may not depend on.

The layers, their paths and what each may include are the table under "## Layers" in
docs/architecture.md (the same table people read). A layer may include its own files and those
of the layers it lists, transitively. Every file under include/, src/, cli/ and python/ext/ must
belong to a layer; tests (`*_test.cc`, src/testing/, tests/), examples/ and bench/ are not
checked: they sit on top of what they test.

Usage: check_layers.py [--root DIR] [--doc PATH]   (exit 0: clean; 1: violations; 2: bad table)
"""

import argparse
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

SOURCE_DIRS = ("include", "src", "cli", "python/ext")
SUFFIXES = {".h", ".cc", ".c", ".in"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


class TableError(Exception):
    pass


def read_table(doc: Path) -> Tuple[List[Tuple[str, str]], Dict[str, Set[str]]]:
    """(path prefix, layer) pairs and layer -> directly allowed layers, from the doc's table."""
    text = doc.read_text()
    start = text.find("\n## Layers")
    if start < 0:
        raise TableError(f"{doc}: no '## Layers' section")
    rows = []
    for line in text[start + 1:].splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not re.match(r"^\|\s*-", line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    if len(rows) < 2 or [c.lower() for c in rows[0][:3]] != ["layer", "paths", "may include"]:
        raise TableError(f"{doc}: the Layers table must start with | layer | paths | may include |")
    prefixes: List[Tuple[str, str]] = []
    allowed: Dict[str, Set[str]] = {}
    for row in rows[1:]:
        if len(row) < 3:
            raise TableError(f"{doc}: Layers row {row!r} has fewer than 3 cells")
        layer = row[0].strip("`")
        allowed[layer] = {d.strip().strip("`") for d in row[2].split(",") if d.strip()}
        for p in re.findall(r"`([^`]+)`", row[1]):
            prefixes.append((p, layer))
    for layer, deps in allowed.items():
        for d in deps:
            if d not in allowed:
                raise TableError(f"{doc}: layer {layer} may include unknown layer {d}")
    return prefixes, allowed


def closure(allowed: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    out = {}
    for layer in allowed:
        seen, todo = {layer}, [layer]
        while todo:
            for d in allowed[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        out[layer] = seen
    return out


def layer_of(rel: str, prefixes: List[Tuple[str, str]]) -> Optional[str]:
    best = None
    for prefix, layer in prefixes:
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def exempt(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.endswith("_test.cc") or rel.startswith(("src/testing/", "tests/", "examples/", "bench/"))


def resolve(root: Path, including: Path, target: str) -> Optional[str]:
    for base in (root / "include", root / "src", including.parent):
        candidate = base / target
        if candidate.is_file():
            return candidate.resolve().relative_to(root.resolve()).as_posix()
    return None


def check(root: Path, doc: Path) -> List[str]:
    prefixes, allowed = read_table(doc)
    reach = closure(allowed)
    problems = []
    for top in SOURCE_DIRS:
        for path in sorted((root / top).rglob("*")):
            if not path.is_file() or path.suffix not in SUFFIXES:
                continue
            rel = path.relative_to(root).as_posix()
            if exempt(rel):
                continue
            layer = layer_of(rel, prefixes)
            if layer is None:
                problems.append(f"{rel}: in no layer; add its path to the Layers table in {doc.name}")
                continue
            for target in INCLUDE.findall(path.read_text(errors="replace")):
                dep_rel = resolve(root, path, target)
                if dep_rel is None or exempt(dep_rel):
                    continue  # generated or outside the tree
                dep = layer_of(dep_rel, prefixes)
                if dep is None or dep not in reach[layer]:
                    problems.append(
                        f"{rel}: layer {layer} includes \"{target}\" of layer {dep or '(none)'}; "
                        f"{layer} may include only [{', '.join(sorted(reach[layer]))}]")
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root_default = Path(__file__).resolve().parent.parent
    parser.add_argument("--root", type=Path, default=root_default)
    parser.add_argument("--doc", type=Path, default=None, help="default: ROOT/docs/architecture.md")
    args = parser.parse_args(argv)
    doc = args.doc or args.root / "docs" / "architecture.md"
    try:
        problems = check(args.root, doc)
    except (TableError, OSError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) break the layering", file=sys.stderr)
        return 1
    print("check_layers: every include respects the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())

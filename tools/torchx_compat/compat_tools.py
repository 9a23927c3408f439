"""Helpers of run_compat.sh (TorchX's unit tests against an installed torchx package).

  summary RESULTS.json SELECTION|all  per-file pass/total, total, failure causes ranked (first error)
  classify TREE NODEIDS               per test: public|private and why (private = reaches TorchX internals)
  select TREE RESULTS.json OUT        OUT := tests that passed in RESULTS and are public
  probe TREE SELECTION                (run with the venv's python) every torchx name the selected tests
                                      use that the installed package lacks, ranked by tests needing it

classify: a test is "private" when the code it runs from its own file -- the test function or
method, its decorators, its class's decorators, set-up/tear-down and class attributes, base classes
in the file, and, transitively, the file's module-level functions, classes and constants it names
and the methods it calls through `self` -- does any of: names something imported from torchx under a
private name (`from torchx.x import _y`) or from a private module (`torchx.x._y`), imports such a
name itself; reads `obj._name` (single underscore) of anything but `self`/`cls` or a non-torchx
module (namedtuple's _asdict/_replace/... aside); patches a private path (a string
"torchx...._name..." or patch.object/setattr/getattr(x, "_name")).

probe: pytest stops at a file's first failing import; this reads the files instead: for each test,
the torchx paths its file imports at module level, those the code it runs imports or names
(`alias.Name...` chains on torchx module aliases, "torchx.a.b" strings such as patch targets), and
the module-level imports of the TorchX test-helper modules it imports (torchx.test.fixtures, ...).
Each path is checked in the installed package; the first missing piece is the blocker's key.
"""
import ast
import collections
import importlib
import json
import os
import re
import sys

TREE = None


def read_selection(path):
    out = [l.split("#")[0].strip() for l in open(path)]
    return [l for l in out if l]


NAMEDTUPLE_API = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}
PRIVATE_PATH = re.compile(r"\btorchx(\.\w+)*\._[A-Za-z0-9]\w*")
HOOK_METHODS = {"setUp", "tearDown", "setUpClass", "tearDownClass", "asyncSetUp", "asyncTearDown",
                "setup_method", "teardown_method", "setup_class", "teardown_class", "__init__"}


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class FileInfo:
    def __init__(self, path):
        self.tree = ast.parse(open(path).read(), path)
        self.module_defs = {}      # module-level name -> list of nodes defining it
        self.classes = {}          # class name -> ClassDef
        self.private_imports = {}  # local name -> "from torchx.x import _y"
        self.external_modules = set()  # local names bound to non-torchx modules
        for node in self.tree.body:
            self._index(node)

    def _index(self, node):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._imports(node)
        elif isinstance(node, ast.ClassDef):
            self.classes[node.name] = node
            self.module_defs.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.module_defs.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        self.module_defs.setdefault(n.id, []).append(node)
        elif isinstance(node, (ast.If, ast.Try)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self._index(child)
            for h in getattr(node, "handlers", []):
                for child in h.body:
                    self._index(child)

    def _imports(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                if a.name.split(".")[0] != "torchx":
                    self.external_modules.add(local)
                elif any(is_private(p) for p in a.name.split(".")):
                    self.private_imports[local] = "import " + a.name
        else:
            mod = node.module or ""
            top = mod.split(".")[0]
            for a in node.names:
                local = a.asname or a.name
                if top != "torchx":
                    if node.level == 0:
                        self.external_modules.add(local)
                    continue
                if is_private(a.name) or any(is_private(p) for p in mod.split(".")):
                    self.private_imports[local] = "from %s import %s" % (mod, a.name)

    def class_chain(self, cls_name):
        """the class and its bases defined in this file, most derived first"""
        out, todo = [], [cls_name]
        while todo:
            c = todo.pop(0)
            if c in self.classes and self.classes[c] not in out:
                cd = self.classes[c]
                out.append(cd)
                for b in cd.bases:
                    if isinstance(b, ast.Name):
                        todo.append(b.id)
        return out

    def find_method(self, chain, name):
        for cd in chain:
            for n in cd.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                    return n
        return None


def private_uses(fi, node):
    """the private-internal reasons found directly in one AST node"""
    reasons = set()
    local_public = set()  # names a function imports itself, publicly, shadowing a module-level import
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for n in ast.walk(node):
            if isinstance(n, ast.ImportFrom) and not any(is_private(p) for p in (n.module or "").split(".")):
                local_public |= {a.asname or a.name for a in n.names if not is_private(a.name)}
    for n in ast.walk(node):
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "torchx":
            mod = n.module or ""
            for a in n.names:
                if is_private(a.name) or any(is_private(p) for p in mod.split(".")):
                    reasons.add("imports %s from %s" % (a.name, mod))
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == "torchx" and any(is_private(p) for p in a.name.split(".")):
                    reasons.add("imports " + a.name)
        elif isinstance(n, ast.Name) and n.id in fi.private_imports and n.id not in local_public:
            reasons.add(fi.private_imports[n.id])
        elif isinstance(n, ast.Attribute) and is_private(n.attr) and n.attr not in NAMEDTUPLE_API:
            root = n.value
            if isinstance(root, ast.Name) and root.id in ("self", "cls"):
                continue
            base = root
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Call):
                base = base.func
                while isinstance(base, ast.Attribute):
                    base = base.value
            if isinstance(base, ast.Name) and base.id in fi.external_modules:
                continue
            reasons.add("attr ." + n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            m = PRIVATE_PATH.search(n.value)
            if m and " " not in n.value.strip():
                reasons.add("path " + m.group(0))
        elif isinstance(n, ast.Call):
            f = n.func
            fname = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
            if fname in ("object", "setattr", "getattr", "hasattr", "delattr") and len(n.args) >= 2:
                a = n.args[1]
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and is_private(a.value):
                    reasons.add("%s(..., %r)" % (fname, a.value))
    return reasons


def refs(node):
    """module-level names and self.<method> names a node refers to"""
    names, self_attrs = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
            self_attrs.add(n.attr)
    return names, self_attrs


def closure(fi, cls_name, func_name):
    """the AST nodes of this file that a test runs (see the module docstring), or None"""
    chain = fi.class_chain(cls_name) if cls_name else []
    todo = []
    if chain:
        m = fi.find_method(chain, func_name)
        if m is None:
            return None
        todo.append(m)
        for cd in chain:
            todo.extend(cd.decorator_list)
            todo.extend(cd.bases)
            for n in cd.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in HOOK_METHODS:
                    todo.append(n)
                elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    todo.append(n)  # class attributes
    else:
        defs = [d for d in fi.module_defs.get(func_name, []) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            return None
        todo.extend(defs)
    seen, out = set(), []
    chain_names = {cd.name for cd in chain}
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        names, self_attrs = refs(node)
        for nm in names:
            if nm in chain_names:
                continue
            for d in fi.module_defs.get(nm, []):
                todo.append(d)
        for a in self_attrs:
            m = fi.find_method(chain, a) if chain else None
            if m is not None:
                todo.append(m)
    return out


def classify(fi, cls_name, func_name):
    nodes = closure(fi, cls_name, func_name)
    if nodes is None:
        return None, {"test not found in file"}
    reasons = set()
    for node in nodes:
        reasons |= private_uses(fi, node)
    return ("private" if reasons else "public"), reasons


DOTTED = re.compile(r"^torchx(\.[A-Za-z_]\w*)+$")


def is_test_module(mod):
    parts = mod.split(".")
    return "test" in parts[1:]


def module_file(mod):
    base = os.path.join(TREE, *mod.split("."))
    for cand in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(cand):
            return cand
    return None


class Deps:
    def __init__(self, path):
        self.fi = FileInfo(path)
        self.aliases = {}  # local name -> dotted torchx path
        self.str_consts = {}  # module-level NAME = "a string"
        for node in self.fi.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.str_consts[t.id] = node.value.value
        for node in self.fi.tree.body:
            for n in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
                self._alias(n)

    def _alias(self, n):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == "torchx":
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        self.aliases["torchx"] = "torchx"
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and (n.module or "").split(".")[0] == "torchx":
            for a in n.names:
                self.aliases[a.asname or a.name] = n.module + "." + a.name

    def module_level(self):
        out = set()
        for node in self.fi.tree.body:
            for n in (ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]):
                out |= import_paths(n)
        return out

    def in_nodes(self, nodes):
        out = set()
        local = dict(self.aliases)
        for node in nodes:
            for n in ast.walk(node):
                out |= import_paths(n)
                if isinstance(n, (ast.Import, ast.ImportFrom)):
                    self_alias = Deps.__new__(Deps)
                    self_alias.aliases = {}
                    Deps._alias(self_alias, n)
                    local.update(self_alias.aliases)
        shadowed = set()  # names the test code binds itself (a local `resource = ...` is no module)
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    shadowed.add(n.id)
                elif isinstance(n, ast.arg):
                    shadowed.add(n.arg)
        for k in shadowed:
            local.pop(k, None)
        for node in nodes:
            for n in ast.walk(node):
                if isinstance(n, ast.Attribute):
                    chain, base = [n.attr], n.value
                    while isinstance(base, ast.Attribute):
                        chain.append(base.attr)
                        base = base.value
                    if isinstance(base, ast.Name) and base.id in local:
                        out.add(local[base.id] + "." + ".".join(reversed(chain)))
                elif isinstance(n, ast.Name) and n.id in local and n.id != "torchx":
                    out.add(local[n.id])
                elif isinstance(n, ast.Call) and n.args:
                    f = n.func
                    fname = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
                    a = n.args[0]
                    v = a.value if isinstance(a, ast.Constant) else (
                        self.str_consts.get(a.id) if isinstance(a, ast.Name) else None)
                    if fname == "patch" and isinstance(v, str) and DOTTED.match(v):
                        out.add(v)  # a patch target must exist
        return out


def import_paths(n):
    out = set()
    if isinstance(n, ast.Import):
        out |= {a.name for a in n.names if a.name.split(".")[0] == "torchx"}
    elif isinstance(n, ast.ImportFrom) and n.level == 0 and (n.module or "").split(".")[0] == "torchx":
        out |= {n.module + "." + a.name for a in n.names if a.name != "*"}
    return out


_helper_cache = {}


def helper_needs(path_set, seen=None):
    """expand test-helper modules (overlay) into their own module-level torchx needs"""
    seen = set() if seen is None else seen
    out = set()
    for p in path_set:
        parts = p.split(".")
        # the helper module is the longest prefix that is a file in the tree
        for i in range(len(parts), 1, -1):
            mod = ".".join(parts[:i])
            if is_test_module(mod) and module_file(mod):
                if mod not in seen:
                    seen.add(mod)
                    if mod not in _helper_cache:
                        _helper_cache[mod] = Deps(module_file(mod)).module_level()
                    out |= {q for q in _helper_cache[mod] if not is_test_module(q)}
                    out |= helper_needs({q for q in _helper_cache[mod] if is_test_module(q)}, seen)
                break
    return out


_check_cache = {}


def check(path):
    """None if the installed package has it, else the first missing piece"""
    if path in _check_cache:
        return _check_cache[path]
    parts = path.split(".")
    obj, result = None, None
    i = len(parts)
    while i > 0:
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ModuleNotFoundError as e:
            if e.name and not (e.name == ".".join(parts[:i]) or ".".join(parts[:i]).startswith(e.name + ".")):
                result = "%s (imports missing %s)" % (".".join(parts[:i]), e.name)
                break
            i -= 1
        except Exception as e:
            result = "%s (import raises %s)" % (".".join(parts[:i]), type(e).__name__)
            break
    if result is None:
        for j in range(i, len(parts)):
            if not hasattr(obj, parts[j]):
                result = ".".join(parts[: j + 1])
                break
            obj = getattr(obj, parts[j])
    _check_cache[path] = result
    return result


def cmd_probe(tree, selection):
    global TREE
    TREE = os.path.abspath(tree)
    sel = read_selection(selection)
    files = {}
    blockers = collections.defaultdict(set)
    wanted = collections.defaultdict(set)  # missing module -> the paths under it the tests use
    per_test = {}
    for nid in sel:
        parts = nid.split("::")
        if parts[0] not in files:
            d = Deps(os.path.join(TREE, parts[0]))
            ml = d.module_level()
            files[parts[0]] = (d, ml, helper_needs(ml))
        d, ml, hl = files[parts[0]]
        name = re.sub(r"\[.*\]$", "", parts[-1])
        nodes = closure(d.fi, parts[1] if len(parts) == 3 else None, name) or []
        inner = d.in_nodes(nodes)
        needs = {p for p in (ml | inner) if not is_test_module(p)} | hl | helper_needs(inner)
        for p in needs:
            m = check(p)
            if m and p != m:
                wanted[m.split(" ")[0]].add(p)
        missing = sorted({m for m in (check(p) for p in needs) if m})
        # a missing module subsumes the names under it
        missing = [m for m in missing if not any(m != o and m.startswith(o + ".") for o in missing)]
        per_test[nid] = missing
        for m in missing:
            blockers[m].add(nid)
    clean = [n for n, m in per_test.items() if not m]
    print("selected tests: %d; with every torchx name they use present: %d" % (len(sel), len(clean)))
    print("\nmissing torchx names, ranked by tests that need them (a test may need several):")
    for m, ns in sorted(blockers.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        fc = collections.Counter(n.split("::")[0].replace("torchx/", "").replace("/test/", "/") for n in ns)
        only = sum(1 for n in ns if per_test[n] == [m])
        tag = " (private)" if any(is_private(x) for x in m.split(" ")[0].split(".")) else ""
        print("%4d  (sole blocker of %3d)  %s%s   [%s]" % (len(ns), only, m, tag, ", ".join("%s:%d" % kv for kv in fc.most_common())))
        under = sorted(wanted.get(m.split(" ")[0], ()))
        if under:
            print("        uses: %s%s" % (", ".join(under[:8]), " ..." if len(under) > 8 else ""))
    print("\nper test (missing names):")
    for n in sel:
        print("%s\t%s" % (n, "; ".join(per_test[n])))


def cmd_summary(results_path, selection):
    res = json.load(open(results_path))
    tests, cerr = res["tests"], res["collect_errors"]
    selected = sorted(tests) if selection == "all" else read_selection(selection)

    def file_of(nodeid):
        return nodeid.split("::")[0]

    def collect_error_for(nodeid):
        # the nearest collection error above this node id (its file, class, or package)
        parts = nodeid.split("::")
        for i in range(len(parts), 0, -1):
            key = "::".join(parts[:i])
            if key in cerr:
                return cerr[key]
        path = parts[0]
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            if path in cerr:
                return cerr[path]
        return None

    outcome = {}
    for n in selected:
        t = tests.get(n)
        if t is not None:
            outcome[n] = (t["outcome"], t["message"])
        else:
            e = collect_error_for(n)
            outcome[n] = ("error", "[collect] " + e) if e else ("missing", "not collected (no such test)")

    per_file = collections.OrderedDict()
    for n in selected:
        f = per_file.setdefault(file_of(n), [0, 0])
        f[1] += 1
        f[0] += outcome[n][0] == "passed"
    print("torchx under test: %s" % res["torchx"])
    if res.get("stubbed"):
        print("private names stubbed (-p): %s" % ", ".join(res["stubbed"]))
    if res.get("subpackage_import_errors"):
        for k, v in sorted(res["subpackage_import_errors"].items()):
            print("  import %s failed: %s" % (k, v))
    w = max(len(f) for f in per_file) if per_file else 10
    for f, (p, t) in per_file.items():
        print("%-*s %4d/%-4d" % (w, f, p, t))
    areas = collections.OrderedDict()
    for f, (p, t) in per_file.items():
        a = f.split("/")[1] if f.startswith("torchx/") else f
        s = areas.setdefault(a, [0, 0])
        s[0] += p
        s[1] += t
    print("per area: " + ", ".join("%s %d/%d" % (a, p, t) for a, (p, t) in areas.items()))
    npass = sum(o[0] == "passed" for o in outcome.values())
    print("TOTAL: %d/%d passed" % (npass, len(selected)))

    def cause(msg):
        m = re.sub(r"^\[\w+\] ", "", msg).strip().splitlines()[0] if msg.strip() else "(no message)"
        for pat, fmt in [
            (r"No module named '([^']+)'", "missing module %s"),
            (r"cannot import name '([^']+)' from '([^']+)'", None),
            (r"module '([^']+)' has no attribute '([^']+)'", "missing attribute %s.%s"),
            (r"type object '([^']+)' has no attribute '([^']+)'", "missing attribute %s.%s"),
            (r"'([^']+)' object has no attribute '([^']+)'", "missing attribute %s().%s"),
        ]:
            g = re.search(pat, m)
            if g:
                if fmt is None:
                    return "missing name %s.%s" % (g.group(2), g.group(1))
                return fmt % g.groups()
        return "behaviour: " + m[:160]

    failed = [(n, o[1]) for n, o in outcome.items() if o[0] != "passed"]
    by = collections.defaultdict(list)
    for n, msg in failed:
        by[cause(msg)].append(n)
    print("\nfailure causes, ranked (tests blocked):")
    for c, ns in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        files = collections.Counter(file_of(n) for n in ns)
        print("%4d  %s   [%s]" % (len(ns), c, ", ".join("%s:%d" % (f.replace("torchx/", "").replace("/test/", "/"), k) for f, k in files.most_common())))


def cmd_classify(tree, ids_path):
    cache = {}
    for nid in read_selection(ids_path):
        parts = nid.split("::")
        if parts[0] not in cache:
            cache[parts[0]] = FileInfo(os.path.join(tree, parts[0]))
        name = re.sub(r"\[.*\]$", "", parts[-1])
        verdict, reasons = classify(cache[parts[0]], parts[1] if len(parts) == 3 else None, name)
        print("%s\t%s\t%s" % (nid, verdict or "unknown", "; ".join(sorted(reasons))))


def cmd_select(tree, results_path, out_path):
    tests = json.load(open(results_path))["tests"]
    cache, sel, excluded = {}, [], collections.Counter()
    for nid in sorted(tests):
        if tests[nid]["outcome"] != "passed":
            excluded["not passing"] += 1
            continue
        parts = nid.split("::")
        if parts[0] not in cache:
            cache[parts[0]] = FileInfo(os.path.join(tree, parts[0]))
        name = re.sub(r"\[.*\]$", "", parts[-1])
        verdict, _ = classify(cache[parts[0]], parts[1] if len(parts) == 3 else None, name)
        if verdict == "public":
            sel.append(nid)
        else:
            excluded[verdict or "unknown"] += 1
    with open(out_path, "w") as f:
        f.write("# TorchX unit tests that passed on the reference package and reach no private internals\n")
        f.write("# (run_compat.sh -S; see compat_tools.py classify). %d tests; left out: %s\n"
                % (len(sel), ", ".join("%s %d" % kv for kv in sorted(excluded.items()))))
        f.write("\n".join(sel) + "\n")
    print("selection: %d tests written to %s; left out: %s" % (len(sel), out_path, dict(excluded)))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"summary": cmd_summary, "classify": cmd_classify, "select": cmd_select, "probe": cmd_probe}[cmd](*args)


if __name__ == "__main__":
    main()

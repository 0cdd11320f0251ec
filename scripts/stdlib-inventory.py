#!/usr/bin/env python3
"""Inventory of the Python standard library, for the classification in src/knowledge/stdlib.rs.

Issue 39: every standard-library module, and every public callable in it, must have a class in
the knowledge base (a value a pickle may build, or a capability). This script lists what one
interpreter ships, without running any of it:

  * module names: `sys.stdlib_module_names` (3.10+) when present, else the builtin modules, the
    top-level `.py` files and packages of the stdlib directory and the extension modules of
    `lib-dynload`; then every submodule found by walking the package directories (a test
    package is listed, its own submodules are not);
  * public callables: read from source with `ast` (top-level `def` and `class`, names in a
    literal `__all__`, and module-level aliases such as `open = io.open`); a module without
    source (builtin or extension) is imported and its public callables listed with `dir`.
    Nothing with source is ever imported, so `antigravity`, `this`, `turtle` or IDLE never run.

Usage:
  stdlib-inventory.py [--out DIR]            write DIR/modules-3.X.txt and DIR/callables-3.X.txt
                                             for the interpreter running it (default DIR:
                                             src/knowledge/stdlib)
  stdlib-inventory.py --all [--out DIR]      run itself under every $(pyenv root)/versions/3.*
                                             interpreter (3.6 to 3.13), then merge the callables
                                             into DIR/callables.txt (`module.name 3.6-3.13`)
  stdlib-inventory.py --check [--out DIR]    the knowledge check (scripts/check-stdlib-knowledge):
                                             every module of every committed list has a row in
                                             the table, and the lists are those this machine's
                                             interpreters produce

Runs under Python 3.6 to 3.13 with the standard library only.
"""

import ast
import importlib
import importlib.machinery
import os
import re
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "src", "knowledge", "stdlib")
TABLE = os.path.join(ROOT, "src", "knowledge", "stdlib.rs")
TEST_PACKAGES = {"test", "tests", "idle_test"}
SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "lib-dynload", "_bundled"}


def version_tag():
    return "%d.%d" % sys.version_info[:2]


def stdlib_dir():
    return sysconfig.get_paths()["stdlib"]


def extension_names(directory):
    names = set()
    if not os.path.isdir(directory):
        return names
    for entry in os.listdir(directory):
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if entry.endswith(suffix):
                names.add(entry[: -len(suffix)])
    return names


def top_level_modules(root):
    names = set(getattr(sys, "stdlib_module_names", ()))
    if names:
        return names
    names.update(sys.builtin_module_names)
    names.update(extension_names(os.path.join(root, "lib-dynload")))
    for entry in os.listdir(root):
        path = os.path.join(root, entry)
        if entry.endswith(".py"):
            names.add(entry[:-3])
        elif os.path.isfile(os.path.join(path, "__init__.py")) and entry not in SKIP_DIRS:
            names.add(entry)
    return {n for n in names if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", n)}


def submodules(root, package):
    """(dotted name, source path) of a package's modules, depth first; tests are not entered."""
    out = []
    directory = os.path.join(root, *package.split("."))
    if not os.path.isfile(os.path.join(directory, "__init__.py")):
        return out
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if entry.endswith(".py") and entry != "__init__.py":
            out.append((package + "." + entry[:-3], path))
        elif os.path.isfile(os.path.join(path, "__init__.py")) and entry not in SKIP_DIRS:
            name = package + "." + entry
            out.append((name, os.path.join(path, "__init__.py")))
            if entry not in TEST_PACKAGES:
                out.extend(submodules(root, name))
        else:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                if entry.endswith(suffix):
                    out.append((package + "." + entry[: -len(suffix)], None))
    return out


def source_of(root, name):
    base = os.path.join(root, *name.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def literal_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return set()
            return {v for v in value if isinstance(v, str)}
    return set()


def callables_from_source(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        tree = ast.parse(data, path)
    except (SyntaxError, ValueError):
        # lib2to3's test data and a few encodings-only files are not Python 3 source.
        return set()
    names = set()
    bodies = [tree.body]
    while bodies:
        for node in bodies.pop():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign) and isinstance(
                node.value, (ast.Name, ast.Attribute, ast.Call, ast.Lambda)
            ):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, (ast.If, ast.Try)):
                # `if sys.platform == ...: def f()` and `try: from _x import f` shapes.
                bodies.append(node.body)
                bodies.append(node.orelse)
                for handler in getattr(node, "handlers", []):
                    bodies.append(handler.body)
    exported = literal_all(tree)
    public = {n for n in names if not n.startswith("_")}
    # `__all__` names that are imported rather than defined (os re-exports posix's functions).
    public.update(n for n in exported if not n.startswith("__"))
    return public


def callables_from_import(name):
    try:
        module = importlib.import_module(name)
    except BaseException:  # noqa: B036 -- a platform module missing here is simply not listed
        return set()
    out = set()
    for attr in dir(module):
        if attr.startswith("_"):
            continue
        try:
            if callable(getattr(module, attr)):
                out.add(attr)
        except BaseException:  # noqa: B036
            continue
    return out


def inventory():
    root = stdlib_dir()
    modules = {}
    for top in sorted(top_level_modules(root)):
        modules[top] = source_of(root, top)
        if top not in TEST_PACKAGES:
            for name, path in submodules(root, top):
                modules[name] = path
    callables = {}
    for name, path in sorted(modules.items()):
        if name.split(".")[0] in TEST_PACKAGES or ".idle_test" in name or ".tests" in name:
            continue
        if path is not None:
            callables[name] = callables_from_source(path)
        elif name in sys.builtin_module_names or name.split(".")[0] in extension_names(
            os.path.join(root, "lib-dynload")
        ) or "." in name:
            callables[name] = callables_from_import(name)
    return modules, callables


def write(out):
    os.makedirs(out, exist_ok=True)
    modules, callables = inventory()
    tag = version_tag()
    header = "# Python %s standard library (scripts/stdlib-inventory.py)\n" % (
        ".".join(map(str, sys.version_info[:3]))
    )
    with open(os.path.join(out, "modules-%s.txt" % tag), "w") as f:
        f.write(header)
        for name in sorted(modules):
            f.write(name + "\n")
    with open(os.path.join(out, "callables-%s.txt" % tag), "w") as f:
        f.write(header)
        for name in sorted(callables):
            for attr in sorted(callables[name]):
                f.write("%s.%s\n" % (name, attr))
    print("python %s: %d modules, %d callables" % (
        tag, len(modules), sum(len(v) for v in callables.values())))


def interpreters():
    root = subprocess.check_output(["pyenv", "root"], universal_newlines=True).strip()
    found = []
    for v in os.listdir(os.path.join(root, "versions")):
        m = re.match(r"^3\.(\d+)\.\d+$", v)
        if m and 6 <= int(m.group(1)) <= 13:
            found.append((int(m.group(1)), os.path.join(root, "versions", v, "bin", "python3")))
    return [p for _, p in sorted(found)]


def run_all(out):
    for python in interpreters():
        subprocess.check_call([python, "-I", "-S", os.path.abspath(__file__), "--out", out])
    merge_callables(out)


def merge_callables(out):
    """One `callables.txt` for every version: `module.name  3.6 3.7 ...` (a fifth of the size
    of eight per-version lists)."""
    seen = {}
    tags = []
    for entry in sorted(os.listdir(out), key=lambda e: [int(x) for x in re.findall(r"\d+", e)]):
        m = re.match(r"^callables-(3\.\d+)\.txt$", entry)
        if not m:
            continue
        tags.append(m.group(1))
        for name in read_list(os.path.join(out, entry)):
            seen.setdefault(name, []).append(m.group(1))
        os.remove(os.path.join(out, entry))
    with open(os.path.join(out, "callables.txt"), "w") as f:
        f.write("# public callables of the Python %s standard libraries, with the versions that "
                "have each (scripts/stdlib-inventory.py --all)\n" % ", ".join(tags))
        for name in sorted(seen):
            f.write("%s %s\n" % (name, span(seen[name], tags)))


def span(have, tags):
    """`3.6-3.13` for a run of consecutive versions, else the versions one by one."""
    first, last = tags.index(have[0]), tags.index(have[-1])
    if len(have) > 1 and tags[first : last + 1] == have:
        return "%s-%s" % (have[0], have[-1])
    return " ".join(have)


def read_list(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def table_modules():
    """Module rows of the classification table: `module("name", ...)` lines of stdlib.rs."""
    with open(TABLE) as f:
        return set(re.findall(r'\bmodule\(\s*"([^"]+)"', f.read()))


def covered(name, rows):
    parts = name.split(".")
    return any(".".join(parts[:i]) in rows for i in range(len(parts), 0, -1))


def check(out):
    rows = table_modules()
    missing = []
    for entry in sorted(os.listdir(out)):
        if entry.startswith("modules-"):
            for name in read_list(os.path.join(out, entry)):
                top_missing = "." not in name and name not in rows
                if top_missing or not covered(name, rows):
                    missing.append("%s (%s)" % (name, entry))
    for m in missing:
        print("not in the table: " + m)
    stale = []
    if os.environ.get("STDLIB_CHECK_INTERPRETERS", "1") != "0":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            run_all(tmp)
            for entry in sorted(os.listdir(tmp)):
                with open(os.path.join(tmp, entry)) as a, open(os.path.join(out, entry)) as b:
                    if a.read() != b.read():
                        stale.append(entry)
    for s in stale:
        print("committed list differs from this machine's interpreter: " + s)
    return 1 if missing or stale else 0


def main(argv):
    out = DEFAULT_OUT
    if "--out" in argv:
        out = argv[argv.index("--out") + 1]
    if "--all" in argv:
        run_all(out)
        return 0
    if "--check" in argv:
        return check(out)
    write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

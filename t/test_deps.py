"""What t/, bench/ and pgkit/ need is installed by tools/packages.

`make test` and `make bench` install exactly the Debian packages that
tools/packages lists (tools/pgdev deps).  A Python module imported by the
test suite or the benchmark, a Perl module a TAP test uses, or a program
either of them runs, that comes from a package outside that list (or
outside what the listed packages pull in) works on a machine where someone
installed it by hand and fails on a new one.  This test finds such imports
and programs by reading the sources, and asks dpkg which package provides
each.
"""

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
PYTHON_DIRS = ("t", "bench", "pgkit")
# Calls whose list argument is a command line: run(["cc", ...]) and the like.
RUNNERS = {"run", "call", "check_call", "check_output", "Popen", "as_build_user",
           "run_as_build_user"}


def listed_packages():
    text = (TOP / "tools" / "packages").read_text()
    return {line.split("#")[0].strip() for line in text.splitlines()} - {""}


def dpkg_query(fmt, *packages):
    res = subprocess.run(["dpkg-query", "-W", "-f", fmt, *packages], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return res.stdout


def depends_closure(packages):
    """The installed packages that `packages` pull in (Depends and
    Pre-Depends, every alternative that is installed), themselves included."""
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        out = dpkg_query("${Status}\t${Depends}, ${Pre-Depends}", p)
        if "install ok installed" not in out:
            continue
        for dep in re.split(r"[,|]", out.split("\t", 1)[1]):
            name = dep.strip().split(" ")[0].split(":")[0]
            if name:
                todo.append(name)
    return seen


def essential_packages():
    out = dpkg_query("${Package}\t${Essential}\n")
    return {line.split("\t")[0] for line in out.splitlines() if line.endswith("\tyes")}


def owner(path):
    """The package that installed `path` (or the file a link points to)."""
    candidates = [str(path), os.path.realpath(path)]
    # merged /usr: dpkg may know /usr/bin/cp as /bin/cp
    candidates += [re.sub(r"^/usr/", "/", c) for c in candidates if c.startswith("/usr/")]
    for candidate in candidates:
        res = subprocess.run(["dpkg-query", "-S", candidate], text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if res.returncode == 0:
            # "pkg[:arch][, pkg2]: /path"; diversions start with "diversion by"
            for line in res.stdout.splitlines():
                if not line.startswith("diversion"):
                    return line.split(":")[0].split(",")[0].strip()
    return None


def python_files():
    for d in PYTHON_DIRS:
        yield from sorted((TOP / d).rglob("*.py"))


def local_modules():
    """Module names that are part of this repository."""
    names = {p.stem for d in PYTHON_DIRS for p in (TOP / d).glob("*.py")}
    names |= {p.parent.name for p in TOP.glob("*/__init__.py")}
    return names


def python_imports():
    """{top-level module name: first file importing it}, absolute imports."""
    found = {}
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], path.relative_to(TOP))
    return found


def programs():
    """{program: first file running it}: the first element of a literal
    command list passed to run() and its relatives."""
    found = {}
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in RUNNERS:
                continue
            for arg in node.args[:1]:
                if (isinstance(arg, ast.List) and arg.elts and
                        isinstance(arg.elts[0], ast.Constant) and
                        isinstance(arg.elts[0].value, str)):
                    found.setdefault(arg.elts[0].value, path.relative_to(TOP))
    return found


def perl_modules():
    """{module: first TAP test using it}, pragmas and PostgreSQL's own test
    modules (installed with every test build) left out."""
    found = {}
    for path in sorted((TOP / "t").glob("*.pl")):
        for m in re.finditer(r"^\s*use\s+([A-Z][\w:]*)", path.read_text(), re.M):
            if not m.group(1).startswith("PostgreSQL::"):
                found.setdefault(m.group(1), path.relative_to(TOP))
    return found


def perl_module_file(module):
    res = subprocess.run(["perl", f"-M{module}", "-e",
                          f"print $INC{{'{module.replace('::', '/')}.pm'}}"],
                         text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return res.stdout if res.returncode == 0 and res.stdout else None


def test_dependencies_are_listed():
    allowed = depends_closure(listed_packages()) | essential_packages()
    local = local_modules()
    problems = []

    def check(what, user, path):
        if path is None:
            problems.append(f"{user}: {what} is not installed; add the package that "
                            "provides it to tools/packages")
            return
        pkg = owner(path)
        if pkg is None:
            problems.append(f"{user}: {what} ({path}) belongs to no Debian package")
        elif pkg not in allowed:
            problems.append(f"{user}: {what} comes from {pkg}, which tools/packages "
                            "neither lists nor pulls in")

    check("the interpreter /usr/bin/python3", "tools/test", "/usr/bin/python3")
    imports = python_imports()
    for name, user in sorted(imports.items()):
        if name in local or name in sys.stdlib_module_names:
            continue
        spec = importlib.util.find_spec(name)
        origin = spec and (spec.origin if spec.origin not in (None, "namespace")
                           else next(iter(spec.submodule_search_locations), None))
        check(f"Python module {name}", user, origin)
    for prog, user in sorted(programs().items()):
        check(f"program {prog}", user, shutil.which(prog))
    for module, user in sorted(perl_modules().items()):
        check(f"Perl module {module}", user, perl_module_file(module))
    print(f"{len(imports)} Python modules, {len(programs())} programs, "
          f"{len(perl_modules())} Perl modules checked against {len(allowed)} packages")
    assert not problems, "\n".join(problems)
    # the reading itself works: these are known to be used
    assert {"psycopg", "pytest", "matplotlib"} <= set(imports)
    assert {"cc", "g++"} <= set(programs())
    assert "IPC::Run" in perl_modules() or "Test::More" in perl_modules()

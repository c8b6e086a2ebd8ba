"""The Python code stays easy to carry on: no file over MAX_LINES lines, and
imports through packages (pgkit, bench) rather than sys.path edits."""

import re
import subprocess

from pgkit import TOP

MAX_LINES = 500
PATH_EDIT = re.compile(r"\bsys\.path\.(insert|append|extend)\b|\bsys\.path\s*(\+=|=)")


def python_files():
    """The repository's Python files (tracked, and untracked ones git does
    not ignore), or every *.py below it outside hidden folders without git."""
    res = subprocess.run(["git", "-C", str(TOP), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard", "--", "*.py"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if res.returncode == 0:
        paths = [TOP / p for p in res.stdout.decode().split("\0") if p]
    else:
        paths = [p for p in TOP.rglob("*.py")
                 if not any(part.startswith(".") for part in p.relative_to(TOP).parts)]
    return sorted(p for p in paths if p.is_file())


def test_python_files_are_short():
    files = python_files()
    assert TOP / "t" / "test_tree.py" in files
    long = {str(p.relative_to(TOP)): n for p in files
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"


def test_no_sys_path_edits():
    edits = [f"{p.relative_to(TOP)}:{i}: {line.strip()}"
             for p in python_files() if p != TOP / "t" / "test_tree.py"
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if PATH_EDIT.search(line)]
    assert not edits, "\n".join(edits)

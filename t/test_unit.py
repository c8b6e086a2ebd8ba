"""src/core unit tests: PostgreSQL-free C++ built with sanitizers and run."""

import subprocess

from conftest import TOP


def test_core(tmp_path):
    exe = tmp_path / "test_core"
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-g",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-o", str(exe), str(TOP / "t/unit/test_core.cpp"),
                    *map(str, sorted((TOP / "src/core").glob("*.cpp")))], check=True)
    res = subprocess.run([str(exe)], text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    print(res.stdout)
    assert res.returncode == 0, res.stdout
    assert res.stdout.strip().endswith(" passed, 0 failed")


def test_standard_headers_come_before_postgres_h():
    """C++ standard (and system) headers must precede postgres.h.
    A header that includes any starts with cpp_only.hpp, which makes the
    compiler refuse it after postgres.h; a .cpp file includes them only in
    its first lines, before any header of the project."""
    for path in sorted((TOP / "src").rglob("*.[ch]pp")):
        lines = [ln.strip() for ln in path.read_text().splitlines()
                 if ln.startswith("#include")]
        system = [i for i, ln in enumerate(lines) if ln.startswith("#include <")]
        project = [i for i, ln in enumerate(lines) if ln.startswith('#include "')]
        if path.suffix == ".hpp" and system:
            assert lines[0].endswith('cpp_only.hpp"'), \
                f"{path}: includes standard headers but not cpp_only.hpp first"
        if path.parent.name == "pg" and path.suffix == ".cpp" and system and project:
            assert max(system) < min(project), \
                f"{path}: a standard header after a project header"

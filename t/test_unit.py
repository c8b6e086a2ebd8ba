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

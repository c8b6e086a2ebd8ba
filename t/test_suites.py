"""The other suites, driven from pytest so that one run covers everything:
pg_regress (sql/, expected/), TAP (t/*.pl) and the core regression suite of
the patched PostgreSQL tree."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import run_as_build_user
from pgkit import TOP
from pgkit.proc import run
from pgkit.server import install_extension


def _print_file(path, limit=300):
    path = Path(path)
    if path.exists():
        lines = path.read_text(errors="replace").splitlines()
        print(f"--- {path} ---")
        print("\n".join(lines[:limit]))


def test_pg_regress(server, node, ext_build):
    """sql/*.sql against a server with vacskip in shared_preload_libraries."""
    src = ext_build(server)
    res = run_as_build_user(["make", "-C", str(src), f"PG_CONFIG={server.pg_config}",
                             "installcheck", "TAP_TESTS="], env=node.env())
    print(res.stdout)
    if res.returncode != 0:
        _print_file(src / "regression.diffs")
    assert res.returncode == 0, "pg_regress failed"
    assert re.search(r"All \d+ tests passed", res.stdout)


@pytest.mark.tap
def test_tap(server, ext_build):
    """t/*.pl with prove, through PGXS's installcheck (own clusters).  The
    tests check the hook's effect where the server has it, and that nothing
    changes where it does not."""
    src = ext_build(server)
    res = run_as_build_user(["make", "-C", str(src), f"PG_CONFIG={server.pg_config}",
                             "installcheck", "REGRESS=", "PROVE_FLAGS=--verbose"],
                            env=dict(os.environ, PATH=f"{server.bindir}:{os.environ['PATH']}"))
    print(res.stdout)
    logs = sorted((src / "tmp_check" / "log").glob("*"))
    if res.returncode != 0:
        for log in logs:
            _print_file(log, limit=200)
    assert res.returncode == 0, "TAP tests failed"
    assert "Result: PASS" in res.stdout
    crashed = [log.name for log in logs
               if "terminated by signal" in log.read_text(errors="replace")]
    assert not crashed, f"a server process was terminated by a signal: {crashed}"


@pytest.mark.patched
@pytest.mark.tap
def test_core_regression_suite(server):
    """PostgreSQL's own `make check` on the patched tree: the patch breaks
    nothing the core suite can see."""
    res = subprocess.run([str(TOP / "tools" / "pgdev"), "check", str(server.major), "test",
                          "patched"], text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    print(res.stdout)
    assert res.returncode == 0, "core make check failed"


def test_extension_builds_cleanly(server, workdir):
    """vacskip builds against this server's PGXS with -Wall -Wextra -Werror,
    including PGXS's LLVM bitcode step where the server was built with LLVM
    (Debian's packages are)."""
    src = install_extension(TOP, workdir / f"build-{server.name}", server.pg_config, [])
    assert (src / "vacskip.so").exists()
    with_llvm = "--with-llvm" in run([server.pg_config, "--configure"])
    objects = sorted(p.stem for p in src.glob("src/*/*.o"))
    bitcode = sorted(p.stem for p in src.glob("src/*/*.bc"))
    assert objects
    assert bitcode == (objects if with_llvm else [])

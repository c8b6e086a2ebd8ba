"""make bench's demo runs, and prints what it claims, on a patched server."""

import subprocess

import pytest

from conftest import TOP


@pytest.mark.patched
def test_demo(server, ext_build):
    res = subprocess.run(["/usr/bin/python3", str(TOP / "bench" / "demo.py"),
                          str(server.prefix), "2000"],
                         text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(res.stdout)
    assert res.returncode == 0
    # 2000 pages, every 10th modified: 32 reads all, 4 the 200 + last page
    assert "vacskip.threshold = 32: VACUUM scanned  2000 of 2000 pages" in res.stdout
    assert "vacskip.threshold =  4: VACUUM scanned   201 of 2000 pages" in res.stdout

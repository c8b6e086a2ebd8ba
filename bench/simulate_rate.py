"""How many heap pages per second vacskip.simulate() walks.

Two figures (bench/results/simulate_rate.md):
  1. the C++ walker alone (bench/walker_rate.cpp) on synthetic maps of a
     1 TiB table, which no test machine here can hold;
  2. vacskip.simulate() on a real 1 GiB table (131,072 pages) of a patched
     server, for the six default thresholds, server-side time per call
     (50 calls in one statement), including opening the relation and
     reading the map through shared buffers.
Maps: all frozen, then every 10,000th, 100th and 2nd page modified.

Usage (from the repository root):
  python3 -m bench.simulate_rate PREFIX [--pages N]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pgkit import TOP
from pgkit.cluster import Cluster
from pgkit.proc import make_workdir, remove_tree, run
from pgkit.server import install_extension, private_copy, server_at
from pgkit.tables import relation_pages

ROWS_PER_PAGE = 22   # int rows per page at fillfactor 10
CALLS = 50
REPS = 7


def walker_alone():
    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "walker_rate"
        subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(exe),
                        str(TOP / "bench/walker_rate.cpp"),
                        str(TOP / "src/core/vmscan.cpp")], check=True)
        return subprocess.run([str(exe)], check=True, text=True,
                              stdout=subprocess.PIPE).stdout


def main():
    ap = argparse.ArgumentParser(prog="python3 -m bench.simulate_rate",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--pages", type=int, default=131072)
    args = ap.parse_args()

    print("# 1. walker alone, synthetic 1 TiB maps, six thresholds, median of 7")
    print(walker_alone(), end="")

    work = make_workdir("vacskip-simrate-")
    server = private_copy(server_at(args.prefix), work / "server")
    node = None
    try:
        install_extension(TOP, work / "ext", server.pg_config, [server.pg_config])
        node = Cluster(server, work, {"shared_buffers": "'1GB'"}).start()
        version = run([server.pg_config, "--version"]).split()[1]
        print(f"\n# 2. vacskip.simulate() on PostgreSQL {version}, {args.pages} pages, "
              f"six thresholds, {CALLS} calls per statement, median of {REPS}")
        print("map,heap_pages,ms_per_call,pages_per_s")
        with node.connect() as conn:
            conn.execute("CREATE EXTENSION vacskip")
            conn.execute("CREATE TABLE t (id int) WITH (autovacuum_enabled = off, "
                         "fillfactor = 10)")
            conn.execute("INSERT INTO t SELECT g FROM generate_series(1, %s) g",
                         (args.pages * ROWS_PER_PAGE,))
            conn.execute("VACUUM (FREEZE) t")
            pages = relation_pages(conn, "t")
            for label, every in (("all frozen", None), ("every 10000th page modified", 10000),
                                 ("every 100th page modified", 100),
                                 ("every 2nd page modified", 2)):
                if every:
                    conn.execute("VACUUM (FREEZE) t")
                    conn.execute("DELETE FROM t WHERE id %% %s = 1",
                                 (every * ROWS_PER_PAGE,))
                times = []
                for _ in range(REPS):
                    t0 = time.perf_counter()
                    conn.execute("SELECT sum(s.pages_scanned) FROM generate_series(1, %s), "
                                 "LATERAL vacskip.simulate('t') s", (CALLS,)).fetchone()
                    times.append((time.perf_counter() - t0) / CALLS)
                med = statistics.median(times)
                print(f"{label},{pages},{med * 1000:.3f},{pages / med:.3g}")
        return 0
    finally:
        if node is not None:
            node.stop()
        remove_tree(work)


if __name__ == "__main__":
    sys.exit(main())

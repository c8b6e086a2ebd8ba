"""Plain VACUUM of an all-frozen table in shared buffers, servers side by side.

The cached all-frozen VACUUM test (pgsql-hackers thread "Confine vacuum skip
logic to lazy_scan_skip", March 2024), scaled down: a plain VACUUM of an
all-frozen table that is fully in shared buffers, on several servers side by
side.

Nearly all of such a VACUUM is the visibility-map walk over skippable pages,
so this shows what patches/pg15 0001-0002 (heap_vac_scan_next_block, no
per-block vacuum_delay_point) change.  Each server gets its own cluster and
an identical table; the timed VACUUMs alternate between the servers, and the
result is the median per server and its ratio to the first server.

Usage (from the repository root):
  python3 -m bench.cached_vacuum [--pages N] [--reps N] NAME=PREFIX NAME=PREFIX ...
"""

import argparse
import statistics

from pgkit.cluster import Cluster
from pgkit.proc import make_workdir, remove_tree
from pgkit.server import parse_server_args
from pgkit.tables import relation_pages
from pgkit.vacuum import timed_vacuum

ROWS_PER_PAGE = 22   # int rows fit in a page at fillfactor 10


def setup(node, pages):
    with node.connect() as conn:
        conn.execute("CREATE EXTENSION pg_prewarm")
        conn.execute("CREATE TABLE t (id int) WITH (autovacuum_enabled = off, fillfactor = 10)")
        conn.execute("INSERT INTO t SELECT g FROM generate_series(1, %s) g",
                     (pages * ROWS_PER_PAGE,))
        conn.execute("VACUUM (FREEZE) t")
        got = relation_pages(conn, "t")
        conn.execute("CREATE TABLE one (id int)")
        conn.execute("INSERT INTO one VALUES (1)")
        conn.execute("VACUUM (FREEZE) one")
        conn.execute("CHECKPOINT")
    return got


def main():
    ap = argparse.ArgumentParser(prog="python3 -m bench.cached_vacuum",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=229886,
                    help="table size (default: 229,886 pages, the page count of "
                    "the 20M-row table the test was scaled down to)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("servers", nargs="+", metavar="NAME=PREFIX")
    args = ap.parse_args()

    servers = parse_server_args(ap, args.servers)

    work = make_workdir("vacskip-bench-")
    nodes = []
    pages = {}
    try:
        for s in servers:
            node = Cluster(s, work, {"shared_buffers": "'3GB'"}, name=s.name).start()
            nodes.append(node)
            pages[s.name] = setup(node, args.pages)
            print(f"{s.name}: table of {pages[s.name]} pages, all-frozen", flush=True)
        conns = [n.connect() for n in nodes]
        for c in conns:
            c.execute("SELECT pg_prewarm('t')")
            c.execute("SELECT pg_prewarm('t', 'buffer', 'vm')")
            timed_vacuum(c, "t")           # warm-up, discarded
        big = {s.name: [] for s in servers}
        one = {s.name: [] for s in servers}
        for _ in range(args.reps):
            for s, c in zip(servers, conns):
                big[s.name].append(timed_vacuum(c, "t"))
                one[s.name].append(timed_vacuum(c, "one"))
        for c in conns:
            c.close()
    finally:
        for n in nodes:
            n.stop()
        remove_tree(work)

    base = statistics.median(big[servers[0].name])
    print(f"\nplain VACUUM of an all-frozen, cached table; "
          f"median of {args.reps}, servers alternating")
    print(f"{'server':<14} {'median ms':>10} {'1-page ms':>10} {'ns/page':>8} {'vs first':>9}")
    for s in servers:
        m = statistics.median(big[s.name])
        m1 = statistics.median(one[s.name])
        print(f"{s.name:<14} {m:10.2f} {m1:10.2f} {(m - m1) * 1e6 / pages[s.name]:8.1f} "
              f"{m / base:8.0%}")


if __name__ == "__main__":
    main()

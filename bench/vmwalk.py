"""Cached VACUUM of mostly frozen tables: stock, hook-only and word-walk
servers of one major, timed side by side on the same data directory.

What patches/pg18 0001 and patches/pg15 0003 (the visibility map walked a
word at a time) change is the cost of passing over skippable pages.  Tables
(one data directory, built once with the first server):

  big     --pages pages (default 1,000,000), all-frozen
  small   --small pages (default 229,886: the cached all-frozen VACUUM
          test as scaled down in bench/cached_vacuum.py), all-frozen
  sparse  --pages pages, all-frozen except every --every-th page, which is
          all-visible but not frozen (a plain VACUUM skips it too, and must
          notice it: relfrozenxid cannot advance)
  one     1 page: the fixed cost of a VACUUM

A table of a million pages is 8 GB, too big to keep one copy per server, so
the servers (same major) take turns on one data directory: each round
starts every server in turn (order rotating), loads the tables' visibility
maps and free space maps into shared buffers, runs one untimed VACUUM
(VERBOSE) of each table, whose pages-scanned count must be the same on every
server, then times --per-start plain VACUUMs of each table from the client,
and stops the server.  Reported: the median over all rounds, the spread
(min and max), and the ratio of medians to the first server.

Usage (from the repository root):
  python3 -m bench.vmwalk [--pages N] [--small N] [--every N] [--rounds N]
                          [--per-start N] NAME=PREFIX NAME=PREFIX ...
(NAME: MAJOR-VARIANT, e.g. 18-stock=$(tools/pgdev build 18 bench stock))
"""

import argparse
import statistics
import sys
import time

from pgkit.cluster import Cluster
from pgkit.proc import as_build_user, make_workdir, remove_tree, run
from pgkit.server import parse_server_args
from pgkit.tables import relation_pages
from pgkit.vacuum import parse_report, timed_vacuum, vacuum_verbose

TABLES = ("big", "small", "sparse", "one")
SETTINGS = {
    "shared_buffers": "'512MB'",
    # build the 8 GB tables without WAL (created and filled in one
    # transaction) and without checkpoints between the steps of 'sparse'
    "wal_level": "minimal", "max_wal_senders": "0",
    "max_wal_size": "'4GB'", "checkpoint_timeout": "'1h'",
    # no full-page images: VACUUM (FREEZE) of 8 GB writes little WAL, and
    # no opportunistic freezing of the sparse table's all-visible pages
    "full_page_writes": "off",
}


def make_table(conn, name, pages):
    """`pages` pages of one 800-byte row each (fillfactor 10), all-frozen."""
    with conn.transaction():
        conn.execute(f"CREATE TABLE {name} (id int, pad text) "
                     "WITH (autovacuum_enabled = off, fillfactor = 10)")
        conn.execute(f"INSERT INTO {name} SELECT g, repeat('x', 800) "
                     "FROM generate_series(0, %s) g", (pages - 1,))
    conn.execute(f"VACUUM (FREEZE) {name}")
    got = relation_pages(conn, name)
    assert got == pages, f"{name}: {got} pages, wanted {pages}"


def build(conn, pages, small, every):
    conn.execute("CREATE EXTENSION pg_prewarm")
    conn.execute("CREATE EXTENSION pg_visibility")
    make_table(conn, "big", pages)
    make_table(conn, "small", small)
    make_table(conn, "sparse", pages)
    make_table(conn, "one", 1)
    # every `every`-th page of sparse: a HOT update, then a VACUUM that
    # makes those pages all-visible without freezing them (no checkpoint in
    # between, so no opportunistic freezing)
    conn.execute("CHECKPOINT")
    conn.execute("UPDATE sparse SET pad = pad WHERE id %% %s = %s", (every, every // 2))
    conn.execute("VACUUM sparse")
    conn.execute("CHECKPOINT")
    summary = {}
    for t in TABLES:
        summary[t] = conn.execute(
            f"SELECT pg_relation_size('{t}') / current_setting('block_size')::int, "
            "all_visible, all_frozen "
            f"FROM pg_visibility_map_summary('{t}')").fetchone()
    return summary


def pg_ctl(server, datadir, logfile, *args):
    run(as_build_user([server.bindir / "pg_ctl", "-D", datadir, "-l", logfile,
                       "-w", *args]))


def one_start(server, node, times, scanned, per_start):
    pg_ctl(server, node.datadir, node.logfile, "start")
    try:
        with node.connect() as conn:
            for t in TABLES:
                conn.execute(f"SELECT pg_prewarm('{t}', 'buffer', 'vm')")
                conn.execute(f"SELECT pg_prewarm('{t}', 'buffer', 'fsm')")
                # warm-up, untimed: also the pages-scanned check
                scanned.setdefault(t, {}).setdefault(server.name, set()).add(
                    parse_report(vacuum_verbose(conn, t)).scanned)
            for _ in range(per_start):
                for t in TABLES:
                    times[t][server.name].append(timed_vacuum(conn, t))
    finally:
        pg_ctl(server, node.datadir, node.logfile, "-m", "fast", "stop")


def main():
    ap = argparse.ArgumentParser(prog="python3 -m bench.vmwalk",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=1_000_000)
    ap.add_argument("--small", type=int, default=229_886)
    ap.add_argument("--every", type=int, default=1000,
                    help="sparse: one all-visible, unfrozen page in this many")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--per-start", type=int, default=3)
    ap.add_argument("servers", nargs="+", metavar="NAME=PREFIX")
    args = ap.parse_args()

    servers = parse_server_args(ap, args.servers)
    if len({s.major for s in servers}) != 1:
        sys.exit("bench.vmwalk: all servers must be of one major (one data directory)")

    work = make_workdir("vacskip-vmwalk-")
    node = None
    try:
        node = Cluster(servers[0], work, SETTINGS, name="shared").start()
        t0 = time.time()
        with node.connect() as conn:
            summary = build(conn, args.pages, args.small, args.every)
        node.stop()
        print(f"built in {time.time() - t0:.0f} s with {servers[0].name}; "
              "pages, all-visible, all-frozen:", flush=True)
        for t in TABLES:
            print(f"  {t:<7} {summary[t]}", flush=True)

        times = {t: {s.name: [] for s in servers} for t in TABLES}
        scanned = {}
        for r in range(args.rounds):
            order = servers[r % len(servers):] + servers[:r % len(servers)]
            for s in order:
                one_start(s, node, times, scanned, args.per_start)
            print(f"round {r + 1}/{args.rounds} done", flush=True)
    finally:
        if node is not None and node.running:
            node.stop()
        remove_tree(work)

    print(f"\nplain VACUUM, visibility and free space maps in shared buffers; "
          f"{args.rounds} rounds x {args.per_start} per start, servers taking turns "
          "on one data directory; median [min-max] ms")
    print("pages scanned (VACUUM VERBOSE, every server, every round):")
    for t in TABLES:
        print(f"  {t:<7} " + ", ".join(f"{n}: {sorted(v)}" for n, v in scanned[t].items()))
    base = servers[0].name
    fixed = {s.name: statistics.median(times["one"][s.name]) for s in servers}
    head = f"{'table':<7} {'pages':>9}  " + "  ".join(f"{s.name:>22}" for s in servers)
    print(head)
    for t in TABLES:
        cells = []
        for s in servers:
            v = times[t][s.name]
            cells.append(f"{statistics.median(v):7.3f} [{min(v):.3f}-{max(v):.3f}]")
        print(f"{t:<7} {summary[t][0]:>9}  " + "  ".join(f"{c:>22}" for c in cells))
    print(f"\nratio of medians to {base}"
          " (and ns per page above the 1-page VACUUM's median)")
    for t in TABLES[:-1]:
        b = statistics.median(times[t][base])
        cells = []
        for s in servers:
            m = statistics.median(times[t][s.name])
            cells.append(f"{m / b:6.3f} ({(m - fixed[s.name]) * 1e6 / summary[t][0]:5.2f} ns)")
        print(f"{t:<7} {summary[t][0]:>9}  " + "  ".join(f"{c:>22}" for c in cells))
    bad = [t for t in TABLES if len({frozenset(v) for v in scanned[t].values()}) != 1
           or any(len(v) != 1 for v in scanned[t].values())]
    if bad:
        sys.exit(f"pages scanned differ between servers or rounds: {bad}")


if __name__ == "__main__":
    main()

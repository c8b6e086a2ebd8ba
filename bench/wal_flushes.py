"""What the WAL flushes of VACUUM's buffer ring add to a page read through.

VACUUM reads through a ring of buffers (256 kB on 15, vacuum_buffer_usage_limit,
2 MB by default, on 18).  A page it prunes is dirtied with a WAL record; when
the ring comes round to that buffer again, writing the page out must first
flush the WAL up to the page's LSN.  Each flush covers every record inserted
so far, so the flushes follow the ring's turns, and every page read, read
through or not, brings the next flush nearer.  vacskip.calibrate() reads
without dirtying and times VACUUM's per-page work in shared buffers: neither
contains these flushes.

On one cluster per server with the benchmark's uniform workload (bench/vacbench,
12,000 pages, cold reads on the unemulated disk, in the I/O mode given), each
repetition updates the same rows for every cell, then times a VACUUM at each
threshold with fsync on and with fsync off (a reload apart), in an order of
its own, and counts the cluster's WAL writes and syncs and their time
(track_wal_io_timing; pg_stat_wal on 15, pg_stat_io on 18).  Per server it
prints the medians per cell and, paired by repetition, per page the higher
threshold reads through and the lower does not: the time, the WAL sync time,
and the time with fsync on less the time with fsync off.

Usage (from the repository root, as root: the cold reads drop the table's
files from the OS page cache):
  python3 -m bench.wal_flushes [--mode buffered|direct] [--reps N] [--frac F]
      NAME=PREFIX ...   (patched servers: tools/pgdev build MAJOR bench patched)
"""

import argparse
import random
import statistics
import time

from pgkit.proc import make_workdir, remove_tree
from pgkit.server import parse_server_args
from bench.onetable import OneTable
from bench.vacbench import harness

WAL_15 = "SELECT wal_write, wal_sync, wal_sync_time FROM pg_stat_wal"
WAL_18 = ("SELECT coalesce(sum(writes), 0), coalesce(sum(fsyncs), 0), "
          "coalesce(sum(fsync_time), 0) FROM pg_stat_io WHERE object = 'wal'")


def wal_counters(conn, query):
    """The cluster's WAL writes, syncs and sync ms so far, once every
    process has reported its own (the walwriter's at its next cycle)."""
    time.sleep(0.6)
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT pg_stat_clear_snapshot()")
    return [float(x) for x in conn.execute(query).fetchone()]


def measure(server, work, mode, reps, frac, thresholds):
    """[{rep, fsync, threshold, ms, scanned, writes, syncs, sync_ms}]"""
    one = OneTable(server, work, f"wal-{server.name}", mode, "disk",
                   {"track_wal_io_timing": "on"})
    node, slow, table, files = one.node, one.slow, one.table, one.files
    out = []
    try:
        with node.connect() as conn:
            harness.warm_up(conn, table.relation)
            query = WAL_18 if one.major >= 18 else WAL_15
            for rep in range(reps):
                change = table.choose(frac, rep)
                cells = [(f, t) for f in ("on", "off") for t in thresholds]
                random.Random(f"wal-{rep}").shuffle(cells)
                for fsync, t in cells:
                    conn.execute(f"ALTER SYSTEM SET fsync = {fsync}")
                    conn.execute("SELECT pg_reload_conf()")
                    table.prepare_point(node, conn, change)
                    if conn.execute("SHOW fsync").fetchone()[0] != fsync:
                        raise RuntimeError(f"fsync is not {fsync} after the reload")
                    before = wal_counters(conn, query)
                    ms, report, _ = harness.cold_vacuum(conn, slow, mode, files,
                                                        table.relation, t, node.block_size)
                    d = [b - a for a, b in zip(before, wal_counters(conn, query))]
                    out.append(dict(rep=rep, fsync=fsync, threshold=t, ms=ms,
                                    scanned=report.scanned, writes=d[0], syncs=d[1],
                                    sync_ms=d[2]))
    finally:
        node.stop()
    return out


def paired(rows, lo, hi, value):
    """Per repetition: (value at hi - value at lo) * 1000 / (pages scanned
    at hi - at lo), µs per page read through at hi and not at lo."""
    out = []
    for rep in sorted({r["rep"] for r in rows}):
        cell = {(r["fsync"], r["threshold"]): r for r in rows if r["rep"] == rep}
        pages = cell[("on", hi)]["scanned"] - cell[("on", lo)]["scanned"]
        if pages > 0:
            out.append(value(cell, hi, lo) * 1000.0 / pages)
    return out


def report(name, rows, thresholds):
    med = statistics.median
    print(f"\n### {name}\n")
    print("| fsync | threshold | ms | pages scanned | WAL writes | WAL syncs | sync ms "
          "| pages scanned per sync |")
    print("|---|---|---|---|---|---|---|---|")
    for fsync in ("on", "off"):
        for t in thresholds:
            xs = [r for r in rows if (r["fsync"], r["threshold"]) == (fsync, t)]
            per_sync = (f"{med(x['scanned'] / x['syncs'] for x in xs):.0f}"
                        if all(x["syncs"] for x in xs) else "-")
            print(f"| {fsync} | {t} | {med(x['ms'] for x in xs):.1f} | "
                  f"{med(x['scanned'] for x in xs):.0f} | {med(x['writes'] for x in xs):.0f} | "
                  f"{med(x['syncs'] for x in xs):.0f} | {med(x['sync_ms'] for x in xs):.1f} | "
                  f"{per_sync} |")
    lo, hi = thresholds[0], thresholds[-1]
    print(f"\nPer page read through at {hi} and not at {lo}, µs, paired by repetition "
          "(median; each repetition's):\n")
    for text, fn in (
            ("time, fsync on", lambda c, h, l: c[("on", h)]["ms"] - c[("on", l)]["ms"]),
            ("time, fsync off", lambda c, h, l: c[("off", h)]["ms"] - c[("off", l)]["ms"]),
            ("WAL sync time (fsync on)",
             lambda c, h, l: c[("on", h)]["sync_ms"] - c[("on", l)]["sync_ms"]),
            ("time with fsync on less with fsync off",
             lambda c, h, l: (c[("on", h)]["ms"] - c[("on", l)]["ms"]) -
             (c[("off", h)]["ms"] - c[("off", l)]["ms"]))):
        xs = paired(rows, lo, hi, fn)
        print(f"* {text}: **{med(xs):.1f}** ({', '.join(f'{x:.1f}' for x in xs)})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("buffered", "direct"), default="buffered")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--frac", type=float, default=1e-3,
                    help="fraction of the rows each repetition updates")
    ap.add_argument("--thresholds", default="16,32", help="two thresholds, lower first")
    ap.add_argument("servers", nargs="+", metavar="NAME=PREFIX")
    args = ap.parse_args(argv)
    thresholds = [int(x) for x in args.thresholds.split(",")]
    if len(thresholds) != 2 or not 0 < thresholds[0] < thresholds[1]:
        ap.error("--thresholds: two thresholds, lower first")
    servers = parse_server_args(ap, args.servers)
    for s in servers:
        if not s.patched:
            ap.error(f"{s.name}: a patched server (vacskip.threshold sets the threshold)")
    work = make_workdir("vacskip-wal-")
    try:
        for s in servers:
            rows = measure(s, work, args.mode, args.reps, args.frac, thresholds)
            report(f"{s.name}, {args.mode}, uniform {args.frac:g}", rows, thresholds)
    finally:
        remove_tree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

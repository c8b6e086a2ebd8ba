"""18's io_method against the model's price of 32 over a lower threshold.

vacskip.calibrate() times its patterns' reads through a vacuum buffer
ring, dirtying and logging each page to read and writing back the dirty
pages its ring holds as VACUUM's ring does, with no other work between
its reads; VACUUM prunes, freezes and logs between its reads, and its
ring flushes the WAL before it writes a page it dirtied.  With synchronous
reads (io_method = sync) VACUUM waits for each read; with asynchronous
ones (worker, io_uring) its read stream's reads go on while it works or
writes.  This
measures how far the price of 32 against a lower threshold T is from
VACUUM's, per io_method; --set runs both under a setting, such as
vacuum_buffer_usage_limit = 0 (no ring: VACUUM and the calibration read
into shared buffers, whose 128 MB hold the whole table, so that VACUUM
writes and flushes nothing for its buffers before it ends).

On one cluster of an 18 server with the benchmark's uniform workload
(bench/vacbench, 12,000 pages, cold reads, a storage profile and I/O mode
of the benchmark), for each io_method in turn, twice over: a restart with
it, vacskip.calibrate(), then repetitions that each time a VACUUM at T and
at 32 (in an order of their own) after the same update, and take the
autotuner's costs for the map as explain_threshold() gives them.  Per
io_method it prints, per page 32 reads through and T does not, (time at 32
- time at T) measured and (cost at 32 - cost at T) priced, the medians
over the repetitions, and the threshold the autotuner chose.

Usage (from the repository root, as root: the cold reads drop the table's
files from the OS page cache):
  python3 -m bench.io_overlap [--profile P] [--mode direct|buffered]
      [--threshold T] [--reps N] [--methods worker,sync] [--set NAME=VALUE]
      NAME=PREFIX
"""

import argparse
import random
import statistics

from pgkit.proc import make_workdir, remove_tree
from pgkit.server import parse_server_args
from bench.onetable import OneTable
from bench.replay import GAPS
from bench.vacbench import harness
from bench.vacbench.profiles import PROFILES


def measure(server, work, args):
    """[{method, rep, measured, priced, ms_t, ms_32, chosen}]"""
    one = OneTable(server, work, "overlap", args.mode, args.profile, args.settings)
    node, slow, table, files = one.node, one.slow, one.table, one.files
    out = []
    try:
        rep = 0
        for _ in range(2):
            for method in args.methods:
                node.set_profile({**one.profile_conf, "io_method": f"'{method}'"}, one.env)
                node.restart()
                with node.connect() as conn:
                    one.calibrate(conn, args.calibrate_seconds)
                    for _ in range(args.reps):
                        out.append(dict(method=method, rep=rep,
                                        **one_rep(conn, node, slow, args, table, files, rep)))
                        rep += 1
    finally:
        one.close()
    return out


def one_rep(conn, node, slow, args, table, files, rep):
    change = table.choose(args.frac, rep)
    got = {}
    for t in random.Random(f"overlap-{rep}").sample([args.threshold, 32], 2):
        table.prepare_point(node, conn, change)
        # before both VACUUMs alike; the map, and so the costs, are the same
        e = harness.autotuned(conn, table.relation)
        if e["cost_source"] != "calibration" or e["cost_unit"] != "us":
            raise RuntimeError(f"explain_threshold: {e['cost_source']}, {e['cost_unit']}")
        ms, report, _ = harness.cold_vacuum(conn, slow, args.mode, files, table.relation, t,
                                            node.block_size)
        got[t] = (ms, report.scanned, e["costs"], e["all_frozen_threshold"])
    (ms_t, scanned_t, _, _), (ms_32, scanned_32, costs, chosen) = got[args.threshold], got[32]
    pages = scanned_32 - scanned_t
    if pages <= 0:
        raise RuntimeError(f"32 read {pages} pages more than {args.threshold}")
    priced = costs[GAPS.index(32)] - costs[GAPS.index(args.threshold)]
    return dict(measured=(ms_32 - ms_t) * 1000.0 / pages, priced=priced / pages,
                ms_t=ms_t, ms_32=ms_32, chosen=chosen)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="seek",
                    choices=sorted(p for p in PROFILES if not PROFILES[p].kernel_throttle))
    ap.add_argument("--mode", choices=("direct", "buffered"), default="direct")
    ap.add_argument("--threshold", type=int, default=4, choices=GAPS[:-1])
    ap.add_argument("--frac", type=float, default=1e-3,
                    help="fraction of the rows each repetition updates")
    ap.add_argument("--reps", type=int, default=6, help="repetitions per block (two blocks)")
    ap.add_argument("--methods", default="worker,sync", type=lambda v: v.split(","))
    ap.add_argument("--calibrate-seconds", type=float, default=20)
    ap.add_argument("--set", dest="settings", metavar="NAME=VALUE", action="append",
                    default=[], help="a server setting for both methods' blocks, "
                    "e.g. vacuum_buffer_usage_limit=0 (repeatable)")
    ap.add_argument("server", metavar="NAME=PREFIX")
    args = ap.parse_args(argv)
    try:
        args.settings = dict(kv.split("=", 1) for kv in args.settings)
    except ValueError:
        ap.error("--set takes NAME=VALUE")
    [server] = parse_server_args(ap, [args.server])
    if not server.patched or server.major < 18:
        ap.error(f"{server.name}: a patched 18 server (io_method is 18's)")
    work = make_workdir("vacskip-overlap-")
    try:
        rows = measure(server, work, args)
    finally:
        remove_tree(work)
    med = statistics.median
    t = args.threshold
    settings = "".join(f", {k} = {v}" for k, v in args.settings.items())
    print(f"\n### {server.name}, {args.mode}, {args.profile}, uniform {args.frac:g}, "
          f"{t} against 32{settings}\n")
    print(f"| io_method | repetitions | ms at {t} | ms at 32 | measured µs per page | "
          "priced | measured - priced | autotuner chose |")
    print("|---|---|---|---|---|---|---|---|")
    for m in args.methods:
        xs = [r for r in rows if r["method"] == m]
        chosen = sorted({r["chosen"] for r in xs})
        print(f"| {m} | {len(xs)} | {med(r['ms_t'] for r in xs):.1f} | "
              f"{med(r['ms_32'] for r in xs):.1f} | {med(r['measured'] for r in xs):.1f} | "
              f"{med(r['priced'] for r in xs):.1f} | "
              f"{med(r['measured'] - r['priced'] for r in xs):.1f} | "
              f"{', '.join(map(str, chosen))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

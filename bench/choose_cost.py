"""What choosing costs a VACUUM: vacskip.threshold = -1 against 32, paired.

With `vacskip.threshold = -1` the hook chooses the threshold at the start
of every VACUUM of every relation: it reads the settings or the
tablespace's calibration, walks the relation's visibility map once (the
walker behind simulate()) and prices the six thresholds.  This times that
choice where nothing else is left to time: plain VACUUMs of the default
size's uniform table (12,000 pages), all-frozen and cached, so that
VACUUM skips every page but the last whatever the threshold and its time
is its fixed cost.  Each repetition times one VACUUM with the autotuner
and one with `vacskip.threshold = 32` (no choice made) in an order of its
own, client-side wall time; first with no calibration (the settings'
path), then after `vacskip.calibrate()` (the calibrated path).  Printed:
per path the medians and the paired difference (median and quartiles,
µs).

Usage (from the repository root):
  python3 -m bench.choose_cost [--reps N] [--calibrate-seconds S] NAME=PREFIX ...
"""

import argparse
import random
import statistics
import sys
import time

from pgkit.proc import make_workdir, remove_tree
from pgkit.server import parse_server_args
from bench.onetable import OneTable


def timed(conn, relation, threshold):
    conn.execute(f"SET vacskip.threshold = {threshold}")
    t0 = time.perf_counter()
    conn.execute(f"VACUUM {relation}")
    return (time.perf_counter() - t0) * 1e6


def path_times(conn, relation, reps, seed):
    """[(µs with the autotuner, µs at 32)] per repetition."""
    rng = random.Random(seed)
    out = []
    for _ in range(reps):
        got = {}
        for t in rng.sample(["-1", "32"], 2):
            got[t] = timed(conn, relation, t)
        out.append((got["-1"], got["32"]))
    return out


def measure(server, work, args):
    """{path: ([(auto µs, 32 µs)], explain_threshold()'s cost_source)}."""
    one = OneTable(server, work, "choose", "buffered", "disk")
    out = {}
    try:
        with one.node.connect() as conn:
            conn.autocommit = True
            rel = one.table.relation
            conn.execute(f"VACUUM (FREEZE) {rel}")
            for path in ("settings", "calibrated"):
                if path == "calibrated":
                    one.calibrate(conn, args.calibrate_seconds)
                source = conn.execute("SELECT cost_source FROM vacskip.explain_threshold(%s)",
                                      (rel,)).fetchone()[0]
                out[path] = (path_times(conn, rel, args.reps, f"{server.name}-{path}"), source)
    finally:
        one.close()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--calibrate-seconds", type=float, default=20)
    ap.add_argument("servers", nargs="+", metavar="NAME=PREFIX")
    args = ap.parse_args(argv)
    if args.reps < 4:
        ap.error("--reps must be 4 or more (the paired differences' quartiles)")
    servers = parse_server_args(ap, args.servers)
    for s in servers:
        if not s.patched:
            ap.error(f"{s.name}: a patched server")
    print("| server | path (cost_source) | repetitions | median µs, threshold -1 | "
          "median µs, 32 | paired difference, µs: median [quartiles] |")
    print("|---|---|---|---|---|---|")
    for server in servers:
        work = make_workdir("vacskip-choose-")
        try:
            got = measure(server, work, args)
        finally:
            remove_tree(work)
        for path, (times, source) in got.items():
            auto, stock = zip(*times)
            q1, q2, q3 = statistics.quantiles([a - b for a, b in times], n=4)
            print(f"| {server.name} | {path} ({source}) | {len(times)} | "
                  f"{statistics.median(auto):.0f} | {statistics.median(stock):.0f} | "
                  f"{q2:.0f} [{q1:.0f}, {q3:.0f}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

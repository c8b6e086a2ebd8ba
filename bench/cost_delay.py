"""Cost-based vacuum delay against the price of 32 over a lower threshold.

With vacuum_cost_delay above 0 (autovacuum's default: 2 ms, with
vacuum_cost_limit 200) VACUUM adds vacuum_cost_page_miss to its balance
for each page it reads in and vacuum_cost_page_hit for each it finds in
shared buffers, as the free space map's page where it records each page's
free space, and sleeps vacuum_cost_delay x balance / vacuum_cost_limit
whenever the balance reaches the limit: each page read through costs
(miss + hit) x delay / limit of sleep, 30 µs at those defaults, however
fast the storage reads it.  This measures what it costs: per page
32 reads through and T does not, (time at 32 - time at T) without a delay
and with one, paired: each repetition's four VACUUMs (T and 32, without
and with the delay, in an order of their own) read the same update.

On one cluster with the benchmark's uniform workload (bench/vacbench,
12,000 pages, cold reads, a storage profile and I/O mode of the
benchmark): vacskip.calibrate(), then the repetitions, each VACUUM with
the delay set in the session (a manual VACUUM's).  It prints, per delay,
the medians over the repetitions of the times at T and 32, of the µs per
page, of the points of cost per page (VACUUM VERBOSE's buffer usage, each
miss, hit and dirtied buffer at its setting's points) and, from 18 on,
of the sleep per page as VACUUM timed it (track_cost_delay_timing), and
the thresholds the autotuner chose for the repetitions' maps under that
delay (explain_threshold()); and what the sleep alone costs a page,
(miss + hit) x delay / limit, against the difference of the two.

Then, per threshold, how far the sleeps hid the reads: the backend's
time on a CPU during each VACUUM (/proc/PID/schedstat) splits the time it
was awake into work and waiting, the waiting the sleeps hid is counted
per sleep (slept / delay sleeps), and each VACUUM with the delay is set
against two predictions from the one without it at the same threshold
on the same update: the sum (its time plus the sleep), as if nothing
went on during a sleep, and the overlap (the work, the sleep, and what
of the waiting the sleep did not cover, max(0, wait - sleep)), as if
every read the VACUUM waited for could have been under way during its
sleeps.  The sleep is VACUUM's own timing from 18 on, before it the
points of cost VACUUM VERBOSE's buffer usage counts x delay / limit.

Usage (from the repository root, as root: the cold reads drop the table's
files from the OS page cache):
  python3 -m bench.cost_delay [--profile P] [--mode direct|buffered]
      [--threshold T] [--reps N] [--delay MS] [--limit N]
      [--emulation KEY=VALUE[,KEY=VALUE]] NAME=PREFIX
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
    """Per repetition {delay: {ms_t, ms_32, per_page, chosen}}, for delay
    0 and args.delay: chosen, the autotuner's threshold for the
    repetition's map under that delay (explain_threshold())."""
    one = OneTable(server, work, "delay", args.mode, args.profile,
                   emulated=args.emulation)
    node, slow, table, files = one.node, one.slow, one.table, one.files
    out = []
    try:
        with node.connect() as conn:
            one.calibrate(conn, args.calibrate_seconds)
            conn.execute(f"SET vacuum_cost_limit = {args.limit}")
            if one.major >= 18:
                conn.execute("SET track_cost_delay_timing = on")
            s = harness.cost_delay_settings(conn)
            args.points = [s[f"vacuum_cost_page_{x}"] for x in ("hit", "miss", "dirty")]
            for rep in range(args.reps):
                out.append(one_rep(conn, node, slow, args, table, files, rep))
    finally:
        one.close()
    return out


def one_rep(conn, node, slow, args, table, files, rep):
    change = table.choose(args.frac, rep)
    pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    got = {}
    split = {}
    order = [(d, t) for d in (0, args.delay) for t in (args.threshold, 32)]
    for d, t in random.Random(f"delay-{rep}").sample(order, len(order)):
        table.prepare_point(node, conn, change)
        conn.execute(f"SET vacuum_cost_delay = {d}")
        chosen = harness.autotuned(conn, table.relation)["all_frozen_threshold"]
        ms, report, c = harness.cold_vacuum(conn, slow, args.mode, files, table.relation, t,
                                            node.block_size, backend_pid=pid)
        slept = (report.delay_ms if report.delay_ms is not None else
                 sum(p * b for p, b in zip(args.points, report.buffers)) * d / args.limit)
        got[d, t] = (ms, report, chosen)
        split[d, t] = (ms, c["cpu_ms"], slept)
    conn.execute("RESET vacuum_cost_delay")
    row = {}
    for d in (0, args.delay):
        (ms_t, at_t, chosen), (ms_32, at_32, _) = got[d, args.threshold], got[d, 32]
        pages = at_32.scanned - at_t.scanned
        if pages <= 0:
            raise RuntimeError(f"32 read {pages} pages more than {args.threshold}")
        points = sum(p * (b32 - bt) for p, b32, bt in zip(args.points, at_32.buffers,
                                                            at_t.buffers))
        timed = at_32.delay_ms is not None
        row[d] = dict(ms_t=ms_t, ms_32=ms_32, per_page=(ms_32 - ms_t) * 1000.0 / pages,
                      points=points / pages, chosen=chosen,
                      slept=(at_32.delay_ms - at_t.delay_ms) * 1000.0 / pages if timed else None)
    for t in (args.threshold, 32):
        row["split", t] = sleep_split(split[0, t][:2], *split[args.delay, t], args.delay)
    return row


def sleep_split(without, ms_d, cpu_d, slept, delay):
    """One threshold's VACUUM without the delay, `without` (ms, ms on a
    CPU), and with it (ms_d, cpu_d, slept: ms slept), `delay` ms a sleep:
    their times on a CPU and waiting (awake, not on a CPU), the waiting
    the sleeps hid, per sleep (slept / delay of them), and ms_d against
    its predictions, the sum (the time without the delay plus the sleep)
    and the overlap (the work with the delay, the sleep, and what of the
    waiting without it the sleep did not cover)."""
    ms_0, cpu_0 = without
    wait_0, wait_d = ms_0 - cpu_0, ms_d - cpu_d - slept
    return dict(cpu_0=cpu_0, wait_0=wait_0, cpu_d=cpu_d, wait_d=wait_d, slept=slept,
                hidden=(wait_0 - wait_d) * delay / slept if slept > 0 else float("nan"),
                measured=ms_d, sum=ms_0 + slept, overlap=cpu_d + slept + max(0.0, wait_0 - slept))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="disk",
                    choices=sorted(p for p in PROFILES if not PROFILES[p].kernel_throttle))
    ap.add_argument("--mode", choices=("direct", "buffered"), default="buffered")
    ap.add_argument("--threshold", type=int, default=4, choices=GAPS[:-1])
    ap.add_argument("--frac", type=float, default=1e-3,
                    help="fraction of the rows each repetition updates")
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--delay", type=float, default=2.0, help="vacuum_cost_delay, ms")
    ap.add_argument("--limit", type=int, default=200, help="vacuum_cost_limit")
    ap.add_argument("--calibrate-seconds", type=float, default=20)
    ap.add_argument("--emulation", default="", metavar="KEY=VALUE[,KEY=VALUE]",
                    help="the profile's emulation parameters in place of its own")
    ap.add_argument("server", metavar="NAME=PREFIX")
    args = ap.parse_args(argv)
    if not args.delay > 0:
        ap.error("--delay must be above 0")
    if args.reps < 2:
        ap.error("--reps must be 2 or more (the paired differences' quartiles)")
    known = PROFILES[args.profile].emulation
    try:
        args.emulation = {k: float(v) for k, v in (
            x.split("=", 1) for x in args.emulation.split(",") if x)}
    except ValueError:
        ap.error(f"--emulation {args.emulation}: want KEY=NUMBER[,KEY=NUMBER]")
    if set(args.emulation) - set(known):
        ap.error(f"--emulation: {args.profile}'s parameters are {', '.join(known) or 'none'}")
    [server] = parse_server_args(ap, [args.server])
    if not server.patched:
        ap.error(f"{server.name}: a patched server")
    work = make_workdir("vacskip-delay-")
    try:
        rows = measure(server, work, args)
    finally:
        remove_tree(work)
    med = statistics.median
    t, d = args.threshold, args.delay
    sleep = (args.points[0] + args.points[1]) * d * 1000.0 / args.limit
    emulated = "".join(f", {k} {v:g}" for k, v in args.emulation.items())
    print(f"\n### {server.name}, {args.mode}, {args.profile}{emulated}, uniform "
          f"{args.frac:g}, {t} against 32, vacuum_cost_limit {args.limit}\n")
    print(f"| vacuum_cost_delay | repetitions | ms at {t} | ms at 32 | "
          "µs per page 32 reads through | points of cost per page | µs slept per page | "
          "autotuner chose |")
    print("|---|---|---|---|---|---|---|---|")
    for x in (0, d):
        chosen = sorted({r[x]["chosen"] for r in rows})
        slept = [r[x]["slept"] for r in rows if r[x]["slept"] is not None]
        print(f"| {x:g} ms | {len(rows)} | {med(r[x]['ms_t'] for r in rows):.1f} | "
              f"{med(r[x]['ms_32'] for r in rows):.1f} | "
              f"{med(r[x]['per_page'] for r in rows):.1f} | "
              f"{med(r[x]['points'] for r in rows):.2f} | "
              f"{f'{med(slept):.1f}' if slept else 'not timed'} | "
              f"{', '.join(map(str, chosen))} |")
    print("\nThe sleeps against the reads, ms, medians: the VACUUM's time on a CPU "
          "and its other time awake (waiting) without the delay and with it, what it "
          "slept, and its time with the delay, measured and predicted\n")
    print("| threshold | CPU without | waiting without | CPU with | waiting with | slept | "
          "hidden per sleep | measured | sum | overlap |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for x in (t, 32):
        print(f"| {x} | " + " | ".join(
            f"{med(r['split', x][k] for r in rows):.{2 if k == 'hidden' else 1}f}" for k in (
                "cpu_0", "wait_0", "cpu_d", "wait_d", "slept", "hidden", "measured", "sum",
                "overlap")) + " |")
    extra = [r[d]["per_page"] - r[0]["per_page"] for r in rows]
    print(f"\nWith the delay less without, per page (median of the paired differences, "
          f"quartiles): {med(extra):.1f} µs ({statistics.quantiles(extra, n=4)[0]:.1f}, "
          f"{statistics.quantiles(extra, n=4)[2]:.1f}); the sleep alone, "
          f"(vacuum_cost_page_miss + vacuum_cost_page_hit) x delay / limit: {sleep:.1f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

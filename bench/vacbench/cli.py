"""The command line: python3 -m bench.vacbench (run from the repository
root); what it measures and writes: bench/vacbench/__init__.py."""

import argparse
import datetime
import os
import time
from pathlib import Path

from pgkit import TOP
from pgkit.server import parse_server

import bench.vacbench
from bench.vacbench.machine import machine_tag, record_load, set_read_ahead_kb
from bench.vacbench.phases import Bench
from bench.vacbench.plan import SIZES, apply_scope, read_planned
from bench.vacbench.profiles import PROFILES, SIZE_PROFILES
from bench.vacbench.progress import fmt_s, log
from bench.vacbench.report import write_report
from bench.vacbench.stats import MAX_REPS_FACTOR
from bench.vacbench.workloads import WORKLOADS

COMMAND = "python3 -m bench.vacbench"
PHASES = ("sweep", "cached")


def bench_server(spec):
    """A --server: patched or stock (the benchmark compares the two)."""
    try:
        server = parse_server(spec)
    except ValueError as e:
        raise SystemExit(str(e))
    if server.variant not in ("patched", "stock"):
        raise SystemExit(f"bad --server {spec!r}: the benchmark compares patched and stock")
    return server


def parser():
    ap = argparse.ArgumentParser(prog=COMMAND,
                                 description=bench.vacbench.__doc__.split("\n")[0])
    ap.add_argument("--size", choices=SIZES, default="default")
    ap.add_argument("--out", type=Path, help="result directory (default: "
                    "bench/results/DATE-MACHINE[-SIZE]); an existing runs.csv there is resumed")
    ap.add_argument("--server", action="append", default=[], metavar="NAME=PREFIX")
    ap.add_argument("--phases", default="sweep,cached",
                    help="sweep (every workload, pgbench among them) and/or cached")
    ap.add_argument("--penalty-us", type=int, help="the seek profile's read penalty, µs")
    ap.add_argument("--cached-pages", type=int,
                    help="table size of the cached all-frozen VACUUM test")
    ap.add_argument("--profiles", help="comma-separated storage profiles "
                    f"({', '.join(PROFILES)}): a subset of the size's "
                    f"({', '.join(SIZE_PROFILES)}), opt-in ones too; kept in OUT/scope.txt "
                    "for later runs")
    ap.add_argument("--workloads", help="comma-separated workloads among those the size "
                    f"has fractions for ({', '.join(WORKLOADS)}; the size runs some of them by "
                    "default); kept in OUT/scope.txt for later runs")
    ap.add_argument("--fracs", help="comma-separated subset of the workloads' fractions: F "
                    "(every workload that has it) or WORKLOAD:F; kept in OUT/scope.txt for "
                    "later runs")
    ap.add_argument("--reps", help="repetitions per row: N (undecided rows up to "
                    f"{MAX_REPS_FACTOR}N), or N,M (up to M); kept in OUT/scope.txt for later runs")
    ap.add_argument("--emulation", help="other emulation parameters for storage the profiles "
                    "do not describe: PROFILE.KEY=VALUE, comma-separated (e.g. "
                    "latency.latency_us=200,iops.iops=1000); kept in OUT/scope.txt")
    ap.add_argument("--settings", help="other settings of the profiles' DBAs: "
                    "PROFILE.NAME=VALUE, comma-separated (e.g. "
                    "latency.maintenance_io_concurrency=4); kept in OUT/scope.txt")
    ap.add_argument("--calibrate-seconds", type=float, metavar="S",
                    help="vacskip.calibrate()'s seconds (the size's: calibrate()'s default, "
                    "20); the report's calibration table gives each call's")
    ap.add_argument("--read-ahead-kb", type=int, metavar="KB",
                    help="set the kernel's readahead (read_ahead_kb) of the clusters' block "
                    "device to KB while measuring, then restore it (root; recorded in "
                    "OUT/load.txt)")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--installed", action="store_true",
                    help="vacskip is installed in the patched servers already (tests)")
    return ap


def measure(args, cfg, out):
    """Run the phases into out/runs.csv; the load at the start and end of
    the session goes to out/load.txt."""
    servers = [bench_server(s) for s in args.server]
    if not servers:
        raise SystemExit("no --server given")
    # the report's count of missing points covers the servers of the run
    planned = sorted({*read_planned(out), *(s.name for s in servers if s.patched)})
    (out / "servers.txt").write_text("".join(f"{n}\n" for n in planned))
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = [p for p in phases if p not in PHASES]
    if unknown or not phases:
        raise SystemExit(f"--phases: {', '.join(unknown) or 'none given'}: want "
                         f"{' and/or '.join(PHASES)} (pgbench is a workload of the sweep: "
                         "--workloads pgbench)")
    if args.read_ahead_kb is not None and any(PROFILES[p].block_device
                                              for p in cfg["profiles"]):
        raise SystemExit("--read-ahead-kb: not with a profile whose device holds the "
                         "clusters (block-latency): it reads ahead as far as the disk does")
    bench = Bench(args, cfg, servers, out)
    t0 = time.monotonic()
    saved_ra = None
    if args.read_ahead_kb is not None:
        saved_ra = set_read_ahead_kb(args.read_ahead_kb)
        log(f"read_ahead_kb {args.read_ahead_kb} (was {saved_ra}) while measuring")
    try:
        try:
            record_load(out, "start", bench.cluster_root)
            bench.run(phases)
        finally:
            try:
                record_load(out, "end", bench.cluster_root)
            finally:
                bench.close()
    finally:
        if saved_ra is not None:
            set_read_ahead_kb(saved_ra)
            log(f"read_ahead_kb {saved_ra} again")
    log(f"measurements done in {fmt_s(time.monotonic() - t0)}")


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    cfg = dict(SIZES[args.size])
    if args.penalty_us is not None:
        cfg["penalty_us"] = args.penalty_us
    if args.read_ahead_kb is not None and args.read_ahead_kb < 0:
        ap.error(f"--read-ahead-kb {args.read_ahead_kb}: want 0 or more kB")
    if args.cached_pages is not None:
        cfg["cached_pages"] = args.cached_pages
    if args.calibrate_seconds is not None:
        if not 0 < args.calibrate_seconds <= 3600:
            ap.error(f"--calibrate-seconds {args.calibrate_seconds:g}: want more than 0 and "
                     "at most 3600")
        cfg["calib_seconds"] = args.calibrate_seconds
    out = args.out or (TOP / "bench" / "results" /
                       f"{datetime.date.today():%Y-%m-%d}-{machine_tag()}"
                       f"{'' if args.size == 'full' else '-' + args.size}")
    out.mkdir(parents=True, exist_ok=True)
    try:
        scope = apply_scope(cfg, out, args.profiles, args.fracs, args.reps, args.workloads,
                            args.emulation, args.settings)
    except ValueError as e:
        ap.error(str(e))
    command = " ".join([COMMAND, "--size", args.size] +
                       (["--phases", args.phases] if args.phases != ap.get_default("phases") else []) +
                       [f"--{k} {v}" for k, v in scope.items()])
    if not args.report_only:
        measure(args, cfg, out)
    for line in write_report(out, args.size, cfg, command):
        log(line)
    log(f"report: {os.path.relpath(out / 'report.md')}")
    return 0

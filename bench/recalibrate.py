"""Would another calibration have chosen otherwise?  A finished run's rows
priced with new calibrations of other lengths.

A `make bench` run keeps, per group (server, I/O mode, storage profile),
the calibration its autotuner used and, per row, every fixed threshold's
timings on the same maps (bench/replay.py).  This starts one cluster of
the group's server under the run's emulation of that profile and its
DBA's settings (OUT/scope.txt, as the run had them), calls
vacskip.calibrate() on it once per duration given, and replays the
group's rows with each calibration in place of the run's own (the
current model of bench/replay.py): per row the thresholds chosen and
their median time over the row's best fixed threshold's, in the run's
own fixed columns; the geometric mean over the rows; and, per row, the
calibration's figures (µs per page to read after a file's first pages,
thresholds 1 to 32) at the two calibrated densities its maps are priced
between.  The calibrations are new measurements on this machine as it
is now; the timings are the run's.

Usage (from the repository root):
  python3 -m bench.recalibrate bench/results/DIR NAME=PREFIX MODE PROFILE
      [--seconds 20,60,120]
"""

import argparse
import statistics
import sys
from pathlib import Path

from pgkit.proc import make_workdir, remove_tree
from pgkit.server import parse_server_args
from bench import replay
from bench.onetable import OneTable
from bench.vacbench import plan, stats
from bench.vacbench.plan import SIZES


def scope_of(run, profile):
    """The run's emulation parameters and DBA settings of `profile`
    (OUT/scope.txt; none: the profile's own)."""
    cfg = dict(SIZES["default"])
    kept = plan.read_scope(run)
    for option, apply in plan.SCOPES:
        if option in kept:
            apply(cfg, kept[option])
    return (cfg.get("emulation_of", {}).get(profile, {}),
            cfg.get("settings_of", {}).get(profile, {}))


def calibrations(server, mode, profile, emulated, dba, seconds):
    """[(label, calibrate()'s row)], one per duration."""
    work = make_workdir("vacskip-recalibrate-")
    out = []
    try:
        one = OneTable(server, work, "recalibrate", mode, profile, emulated=emulated, dba=dba)
        try:
            with one.node.connect() as conn:
                for s in seconds:
                    cal = one.calibrate(conn, s)[0]
                    out.append((f"{s:g} s: {cal['rounds']} rounds in {cal['seconds']:.0f} s",
                                cal))
        finally:
            one.close()
    finally:
        remove_tree(work)
    return out


def figures(cal, d):
    """read_us at the calibrated densities either side of d."""
    i, _ = replay.locate(cal["densities"], d)
    return " ; ".join(f"{cal['densities'][j]:.3g}: " + "/".join(
        f"{x:.0f}" for x in cal["read_us"][j]) for j in (i, i + 1))


def priced(calib, cells, key, cal):
    """The group's rows priced with `cal`: [(row, chosen, ratio, figures)]."""
    calib = dict(calib)
    calib[key] = dict(calib[key], calibrate=cal)
    out = []
    for row, cols in sorted(cells.items()):
        got = row[:3] == key and replay.row_maps(calib, row, cols)
        if not got:
            continue
        c, work, maps, delay = got
        chosen, ratio, _ = replay.judge_choices(
            cols, {rep: replay.MODELS["current"](c, m, work, delay) for rep, m in maps.items()})
        d = statistics.median(m["io_runs"][0] / max(m["rel_pages"] - m["needed"], 1)
                              for m in maps.values())
        out.append((row, sorted(set(chosen.values())), ratio, figures(c, d)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("server", metavar="NAME=PREFIX")
    ap.add_argument("mode", choices=("direct", "buffered"))
    ap.add_argument("profile")
    ap.add_argument("--seconds", default="20,60,120",
                    help="calibrate()'s seconds, comma-separated (default 20,60,120)")
    args = ap.parse_args(argv)
    [server] = parse_server_args(ap, [args.server])
    if not server.patched:
        ap.error(f"{server.name}: a patched server")
    try:
        seconds = [float(x) for x in args.seconds.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--seconds {args.seconds}: want numbers, comma-separated")
    loaded = replay.load(args.run)
    key = (server.name, args.mode, args.profile)
    if loaded is None or key not in loaded[0]:
        ap.error(f"{args.run}: no calibration of {' '.join(key)} in its runs.csv")
    calib, cells = loaded
    emulated, dba = scope_of(args.run, args.profile)
    runs = [("the run's own", calib[key]["calibrate"])]
    runs += calibrations(server, args.mode, args.profile, emulated, dba, seconds)
    print(f"\n### {args.run.name}: {' '.join(key)}, priced with other calibrations\n")
    print("| calibration | row | thresholds chosen | time / row's best fixed | figures "
          "(density: µs per page to read at 1/2/4/8/16/32) |")
    print("|---|---|---|---|---|")
    for label, cal in runs:
        rows = priced(calib, cells, key, cal)
        for row, chosen, ratio, fig in rows:
            print(f"| {label} | {row[3]} {row[5]:g} | {'/'.join(map(str, chosen))} | "
                  f"{ratio:.2f} | {fig} |")
        if rows:
            print(f"| {label} | geometric mean | | **{stats.geomean([r[2] for r in rows]):.3f}** "
                  "| |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

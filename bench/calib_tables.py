"""The calibrated figures of a `make bench` run, as docs/model.md shows them.

Every calibrate() of a run is kept in its runs.csv (phase calib, the
note's "calibrate").  This prints, in Markdown, the two tables of
model.md's "This machine's disk, and each profile":

1. the disk profile's figures: µs per page to read at thresholds 1, 2, 4,
   8, 16, 32 by density, with buffered reads on a file's first 2,048 pages
   and after them, each density's noise, the rounds, and VACUUM's work per
   page read through;
2. every profile after a file's first pages (with direct reads the only
   figures): per density the threshold whose figure is the least, and 32's
   figure over its own where that saving lies beyond the noise of the two
   figures (t95 times the root of the sum of their squares, model.md's
   rule at one density); "?" where it does not, 32 where 32 is the least.

Usage (from the repository root):
  python3 -m bench.calib_tables bench/results/DIR
"""

import argparse
import math
import sys
from pathlib import Path

from bench import replay

PROFILES = ("disk", "seek", "latency", "latency-serial", "iops")
PATHS = (("15-patched", "buffered"), ("18-patched", "buffered"), ("18-patched", "direct"))
DENSITY_NAMES = ("1 %", "1/57", "1/33", "1/17", "1/9", "1/5", "1/3", "1/2")


def fig(x):
    """Two significant figures below 10, whole numbers above."""
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


def server_name(server):
    """The benchmark's servers by their versions, as model.md names them:
    runs.csv keeps only the major, and these are the releases tools/pgdev
    builds (its PG_VERSION); any other name as it is."""
    return {"15-patched": "15.18", "18-patched": "18.6"}.get(server, server)


def calibrations(path):
    """{(server, mode, profile): calibrate()'s figures}, the last of each in
    runs.csv (as bench.replay loads them)."""
    calib, _ = replay.load(path)
    return {k: v["calibrate"] for k, v in calib.items()
            if replay.priced_like_this(v.get("calibrate", {}))}


def disk_table(cals):
    cols = []
    for server, mode in PATHS:
        cal = cals.get((server, mode, "disk"))
        if cal is None:
            continue
        name = f"{server_name(server)} {mode}"
        if mode == "buffered":
            cols += [(f"{name}: first 2,048 pages", cal, "start_read_us", "start_read_noise"),
                     ("after them", cal, "read_us", "read_noise")]
        else:
            cols.append((name, cal, "read_us", "read_noise"))
    lines = ["| density (skippable run on average) | " +
             " | ".join(c[0] for c in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    densities = cols[0][1]["densities"]
    for i, d in enumerate(densities):
        lines.append(f"| {DENSITY_NAMES[i]} ({round((1 - d) / d)}) | " +
                     " | ".join(", ".join(fig(x) for x in c[1][c[2]][i]) for c in cols) + " |")
    lines.append("| noise, per density (1 % to 1/2) | " +
                 " | ".join(", ".join(f"{x:.2f}" for x in c[1][c[3]]) for c in cols) + " |")
    first = [c for c in cols if c[0] != "after them"]

    def pad(c):
        """An empty cell under "after them"."""
        return " | " if c[2] == "start_read_us" else ""
    lines.append("| rounds | " + " | ".join(f"{c[1]['rounds']}{pad(c)}" for c in first) + " |")
    lines.append("| work, µs per page + per tuple | " +
                 " | ".join(f"{c[1]['cpu_page_us']:.2f} + {c[1]['cpu_tuple_us']:.3f}{pad(c)}"
                            for c in first) + " |")
    return "\n".join(lines)


def least(cal, i):
    """The threshold whose figure at density i is the least, after a
    file's first pages, and how it reads: its saving as 32's figure over
    its own where beyond the noise, '?' where within it, or 32."""
    row = cal["read_us"][i]
    k = min(range(len(row)), key=lambda j: (row[j], -j))
    if k == len(row) - 1:
        return "32"
    t = replay.GAPS[k]
    noise = cal["read_noise"][i]
    ratio = row[-1] / row[k]
    if math.log(ratio) <= replay.one_sided_95(cal) * math.sqrt(2) * noise:
        return f"{t} ?"
    return f"{t} ({ratio:.2f} ×)" if ratio < 1.1 else f"{t} ({ratio:.1f} ×)"


def profile_table(cals):
    lines = ["| profile | server, I/O | rounds | noise | " + " | ".join(DENSITY_NAMES) + " |",
             "|---" * (4 + len(DENSITY_NAMES)) + "|"]
    for profile in PROFILES:
        for server, mode in PATHS:
            cal = cals.get((server, mode, profile))
            if cal is None:
                continue
            n = cal["read_noise"]
            lines.append(f"| {profile} | {server_name(server)}, {mode} | {cal['rounds']} | "
                         f"{min(n):.2f}-{max(n):.2f} | " +
                         " | ".join(least(cal, i) for i in range(len(cal["densities"]))) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    args = ap.parse_args(argv)
    cals = calibrations(args.dir)
    if not cals:
        print(f"{args.dir}: no calibration with one figure per density and threshold",
              file=sys.stderr)
        return 1
    print(disk_table(cals))
    print()
    print(profile_table(cals))
    return 0


if __name__ == "__main__":
    sys.exit(main())

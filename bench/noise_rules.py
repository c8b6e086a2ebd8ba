"""calibrate()'s figures and noises from its rounds, and other ways to take
the noise, judged on a finished run's measurements.

calibrate() returns each round's figure of every pattern (round_read_us,
round_start_read_us: density × threshold × round, µs per page to read).
figures() transcribes src/core/calibration.cpp's density_figures(): per
density, each pattern's median over the rounds with each round's level
taken out, and the noise from the residual of the two-way layout of the
density's six patterns and the rounds.  A run's calibrations (runs.csv's
notes) hold the rounds where it was made with a calibrate() that returns
them; on those a noise rule can be replayed as bench/replay.py replays a
model: which threshold it chooses for each row, and what that threshold
measured there.

    python3 -m bench.noise_rules DIR [DIR ...]
"""

import argparse
import math
import statistics
import sys
from pathlib import Path

from bench import replay

PI = math.pi


def logs(cube_d, rounds):
    """One density's [pattern][round] logarithms."""
    return [[math.log(max(x, 1e-300)) for x in row[:rounds]] for row in cube_d]


def residuals(y):
    """The residuals of a two-way layout y[pattern][round] once each
    pattern's and each round's mean are taken out."""
    k, r = len(y), len(y[0])
    pm = [sum(row) / r for row in y]
    rm = [sum(y[i][j] for i in range(k)) / k for j in range(r)]
    g = sum(rm) / r
    return [[y[i][j] - pm[i] - rm[j] + g for j in range(r)] for i in range(k)]


def sd_noise(y):
    """calibration.cpp's read_noise(): the residual's standard deviation,
    (patterns - 1) × (rounds - 1) degrees of freedom, times sqrt(π/2) over
    sqrt(rounds); 0 with fewer than two rounds."""
    k, r = len(y), len(y[0])
    if k < 2 or r < 2:
        return 0.0
    ss = sum(e * e for row in residuals(y) for e in row)
    return math.sqrt(PI / 2 * ss / ((k - 1) * (r - 1)) / r)


def medians(y):
    """Each pattern's median over the rounds, each round's level (its mean
    over the patterns, less the mean of those) taken out, as µs."""
    k, r = len(y), len(y[0])
    rm = [sum(y[i][j] for i in range(k)) / k for j in range(r)]
    g = sum(rm) / r
    return [math.exp(statistics.median(y[i][j] - rm[j] + g for j in range(r)))
            for i in range(k)]


def figures(cal, noise=sd_noise):
    """(read_us, read_noise, start_read_us, start_read_noise) from a
    calibration's rounds, the noise taken by `noise`; None where the
    calibration holds no rounds."""
    rounds = cal.get("rounds", 0)
    out = []
    for key in ("round_read_us", "round_start_read_us"):
        cube = cal.get(key)
        if not isinstance(cube, list) or rounds < 1:
            return None
        ys = [logs(c, rounds) for c in cube]
        out += [[medians(y) for y in ys], [noise(y) for y in ys]]
    return tuple(out)


def flat(xs):
    """A nested list's numbers, in order."""
    return [y for x in xs for y in flat(x)] if isinstance(xs, list) else [xs]


def with_noise(cal, noise):
    """The calibration as calibrate() would have kept it had it taken the
    noise by `noise` (the figures as they are)."""
    got = figures(cal, noise)
    if got is None:
        return None
    return dict(cal, read_noise=got[1], start_read_noise=got[3])


RULES = {"sd": sd_noise}


def judge(paths, rules):
    """Per rule: (rows, geometric mean of median time / the row's best fixed
    threshold's, rows where the choice differs from the run's sd rule,
    verdicts against stock {verdict: rows})."""
    res = {name: [] for name in rules}
    for path in paths:
        loaded = replay.load(Path(path))
        if loaded is None:
            continue
        calib, cells = loaded
        for row, cols in sorted(cells.items()):
            got = replay.row_maps(calib, row, cols)
            if got is None or "round_read_us" not in got[0]:
                continue
            cal, work, maps = got
            best = min(statistics.median(float(cols[str(g)][rep]["ms"]) for rep in maps)
                       for g in replay.GAPS)
            for name, noise in rules.items():
                c = with_noise(cal, noise)
                chosen = {rep: replay.choose_current(c, m, work) for rep, m in maps.items()}
                ms = [float(cols[str(t)][rep]["ms"]) for rep, t in chosen.items()]
                stock = [float(cols["32"][rep]["ms"]) for rep in chosen]
                res[name].append((path, row, chosen, statistics.median(ms) / best,
                                  statistics.median(a / b for a, b in zip(ms, stock))))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--rows", action="store_true", help="every row where the rules differ")
    args = ap.parse_args(argv)
    res = judge(args.dirs, RULES)
    base = res["sd"]
    for name, rows in res.items():
        if not rows:
            print(f"{name}: no row with rounds")
            continue
        gm = math.exp(statistics.mean(math.log(x[3]) for x in rows))
        differ = sum(a[2] != b[2] for a, b in zip(rows, base))
        above = sum(x[4] > 1.0 for x in rows)
        print(f"{name}: {len(rows)} rows, time / best fixed {gm:.3f}, "
              f"choices unlike sd's on {differ} rows, median / stock above 1.00 on {above}")
        if args.rows:
            for a, b in zip(rows, base):
                if a[2] != b[2]:
                    print(f"   {a[1]}: {b[2]} -> {a[2]}: {b[3]:.3f} -> {a[3]:.3f} × best, "
                          f"{b[4]:.3f} -> {a[4]:.3f} × stock")
    return 0


if __name__ == "__main__":
    sys.exit(main())

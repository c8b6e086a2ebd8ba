"""calibrate()'s figures and noises from its rounds, and other ways to take
the noise, judged on a finished run's measurements.

calibrate() returns each round's figure of every pattern (round_read_us,
round_start_read_us: density × threshold × round, µs per page to read)
and, where the device is counted, its read requests (round_requests,
round_start_requests).  figures() transcribes src/core/calibration.cpp's
density_figures(): per density, the timings a disturbance took set aside
(set_aside(): with direct reads, revision 21; with buffered reads where
the device's requests were counted, those whose requests are not
unusual(), revision 22), each pattern's median over the rounds with each
round's level taken out, and the noise from the residual of the two-way
layout of the density's six patterns and the rounds.  A run's
calibrations (runs.csv's notes) hold the rounds where it was made with a
calibrate() that returns them; on those a rule can be replayed as
bench/replay.py replays a model: which threshold the model chooses for
each row from the figures and noises the rule takes, and what that
threshold measured there.  The rules: revision 20 (every timing
counted), revisions 21 and 22, and every timing tested (buffered reads'
too, whatever their requests).

    python3 -m bench.noise_rules [--rows] DIR [DIR ...]
    python3 -m bench.noise_rules --undisturbed
"""

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

from bench import replay
from bench.vacbench.stats import t_quantile

PI = math.pi
# calibration.cpp's kNoSpread: a mean square of residuals no larger than
# rounding leaves where there are none
NO_SPREAD = 1e-24


# ------------------------------------------------------ disturbed timings

ALPHA = 0.05
MAX_FILL_STEPS = 1000


def fill(y, cells):
    """y with the given cells replaced by what the two-way layout of the
    others predicts for them (each pattern's and each round's level, fitted
    to the cells kept: least squares, by iterating the fit until the
    predictions stand still)."""
    k, r = len(y), len(y[0])
    z = [row[:] for row in y]
    for _ in range(MAX_FILL_STEPS):
        pm = [sum(row) / r for row in z]
        rm = [sum(z[i][j] for i in range(k)) / k for j in range(r)]
        g = sum(rm) / r
        moved = 0.0
        for i, j in cells:
            v = pm[i] + rm[j] - g
            moved = max(moved, abs(v - z[i][j]))
            z[i][j] = v
        if moved < 1e-12:
            break
    return z


def leverage(k, r):
    """A cell's leverage in a two-way layout of k patterns and r rounds."""
    return 1 / k + 1 / r - 1 / (k * r)


def studentized(e, s2, h, nu):
    """calibration.cpp's studentized(): the externally studentized residual
    of a cell of residual e, in a layout whose residuals' mean square is s2
    over nu degrees of freedom, at leverage h."""
    t2 = e ** 2 / (s2 * (1 - h))
    return math.inf if t2 >= nu - 1e-12 else math.sqrt(t2 * (nu - 1) / (nu - t2))


def unusual(q, i, j):
    """Whether cell (i, j) of a layout q[pattern][round] (the logarithms of
    the device's requests) lies beyond what the layout's spread accounts
    for: its externally studentized residual (the whole layout's
    leverage) beyond Student's t quantile at ALPHA / 2 (two-sided; one cell
    tested, no Bonferroni: more cells count as unusual, and fewer timings
    are set aside).  Residuals all within rounding of 0 (a mean square up
    to NO_SPREAD) are no spread: there only a residual beyond rounding is
    unusual."""
    k, r = len(q), len(q[0])
    nu = (k - 1) * (r - 1)
    e = residuals(q)
    s2 = sum(x * x for row in e for x in row) / nu
    if not s2 > NO_SPREAD:
        return abs(e[i][j]) > 1e-12
    return studentized(e[i][j], s2, leverage(k, r), nu) > t_quantile(ALPHA / 2, nu - 1)


def set_aside(y, q=None):
    """calibration.cpp's density_figures(): the cells of one density's
    layout y[pattern][round] (logarithms) that the layout's own spread
    cannot account for, one at a time: the largest externally studentized
    residual (with the whole layout's leverage), while it exceeds Student's
    t quantile at ALPHA / 2 over the cells still counted (two-sided,
    Bonferroni), its pattern and round each keep two cells besides it and
    three degrees of freedom or more are left, the fit redone without it.
    Three rounds at least (with two, a pattern's two residuals are one
    number).  With q (the device's requests, as logarithms, alike), only
    cells whose requests are not unusual()."""
    k, r = len(y), len(y[0])
    if k < 2 or r < 3:
        return []
    h = leverage(k, r)
    cells = []
    kept = {(i, j) for i in range(k) for j in range(r) if q is not None and unusual(q, i, j)}

    def may(i, j):
        return ((i, j) not in cells and (i, j) not in kept and
                sum((i, c) not in cells for c in range(r)) > 2 and
                sum((c, j) not in cells for c in range(k)) > 2)
    while True:
        nu = (k - 1) * (r - 1) - len(cells)
        if nu < 3:
            return cells
        e = residuals(fill(y, cells))
        s2 = sum(x * x for row in e for x in row) / nu
        if not s2 > 0:
            return cells
        worst, at = 0.0, None
        for i in range(k):
            for j in range(r):
                if not may(i, j):
                    continue
                te = studentized(e[i][j], s2, h, nu)
                if te > worst:
                    worst, at = te, (i, j)
        tested = k * r - len(cells)
        if at is None or not worst > t_quantile(ALPHA / 2 / tested, nu - 1):
            return cells
        cells.append(at)


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


def sd_noise(y, removed=0):
    """The residual's standard deviation, (patterns - 1) × (rounds - 1) -
    removed degrees of freedom (the cells set aside filled with their
    predictions), times sqrt(π/2) over sqrt(rounds); 0 with fewer than two
    rounds.  With none set aside, calibration.cpp's read_noise()."""
    k, r = len(y), len(y[0])
    if k < 2 or r < 2:
        return 0.0
    ss = sum(e * e for row in residuals(y) for e in row)
    return math.sqrt(PI / 2 * ss / ((k - 1) * (r - 1) - removed) / r)


def medians(y):
    """Each pattern's median over the rounds, each round's level (its mean
    over the patterns, less the mean of those) taken out, as µs."""
    k, r = len(y), len(y[0])
    rm = [sum(y[i][j] for i in range(k)) / k for j in range(r)]
    g = sum(rm) / r
    return [math.exp(statistics.median(y[i][j] - rm[j] + g for j in range(r)))
            for i in range(k)]


def density(y, outliers=True, q=None):
    """One density's figures and noise from its [pattern][round]
    logarithms, as calibration.cpp's density_figures() takes them, with
    `outliers` the timings a disturbance took set aside (calibrate() does
    with direct reads), with q only those whose requests are not
    unusual."""
    cells = set_aside(y, q) if outliers else []
    z = fill(y, cells)
    noise = sd_noise(z, len(cells))
    if cells:
        nu = (len(y) - 1) * (len(y[0]) - 1)
        noise *= t_quantile(0.05, nu - len(cells)) / t_quantile(0.05, nu)
    return medians(z), noise


def revision21(y, direct, q=None):
    """Revision 21's: disturbed timings set aside with direct reads only."""
    return density(y, outliers=direct)


def revision20(y, direct, q=None):
    """Revision 20's: every timing counted."""
    return density(y, outliers=False)


def revision22(y, direct, q=None):
    """calibrate()'s rule: revision 21's, and with buffered reads where
    the device's requests were counted (q), disturbed timings whose
    requests are not unusual set aside too."""
    if direct or q is None:
        return revision21(y, direct)
    return density(y, outliers=True, q=q)


def counted(layout, rounds):
    """A density's requests (pattern × round) as logarithms, or None where
    one was not counted or counted none (calibration.cpp asks them only
    then)."""
    if not isinstance(layout, list) or rounds < 3:
        return None
    xs = flat([row[:rounds] for row in layout])
    if not all(x is not None and math.isfinite(x) and x > 0 for x in xs):
        return None
    return logs(layout, rounds)


def figures(cal, rule=None):
    """(read_us, read_noise, start_read_us, start_read_noise) from a
    calibration's rounds, each density's taken by rule(layout, direct
    reads, the device's requests or None) (calibrate()'s own, revision 22,
    by default); None where the calibration holds no rounds."""
    rule = rule or revision22
    rounds = cal.get("rounds", 0)
    direct = str(cal.get("io_path", "")).startswith("direct reads")
    out = []
    for key, qkey in (("round_read_us", "round_requests"),
                      ("round_start_read_us", "round_start_requests")):
        cube, qcube = cal.get(key), cal.get(qkey)
        if not isinstance(cube, list) or rounds < 1:
            return None
        if not isinstance(qcube, list):
            qcube = [None] * len(cube)
        got = [rule(logs(c, rounds), direct, counted(qc, rounds))
               for c, qc in zip(cube, qcube)]
        out += [[f for f, _ in got], [n for _, n in got]]
    return tuple(out)


def flat(xs):
    """A nested list's numbers, in order."""
    return [y for x in xs for y in flat(x)] if isinstance(xs, list) else [xs]


def with_rule(cal, rule):
    """The calibration as calibrate() would have kept it had it taken each
    density's figures and noise by `rule`."""
    got = figures(cal, rule)
    if got is None:
        return None
    return dict(cal, read_us=got[0], read_noise=got[1], start_read_us=got[2],
                start_read_noise=got[3])


RULES = {"revision 20": revision20, "revision 21": revision21,
         "revision 22": revision22,
         "every timing tested": lambda y, direct, q=None: density(y, outliers=True)}


def judge(paths, rules):
    """Per rule: [(run, row, chosen per rep, median time / the row's best
    fixed threshold's, verdict against stock)], for the rows whose map can
    be rebuilt (bench/replay.py) in runs whose calibrations hold their
    rounds."""
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
            cal, work, maps, delay = got
            for name, rule in rules.items():
                c = with_rule(cal, rule)
                res[name].append((path, row, *replay.judge_choices(
                    cols, {rep: replay.choose_current(c, m, work, delay=sum(delay[:2]))
                           for rep, m in maps.items()})))
    return res


def undisturbed(rounds, layouts=400, seed=11):
    """What the test does to normal, undisturbed timings: of `layouts`
    simulated layouts of six patterns over `rounds` rounds (the patterns'
    and rounds' levels apart, a spread of 0.05 in the logarithms), the
    share where it sets a timing aside, and there the median of the noise
    it leaves over the noise of every timing."""
    rng = random.Random(seed)
    kept = []
    for _ in range(layouts):
        y = [[rng.gauss(0, 0.05) + i * 0.3 + j * 0.02 for j in range(rounds)]
             for i in range(6)]
        if set_aside(y):
            kept.append(density(y)[1] / density(y, outliers=False)[1])
    return len(kept) / layouts, statistics.median(kept) if kept else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--rows", action="store_true", help="every row where the rules differ")
    ap.add_argument("--undisturbed", action="store_true",
                    help="what the test does to simulated normal timings (undisturbed())")
    args = ap.parse_args(argv)
    if args.undisturbed:
        for rounds in (3, 5, 9, 15):
            share, kept = undisturbed(rounds)
            print(f"{rounds} rounds: a timing set aside in {share:.1%} of layouts, "
                  f"the noise left there {kept:.2f} × every timing's (median)")
        return 0
    res = judge(args.dirs, RULES)
    first, base = next(iter(res.items()))
    if not base:
        print("no row of these runs can be replayed with its calibration's rounds")
        return 1
    for name, rows in res.items():
        gm = math.exp(statistics.mean(math.log(x[3]) for x in rows))
        differ = sum(a[2] != b[2] for a, b in zip(rows, base))
        above = sum(x[4] == "above" for x in rows)
        print(f"{name}: {len(rows)} rows, time / best fixed {gm:.3f}, "
              f"{differ} rows chosen unlike {first}, {above} above stock")
        if args.rows and name != first:
            for a, b in zip(rows, base):
                if a[2] != b[2]:
                    print(f"   {a[0]} {' '.join(map(str, a[1]))}: {b[2]} -> {a[2]}: "
                          f"{b[3]:.3f} -> {a[3]:.3f} × best, vs stock {b[4]} -> {a[4]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

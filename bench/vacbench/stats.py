"""The benchmark's statistics: pure functions of rows and medians, no I/O,
no server.

Rows are runs.csv rows (dicts of strings).  A sweep cell is keyed by
(server, mode, profile, frac, threshold); a group is (server, mode,
profile), a row of the score one fraction of a group.
"""

import math
import statistics

# The autotuner's criteria, per row: auto's time at most BEST_LIMIT times the
# best fixed threshold's, and at most STOCK_LIMIT times stock's (32).
BEST_LIMIT = 1.10
STOCK_LIMIT = 1.00

# Work within this factor of the best threshold's (pages scanned and read
# calls, both ways) cannot explain a time BEST_LIMIT x the best's.
SIMILAR_WORK = 1.05

# One-sided 95 % quantiles of Student's t by degrees of freedom; a df between
# two entries takes the smaller df's (larger) quantile.
T95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860,
       9: 1.833, 10: 1.812, 12: 1.782, 15: 1.753, 20: 1.725, 30: 1.697, 60: 1.671}

# The paired verdict's key in a score_rows() row -> its 'same work' key.
SAME_KEY = {"paired_best": "same_best", "paired_stock": "same_stock"}


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def row_key(r):
    """A sweep row's cell: (server, mode, profile, frac, threshold)."""
    return (r["server"], r["mode"], r["profile"], float(r["frac"]), r["threshold"])


def medians(rows):
    """(server, mode, profile, frac, threshold) -> (median ms, median scanned,
    n, median reads penalised, median read calls)"""
    groups = {}
    for r in rows:
        groups.setdefault(row_key(r), []).append(r)
    out = {}
    for k, rs in groups.items():
        out[k] = (statistics.median(float(r["ms"]) for r in rs),
                  statistics.median(int(r["scanned"]) for r in rs),
                  len(rs), statistics.median(int(r["penalised"] or 0) for r in rs),
                  statistics.median(int(r["reads"] or 0) for r in rs))
    return out


def thr_key(t):
    """Sort key of thresholds: fixed ones by value, then auto."""
    return (1, 0) if t == "auto" else (0, int(t))


def per_rep(rows):
    """(server, mode, profile, frac, threshold) -> {rep: ms}"""
    out = {}
    for r in rows:
        out.setdefault(row_key(r), {})[r["rep"]] = float(r["ms"])
    return out


def t95(df):
    return T95[max(k for k in T95 if k <= df)]


def paired_ratio(reps, group, frac, a, b):
    """a's time over b's, paired by repetition (the same rows were updated
    for both): (pairs, lower bound, geometric mean, upper bound), the bounds
    one-sided 95 % (Student's t on the logarithms of the ratios).  None with
    fewer than two pairs."""
    xa, xb = reps.get((*group, frac, a), {}), reps.get((*group, frac, b), {})
    lr = [math.log(xa[k] / xb[k]) for k in xa if k in xb and xa[k] > 0 and xb[k] > 0]
    if len(lr) < 2:
        return None
    m = statistics.mean(lr)
    h = t95(len(lr) - 1) * statistics.stdev(lr) / math.sqrt(len(lr))
    return len(lr), math.exp(m - h), math.exp(m), math.exp(m + h)


def judge(bounds, limit, same=False):
    """'above' limit beyond noise (lower bound over it), 'within' (upper
    bound at most it), else 'undecided' (or '-' without repetitions).
    'same work' where auto's VACUUM read exactly the other's pages in as
    many read calls: the times of one VACUUM repeated, whose true ratio is
    1, which the bounds can never place on the right side of 1.00."""
    if same:
        return "same work"
    if bounds is None:
        return "-"
    _, lo, _, hi = bounds
    return "above" if lo > limit else "within" if hi <= limit else "undecided"


def fixed_medians(med, group, frac):
    """{fixed threshold: median ms} of one row."""
    return {k[4]: v[0] for k, v in med.items() if k[:4] == (*group, frac) and k[4] != "auto"}


def score_rows(med, group, reps=None):
    """Per fraction: best fixed threshold, auto / best, auto / stock; with
    reps (per_rep()), the same two paired by repetition with their bounds."""
    fracs = sorted({k[3] for k in med if k[:3] == group})
    rows = []
    for f in fracs:
        fixed = fixed_medians(med, group, f)
        auto = med.get((*group, f, "auto"))
        if not fixed or auto is None or "32" not in fixed:
            continue
        best_t = min(fixed, key=fixed.get)
        # fixed thresholds that read exactly auto's pages with as many read
        # calls (medians): the same VACUUM, so their times differ only by noise
        twins = sorted((t for t in fixed
                        if med[(*group, f, t)][1] == auto[1] and med[(*group, f, t)][4] == auto[4]),
                       key=int)
        best = med[(*group, f, best_t)]
        rows.append(dict(frac=f, best_t=best_t, best=fixed[best_t], auto=auto[0],
                         stock=fixed["32"], vs_best=auto[0] / fixed[best_t],
                         vs_stock=auto[0] / fixed["32"], twins=twins,
                         pages_vs_best=auto[1] / best[1] if best[1] else float("nan"),
                         reads_vs_best=auto[4] / best[4] if best[4] else float("nan"),
                         paired_best=paired_ratio(reps, group, f, "auto", best_t) if reps else None,
                         paired_stock=paired_ratio(reps, group, f, "auto", "32") if reps else None,
                         same_best=best_t in twins, same_stock="32" in twins))
    return rows


def fixed_scores(med, group):
    """For every fixed threshold t, scored like auto over the rows that
    score_rows() scores: {t: (worst t / best, geometric mean t / best)}.
    What one threshold, chosen in hindsight for this profile and I/O mode,
    achieves against the criteria under this run's noise."""
    ratios = {}
    fracs = [r["frac"] for r in score_rows(med, group)]
    for f in fracs:
        fixed = fixed_medians(med, group, f)
        best = min(fixed.values())
        for t, ms in fixed.items():
            ratios.setdefault(t, []).append(ms / best)
    return {t: (max(rs), geomean(rs)) for t, rs in ratios.items() if len(rs) == len(fracs)}


def best_constant(scores):
    """The fixed threshold with the lowest worst-row ratio (then geomean)."""
    return min(scores, key=lambda t: (scores[t][0], scores[t][1], int(t)))


def similar_work(r):
    return all(1 / SIMILAR_WORK <= x <= SIMILAR_WORK
               for x in (r["pages_vs_best"], r["reads_vs_best"]))


def rpc_ratio(rand, seq):
    """random_page_cost from the median cost per page of random and of
    sequential reads: their ratio to one decimal, at least 1."""
    return max(1.0, round(rand / seq, 1))


def calibrated_rpc(rows, server, mode, profile):
    """random_page_cost of a storage profile from the calibration rows: the
    direct-I/O calibration of that profile (of any server) if there is one,
    else that of this server and I/O mode; None if neither was measured."""
    def per_page(rs, kind):
        """Median cost per page of the calibration runs of that kind."""
        costs = [float(r["ms"]) / int(r["scanned"]) for r in rs if r["threshold"] == kind]
        return statistics.median(costs) if costs else None

    calib = [r for r in rows if r["phase"] == "calib" and r["profile"] == profile]
    for rs in ([r for r in calib if r["mode"] == "direct"],
               [r for r in calib if r["server"] == server and r["mode"] == mode]):
        servers = sorted({r["server"] for r in rs})
        rs = [r for r in rs if servers and r["server"] == servers[-1]]
        seq, rand = per_page(rs, "seq"), per_page(rs, "rand")
        if seq and rand:
            return rpc_ratio(rand, seq)
    return None

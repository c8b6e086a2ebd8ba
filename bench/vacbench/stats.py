"""The benchmark's statistics: pure functions of rows and medians, no I/O,
no server.

Rows are runs.csv rows (dicts of strings).  A sweep **cell** is keyed by
(server, mode, profile, workload, frac, threshold); a **row** of the score
is a cell's key without the threshold (one fraction of one workload under
one server, I/O mode and storage profile); a **group** is (server, mode,
profile).  Threshold columns: the fixed ones ('1' ... '32'), 'auto-settings'
(the autotuner's threshold from the profile's settings alone, run as that
fixed value) and 'auto' (vacskip.threshold = -1 after vacskip.calibrate()).
"""

import functools
import math
import statistics

# The criteria the report judges the autotuner ('auto') against:
# per group (server, I/O mode, storage profile), the geometric mean over its
# rows of auto / the row's best fixed threshold at most PROFILE_BEST_LIMIT;
PROFILE_BEST_LIMIT = 1.05
# no row above STOCK_LIMIT x stock's (32) time, paired by repetition and
# decided (the lower bound above it);
STOCK_LIMIT = 1.00
# across every row of every group, auto's geometric mean of time / the row's
# best fixed time lower than that of every fixed threshold.
# Each row's paired auto / best is also judged against ROW_BEST_LIMIT: with
# auto / stock, the comparison that decides whether a row needs more
# repetitions.
ROW_BEST_LIMIT = 1.05

# A row whose paired comparisons the size's repetitions leave undecided gets
# one more repetition at a time, up to MAX_REPS_FACTOR times the size's
# repetitions (the size may set its own cap, max_reps).
MAX_REPS_FACTOR = 3

FIXED = ("1", "2", "4", "8", "16", "32")
AUTO, AUTO_SETTINGS = "auto", "auto-settings"

# Verdicts that need no more repetitions.
DECIDED = ("within", "above", "same work")


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


# Student's t distribution: src/core/calibration.cpp's incomplete_beta(),
# t_upper() and t_quantile(), transcribed

def incomplete_beta(x, a, b):
    """The regularized incomplete beta function I_x(a, b), by its continued
    fraction (evaluated with the modified Lentz method), through the
    symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges
    slowly."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - incomplete_beta(1 - x, b, a)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) + math.lgamma(a + b)
                     - math.lgamma(a) - math.lgamma(b)) / a
    tiny = 1e-300
    f, c, d = tiny, tiny, 0.0
    for i in range(0, 400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + num * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * f


def t_upper(t, nu):
    """P(T > t) for Student's t with nu degrees of freedom, t >= 0."""
    return 0.5 * incomplete_beta(nu / (nu + t * t), nu / 2, 0.5)


def t_quantile(p, nu):
    """The t with P(T > t) = p, 0 < p < 1/2."""
    lo, hi = 0.0, 1.0
    while t_upper(hi, nu) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_upper(mid, nu) > p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@functools.lru_cache(maxsize=None)
def t95(df):
    """Student's t, one-sided 95 %, for df degrees of freedom (below 1,
    1's, as model.cpp's one_sided_95())."""
    return t_quantile(0.05, max(df, 1))


def is_fixed(t):
    return t in FIXED


def thr_key(t):
    """Sort key of threshold columns: fixed ones by value, auto-settings,
    auto."""
    return (0, int(t)) if is_fixed(t) else (1, 0) if t == AUTO_SETTINGS else (2, 0)


def row_key(r):
    """A sweep runs.csv row's row: (server, mode, profile, workload, frac)."""
    return (r["server"], r["mode"], r["profile"], r["workload"], float(r["frac"]))


def cell_key(r):
    return (*row_key(r), r["threshold"])


def medians(rows):
    """cell -> (median ms, median scanned, n, median reads penalised, median
    read calls)"""
    groups = {}
    for r in rows:
        groups.setdefault(cell_key(r), []).append(r)
    return {k: (statistics.median(float(r["ms"]) for r in rs),
                statistics.median(int(r["scanned"]) for r in rs),
                len(rs), statistics.median(int(r["penalised"] or 0) for r in rs),
                statistics.median(int(r["reads"] or 0) for r in rs))
            for k, rs in groups.items()}


def per_rep(rows):
    """cell -> {rep: ms}"""
    out = {}
    for r in rows:
        out.setdefault(cell_key(r), {})[r["rep"]] = float(r["ms"])
    return out


def rows_of(med):
    """The rows (cell keys without the threshold) that have cells, sorted."""
    return sorted({k[:5] for k in med})


def bounds_of(logs):
    """(n, lower, geometric mean, upper) of ratios given as logarithms,
    the bounds one-sided 95 % (Student's t); None for fewer than two."""
    if len(logs) < 2:
        return None
    m = statistics.mean(logs)
    h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return len(logs), math.exp(m - h), math.exp(m), math.exp(m + h)


def paired_ratio(reps, row, a, b):
    """a's time over b's in one row, paired by repetition (the same change
    was made for both): (pairs, lower bound, geometric mean, upper bound),
    or None with fewer than two pairs."""
    xa, xb = reps.get((*row, a), {}), reps.get((*row, b), {})
    return bounds_of([math.log(xa[k] / xb[k]) for k in xa
                      if k in xb and xa[k] > 0 and xb[k] > 0])


def judge(bounds, limit, same=False):
    """'above' limit beyond noise (lower bound over it), 'within' (upper
    bound at most it), else 'undecided' (or '-' without repetitions).
    'same work' where the two VACUUMs read exactly the same pages in as many
    read calls: one VACUUM timed twice, whose true ratio is 1 and which the
    bounds can never place on the right side of 1.00."""
    if same:
        return "same work"
    if bounds is None:
        return "-"
    _, lo, _, hi = bounds
    return "above" if lo > limit else "within" if hi <= limit else "undecided"


def fixed_medians(med, row):
    """{fixed threshold: median ms} of one row."""
    return {t: med[(*row, t)][0] for t in FIXED if (*row, t) in med}


def same_work(med, row, a, b):
    """Whether a and b read exactly the same pages in as many read calls
    (medians)."""
    x, y = med.get((*row, a)), med.get((*row, b))
    return x is not None and y is not None and x[1] == y[1] and x[4] == y[4]


def score_row(med, reps, row):
    """One row's score, or None while it lacks auto or a fixed column (32
    among them): the best fixed threshold, auto / best and auto / stock by
    medians and paired by repetition, auto-settings / best."""
    fixed = fixed_medians(med, row)
    auto = med.get((*row, AUTO))
    if auto is None or "32" not in fixed or len(fixed) < 2:
        return None
    best_t = min(fixed, key=lambda t: (fixed[t], int(t)))
    best = med[(*row, best_t)]
    settings = med.get((*row, AUTO_SETTINGS))
    twins = [t for t in fixed if same_work(med, row, AUTO, t)]
    return dict(row=row, frac=row[4], best_t=best_t, best=fixed[best_t], auto=auto[0],
                stock=fixed["32"], vs_best=auto[0] / fixed[best_t],
                vs_stock=auto[0] / fixed["32"],
                settings=settings[0] if settings else None,
                settings_vs_best=settings[0] / fixed[best_t] if settings else None,
                twins=twins, pages_vs_best=auto[1] / best[1] if best[1] else float("nan"),
                reads_vs_best=auto[4] / best[4] if best[4] else float("nan"),
                paired_best=paired_ratio(reps, row, AUTO, best_t),
                paired_stock=paired_ratio(reps, row, AUTO, "32"),
                same_best=best_t in twins, same_stock="32" in twins,
                n=min(auto[2], med[(*row, "32")][2]))


def verdicts(sc):
    """(auto vs best at ROW_BEST_LIMIT, auto vs stock at STOCK_LIMIT)."""
    return (judge(sc["paired_best"], ROW_BEST_LIMIT, sc["same_best"]),
            judge(sc["paired_stock"], STOCK_LIMIT, sc["same_stock"]))


def decided(sc):
    """Whether the repetitions decide both of a row's paired comparisons."""
    return sc is not None and all(v in DECIDED for v in verdicts(sc))


def max_reps(cfg):
    """The repetitions an undecided row may get."""
    return cfg.get("max_reps") or MAX_REPS_FACTOR * cfg["reps"]


def wants_more(med, reps, row, done, cfg):
    """Whether a row measured in `done` complete repetitions gets another:
    its paired comparisons undecided and the cap not reached."""
    return done >= cfg["reps"] and done < max_reps(cfg) and \
        not decided(score_row(med, reps, row))


def blind_best(med, reps, row):
    """What the row's best fixed threshold measures when it is chosen
    without the repetition it is timed on, over the in-hindsight best's
    median (an upper estimate of what the best in hindsight gains from
    choosing and timing on the same repetitions): for each repetition
    every fixed threshold has, the threshold of
    the least median over the other repetitions (the larger one of a tie),
    timed on that one; the median of those over the least fixed median.
    None with fewer than three such repetitions."""
    fixed = fixed_medians(med, row)
    times = {t: reps.get((*row, t), {}) for t in fixed}
    common = sorted(set.intersection(*(set(x) for x in times.values()))) if times else []
    if len(common) < 3:
        return None
    blind = []
    for k in common:
        others = [j for j in common if j != k]
        t = min(fixed, key=lambda t: (statistics.median(times[t][j] for j in others),
                                      -int(t)))
        blind.append(times[t][k])
    return statistics.median(blind) / min(fixed.values())


def skip_thresholds(note):
    """The (all-frozen, all-visible) thresholds a sweep note's VERBOSE line
    reported ('skip thresholds A/B'), as text; None without one."""
    if "skip thresholds " not in note:
        return None
    a, _, b = note.split("skip thresholds ")[1].split(";")[0].partition("/")
    return a.strip(), b.strip()


def charged_spread(sweep, profiles):
    """Per cell of a group whose I/O mode is buffered and whose profile is
    one of `profiles`, over its repetitions: the least and the
    most share of the VACUUM's read calls the emulation charged
    (penalised / reads).  {cell: (least, most)}, cells with two or more
    repetitions that read something."""
    shares = {}
    for r in sweep:
        if r["mode"] == "buffered" and r["profile"] in profiles and int(r["reads"] or 0) > 0:
            shares.setdefault(cell_key(r), []).append(int(r["penalised"] or 0) /
                                                      int(r["reads"]))
    return {k: (min(v), max(v)) for k, v in shares.items() if len(v) > 1}


def auto_used(sweep):
    """row -> {rep: the fixed column of the threshold each auto VACUUM used}
    (its VERBOSE line's thresholds, where both are one fixed threshold;
    other repetitions are left out)."""
    out = {}
    for r in sweep:
        used = skip_thresholds(r.get("note", "")) if r["threshold"] == AUTO else None
        if used and used[0] == used[1] and is_fixed(used[0]):
            out.setdefault(row_key(r), {})[r["rep"]] = used[0]
    return out


def chosen_in_fixed(med, reps, row, used):
    """Auto's choices timed without the auto column's own noise: for each
    repetition in `used` ({rep: fixed column}), what that column measured in
    the same repetition; their median over the row's least fixed median.
    None where no such repetition was timed."""
    fixed = fixed_medians(med, row)
    times = [reps[(*row, t)][k] for k, t in used.items()
             if t in fixed and k in reps.get((*row, t), {})]
    if not times or not fixed:
        return None
    return statistics.median(times) / min(fixed.values())


def score_rows(med, reps, rows):
    return [sc for sc in (score_row(med, reps, r) for r in rows) if sc is not None]


def column_ratios(med, rows, column):
    """{row: median of `column` / the row's best fixed median} over rows
    that have the column."""
    out = {}
    for row in rows:
        fixed = fixed_medians(med, row)
        if fixed and (*row, column) in med:
            out[row] = med[(*row, column)][0] / min(fixed.values())
    return out


def fixed_columns(med, rows):
    """The fixed thresholds measured in any of rows."""
    return [t for t in FIXED if any((*r, t) in med for r in rows)]


def ranking(med, rows):
    """Every column (fixed thresholds, auto-settings, auto) over `rows`
    (those where every fixed threshold the rows have and the column were
    measured): [(column, geometric mean of time / the row's best fixed
    time, worst row's ratio, rows)], best first."""
    fixed = fixed_columns(med, rows)
    complete = [r for r in rows if all((*r, t) in med for t in fixed)]
    out = []
    for col in (*fixed, AUTO_SETTINGS, AUTO):
        ratios = column_ratios(med, complete, col)
        if ratios and len(ratios) == len(complete):
            out.append((col, geomean(ratios.values()), max(ratios.values()), len(ratios)))
    return sorted(out, key=lambda x: (x[1], thr_key(x[0])))


def across_rows(med, rows, a, b):
    """a's time over b's across rows (medians per row, the rows as the
    sample): (rows, lower, geometric mean, upper), one-sided 95 % bounds."""
    return bounds_of([math.log(med[(*r, a)][0] / med[(*r, b)][0]) for r in rows
                      if (*r, a) in med and (*r, b) in med])


def best_constant(rank):
    """The fixed threshold that comes closest to every row's best (lowest
    geometric mean; ranking() order), chosen in hindsight: (column,
    geomean, worst, rows), or None."""
    return next((x for x in rank if is_fixed(x[0])), None)


def group_of(row):
    return row[:3]


def group_verdict(med, reps, rows):
    """The criteria for one group's rows: dict with the geometric means of
    auto / best, auto-settings / best and auto / stock, the worst row, the
    rows' paired verdicts against stock, the best constant in hindsight
    and whether each criterion is met."""
    sc = score_rows(med, reps, rows)
    if not sc:
        return None
    rank = ranking(med, [s["row"] for s in sc])
    const = best_constant(rank)
    stock = [verdicts(s)[1] for s in sc]
    settings = [s["settings_vs_best"] for s in sc if s["settings_vs_best"]]
    gb = geomean([s["vs_best"] for s in sc])
    return dict(scores=sc, rows=len(sc), auto_vs_best=gb,
                worst=max(sc, key=lambda s: s["vs_best"]),
                settings_vs_best=geomean(settings) if settings else None,
                auto_vs_stock=geomean([s["vs_stock"] for s in sc]),
                above_stock=[s for s, v in zip(sc, stock) if v == "above"],
                undecided_stock=[s for s, v in zip(sc, stock) if v in ("undecided", "-")],
                constant=const, rank=rank,
                best_met=gb <= PROFILE_BEST_LIMIT,
                stock_met=not any(v == "above" for v in stock))


def overall_verdict(med, rows):
    """Across every row: the ranking, and whether auto's geometric mean is
    lower than every fixed threshold's, with auto over the best constant
    across rows (bounds)."""
    rank = ranking(med, rows)
    auto = next((x for x in rank if x[0] == AUTO), None)
    const = best_constant(rank)
    if auto is None or const is None:
        return None
    complete = [r for r in rows if all((*r, t) in med for t in (*fixed_columns(med, rows), AUTO))]
    return dict(rank=rank, auto=auto, constant=const,
                beats_every_fixed=all(auto[1] < x[1] for x in rank if is_fixed(x[0])),
                vs_constant=across_rows(med, complete, AUTO, const[0]))


def calibration_threshold(note, workload):
    """The calibrated threshold of a workload's table from a calibration
    row's note (parsed JSON), or None."""
    per = note.get("workloads", {}).get(workload)
    return per.get("calibrated_threshold") if per else None

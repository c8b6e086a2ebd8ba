"""Replay the autotuner's choices on a finished `make bench` run.

A default or full run measures every fixed threshold on every row, side by
side, and keeps each profile's calibration (runs.csv, phase calib).  Given
those, which threshold a cost model chooses for a row, and what that
threshold measured there, follow without another VACUUM: the rows' maps
are the ones runs.csv keeps with each measurement (its column map, from
2026-12-07 on) or, in older runs, rebuilt from the workloads' seeds
(bench/vacbench/workloads.py) and walked as VACUUM walks them; each is
priced with the run's own calibration.  So a
model is judged on the very measurements of the fixed thresholds, and two
models on the same runs are paired by construction.  The models:

  current     src/core/model.cpp's calibrated path (model.md), transcribed:
              a saving must exceed the noise of the parts of the two costs
              that differ (revisions 20 to 26), between two calibrated
              densities how far the interpolation may be off included
              (revision 26, between()); each page read through costs
              VACUUM's cost-based delay as well (revision 24,
              delay_parts()); where the reads go on while VACUUM sleeps
              (18, io_method worker or io_uring) a threshold costs its
              work, its reading and its sleeping less what its naps hide,
              each the reads issued before it (revision 27, hiding(); on
              runs whose notes keep no delay settings, revision 26's
              rule), the reading's error counted as far as it moves that
              cost (revision 28, reading_share()), no nap hiding the
              reading's share on a CPU, as calibrate() measured it
              (revision 29, cpu_share(); none where it measured none)
  revision 28 the same, all of the reading hideable
  revision 27 the same, the reading's error counted for the share of it
              the naps do not hide, the least of them in the stream's part
  revision 26 the same, the longer of the reading and the sleeping where
              two reads are in flight or more, the sum elsewhere
  revision 25 the same, the interpolation taken as exact
  revision 24 the same, the sleep added to the reading everywhere
  revision 23 the same, the delay priced with vacuum_cost_page_miss alone
  revision 22 the same without the delay
  revision 19 the same costs, each saving judged against the noise of the
              whole of the two costs, the pages read on in a stream, the
              same part of every cost, included (revisions 12 to 19);
              checked against the threshold the run's autotuner chose
              wherever the run was made with revisions 14 to 19
              (judged, as every model here, with Student's t computed,
              where those revisions read it from a table up to 0.8 %
              higher: a saving at that margin may be judged otherwise),
              revision 13, whose calibrations measured seven densities
              (the figures carry their own), or revision 12, which chose
              alike but after a calibration of one round (on runs from
              before calibrate() measured each density's noise, one noise
              for all and the normal's quantile: revision 11; from before
              it timed a file's first pages apart, start_read_us, their
              figures are read_us: revision 10)
  revision 9  revision 10's costs, the cheapest threshold whatever the noise
  revision 8  needed * read_us(needed / pages, T) + read_through(T) * work,
              the cheapest threshold
(revisions 9 and 8 price with read_us alone: on runs with start_read_us,
what was read after a file's first pages)

A replay judges a model on runs already seen; a fresh `make bench` judges
it on new measurements, calibrations included.  Repetitions whose map
is not the same in every column and cannot be rebuilt (runs.csv without
maps: pgbench, wide rows), or does not read what the run's VACUUMs
scanned at every threshold, are left out; rows with none, counted.

With --read-through it reports instead what a page read through cost,
measured and as priced (bench/replay_through.py says how).

Usage (from the repository root):
  python3 -m bench.replay [--read-through] bench/results/DIR [DIR ...]
"""

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from bench.vacbench import stats, store, workloads
from bench.vacbench.workloads import map_counts
from bench.replay_delay import (cpu_share, current_overlap, delay_parts, overlapping,
                                 reading_share, unhidden)

GAPS = (1, 2, 4, 8, 16, 32)
ONE_SIDED_95 = 1.645     # revision 11's quantile, the normal's
START_PAGES = 2048       # model.hpp's kStartPages
SEGMENT_PAGES = 131072   # RELSEG_SIZE of the benchmark's servers


def locate(xs, x):
    """Segment and share along it, in the logarithms, clamped to the ends."""
    if not x > xs[0]:
        return 0, 0.0
    for k in range(len(xs) - 1):
        if x <= xs[k + 1]:
            return k, math.log(x / xs[k]) / math.log(xs[k + 1] / xs[k])
    return len(xs) - 2, 1.0


def start_share(rel_pages, segment_pages=SEGMENT_PAGES):
    """model.cpp's start_share(): the share of the pages among the first
    START_PAGES of a segment file."""
    if rel_pages == 0:
        return 1.0
    full, last = divmod(rel_pages, segment_pages)
    return (full * min(segment_pages, START_PAGES) + min(last, START_PAGES)) / rel_pages


def read_us(cal, d, t, start=False):
    di, dw = locate(cal["densities"], d)
    ti, tw = locate([float(g) for g in GAPS], float(t))
    ru = (cal.get("start_read_us") or cal["read_us"]) if start else cal["read_us"]

    def at(i):
        return math.log(ru[i][ti]) * (1 - tw) + math.log(ru[i][ti + 1]) * tw
    return math.exp(at(di) * (1 - dw) + at(di + 1) * dw)


def noise_at(cal, d, start=False):
    """model.cpp's measured_noise(): each density's noise (read_noise,
    start_read_noise: lists), interpolated in the logarithms of density;
    runs from before calibrate() measured them per density had one number
    for all, none before revision 10."""
    rn = cal.get("read_noise", 0.0)
    n = cal.get("start_read_noise", rn) if start else rn
    if not isinstance(n, list):
        return n
    di, dw = locate(cal["densities"], d)
    return n[di] * (1 - dw) + n[di + 1] * dw


def one_sided_95(cal):
    """The quantile a saving must exceed in noises: with each density's
    noise (revision 12) Student's t for its (thresholds - 1) * (rounds - 1)
    degrees of freedom, before that the normal's 1.645."""
    if not isinstance(cal.get("read_noise"), list):
        return ONE_SIDED_95
    dof = (len(GAPS) - 1) * (cal.get("rounds", 1) - 1)
    return stats.t95(dof)


def cost_current(cal, m, work, noise=None, shared=None, delay=0.0, overlap=None, at=None,
                 kept=None, moved=True, cpu=True):
    """model.md: each run of pages to read priced as a run of the scattered
    map whose skippable runs are as long on average, d = runs / skippable;
    the pages beyond that map's 1 / (1 - d) per run at the streaming rate;
    the share among the segment files' first pages at start_read_us;
    each page read through VACUUM's work on it and `delay`, the cost-based
    delay's sleep (a setting's meaning, no noise); with `overlap`, the
    sleep per page to read, the work and the longer of the reading and
    the sleeping (revisions 25 and 26), the reading's noise only where the
    sleep does not cover it; where `overlap` is a tuple (the sleep per page
    to read, the length of a nap in µs, the reads issued ahead, the pages
    a read holds at most: revision 27, hiding()), the work, the reading
    and the sleeping less what the naps hide, each the reads issued ahead
    at the reading's time per read, the reads counted as at most one more
    per run than its pages over the pages a read holds (model.cpp's
    hidden_by_sleep() and reads_at_most()), the reading's noise as far as
    an error of that size moves the cost (revision 28, reading_share();
    `moved` False: as far as the naps do not hide it, revision 27), no
    nap hiding the reading's share on a CPU (revision 29, cpu_share();
    `cpu` False: all of it hideable);
    thresholds that read the same pages cost the same.  `noise`, a list,
    gets each cost's noise: its parts' figures' noise weighted by their
    shares of it, the pages read on in a stream left out; `shared`, a
    list, gets their part's noise in µs (the same in every cost); `kept`,
    a list, how much of the reading's error passes into each cost (with
    `moved` False, or before revision 27, the least of them, for every
    cost).  `at`: the density whose figures price the runs, d where None."""
    densest = cal["densities"][-1]
    runs = m["io_runs"][0]
    skippable = m["rel_pages"] - m["needed"]
    d = min(runs / skippable, densest) if skippable > 0 else densest
    per_run = 1 / (1 - d)
    runs = min(runs, m["needed"])
    rest = max(m["needed"] - runs * per_run, 0.0)
    f = start_share(m["rel_pages"])
    at = d if at is None else at

    def stream(start):
        return rest * read_us(cal, densest, GAPS[-1], start) * densest

    def reads(g, start, noisy=False):
        if noisy:
            return runs * per_run * read_us(cal, at, g, start) * noise_at(cal, at, start)
        return runs * per_run * read_us(cal, at, g, start) + stream(start)
    streamed = (f * stream(True) * noise_at(cal, densest, True) +
                (1 - f) * stream(False) * noise_at(cal, densest, False))
    if shared is not None:
        shared[:] = [streamed]
    cost, noises, shares = [], [], []
    for i, g in enumerate(GAPS):
        start = f * reads(g, True)
        spread = f * reads(g, True, True) + (1 - f) * reads(g, False, True)
        work_cost = m["read_through"][i] * work
        read = start + (1 - f) * reads(g, False)
        c = read + work_cost + m["read_through"][i] * delay
        if isinstance(overlap, tuple):
            per_needed, nap, ahead, combine = overlap
            sleep = m["needed"] * per_needed + m["read_through"][i] * delay
            ios = m["io_runs"][i] + (m["needed"] + m["read_through"][i]) / combine
            s = cpu_share(cal, at, g) if cpu else 0.0
            c = work_cost + sleep + unhidden(read, sleep, nap, ahead, ios, s)
            shares.append(reading_share(read, sleep, nap, ahead, ios,
                                        spread + streamed if moved else 0.0, s))
            spread *= shares[-1]
        elif overlap is not None:
            sleep = m["needed"] * overlap + m["read_through"][i] * delay
            c = work_cost + max(read, sleep)
            shares.append(max(read - sleep, 0.0) / read if read > 0 else 0.0)
            spread *= shares[-1]
        else:
            shares.append(1.0)
        cost.append(c)
        wn = noise_at(cal, d)          # VACUUM's work: at the map's density
        noises.append((spread + work_cost * wn) / c if c > 0 else wn)
    for i in range(len(GAPS) - 2, -1, -1):
        if (m["read_through"][i], m["io_runs"][i]) == (m["read_through"][i + 1],
                                                       m["io_runs"][i + 1]):
            cost[i], noises[i], shares[i] = cost[i + 1], noises[i + 1], shares[i + 1]
    if noise is not None:
        noise[:] = noises
    if kept is not None:
        kept[:] = (shares if moved and isinstance(overlap, tuple) else
                   [min([1.0] + shares)] * len(GAPS))
    return cost


def cheapest(cost, among=None):
    """The least cost's threshold, the larger one of a tie (model.cpp);
    of those whose indices are `among` and 32, where given."""
    best = len(GAPS) - 1
    for i in range(len(GAPS) - 2, -1, -1):
        if (among is None or i in among) and cost[i] < cost[best] * (1 - 1e-9):
            best = i
    return GAPS[best]


def between(cal, m, work, cost, i, delay=0.0, overlap=None, cpu=True):
    """Revision 26 (model.hpp's saving[] and between[]): the saving's
    logarithm ln(cost[32] / cost[i]) a test judges, and how far it may be
    off where the map is priced between two calibrated densities.  Priced
    with either neighbour's figures it is taken to lie between the two (m,
    M): the interpolated one, where outside, moved to the nearer; else
    taken for its mean mu, sqrt((M - mu)(mu - m)) the most it can spread
    (the Bhatia-Davis inequality); 0 at or beyond a calibrated density."""
    mu = math.log(cost[-1] / cost[i])
    runs, skippable = m["io_runs"][0], m["rel_pages"] - m["needed"]
    ds = cal["densities"]
    d = min(runs / skippable, ds[-1]) if skippable > 0 else ds[-1]
    k, w = locate(ds, d)
    if not 0.0 < w < 1.0:
        return mu, 0.0
    ends = [cost_current(cal, m, work, delay=delay, overlap=overlap, at=x, cpu=cpu)
            for x in (ds[k], ds[k + 1])]
    lo, hi = sorted(math.log(c[-1] / c[i]) for c in ends)
    mu = min(max(mu, lo), hi)
    return mu, math.sqrt(max((hi - mu) * (mu - lo), 0.0))


def choose_current(cal, m, work, whole=False, delay=0.0, overlap=None, spread=True,
                   moved=True, cpu=True):
    """The cheapest threshold, unless its saving over 32 is within the
    noise of the parts of the two costs that differ (from read_noise and
    start_read_noise; none in runs from before they were measured), or
    that noise, measured per density, rests on a single round: then 32.
    The pages read on in a stream are the same part of both costs: an
    error of theirs moves the logarithm of the costs' ratio by its
    difference of shares only.  `whole`: revisions 12 to 19, which counted
    that part's noise in each cost as if it were its own.  `delay`: the
    cost-based delay's sleep per page read through; `overlap`, its sleep
    per page to read where the reads go on while VACUUM sleeps (or
    revision 27's tuple, cost_current()); `moved`, `cpu`: as cost_current();
    `spread` (revision 26): the interpolation's spread between two calibrated
    densities counted, and where the cheapest threshold's saving cannot
    be told from the noise, the cheapest whose saving can be."""
    noise, shared, kept = [], [], []
    cost = cost_current(cal, m, work, noise, shared, delay, overlap, None, kept, moved, cpu)
    t = cheapest(cost)
    i = GAPS.index(t)
    if t == GAPS[-1] or not (cost[i] > 0 and cost[-1] > 0):
        return t
    if isinstance(cal.get("read_noise"), list) and cal.get("rounds", 1) < 2:
        return GAPS[-1]

    def told(j):
        """Whether j's saving over 32 lies beyond the noise."""
        if not cost[j] > 0:
            return True                # as model.cpp: nothing read costs nothing
        if whole:
            a, b, s = (noise[j] + shared[0] / cost[j], noise[-1] + shared[0] / cost[-1], 0.0)
        else:
            a, b, s = noise[j], noise[-1], shared[0] * abs(kept[j] / cost[j] -
                                                           kept[-1] / cost[-1])
        mu, g = (between(cal, m, work, cost, j, delay, overlap, cpu) if spread else
                 (math.log(cost[-1] / cost[j]), 0.0))
        return mu > one_sided_95(cal) * math.sqrt(a * a + b * b + s * s + g * g)
    if told(i):
        return t
    if not spread:                     # before revision 26: 32
        return GAPS[-1]
    # the cheapest of the thresholds whose saving can be told from the noise
    return cheapest(cost, [j for j in range(len(GAPS) - 1) if told(j)])


def choose_revision19(cal, m, work, delay=(0.0, 0.0)):
    return choose_current(cal, m, work, whole=True, spread=False)


def choose_revision9(cal, m, work, delay=(0.0, 0.0)):
    return cheapest(cost_current({k: v for k, v in cal.items() if k != "start_read_us"},
                                 m, work))


def choose_revision8(cal, m, work, delay=(0.0, 0.0)):
    d = m["needed"] / m["rel_pages"]
    return cheapest([m["needed"] * read_us(cal, d, g) + m["read_through"][i] * work
                     for i, g in enumerate(GAPS)])


# (each model called as model(cal, m, work, delay), delay as delay_parts()
# gives it; the revisions before 23 priced no delay)
MODELS = {"current": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), overlap=current_overlap(delay)),
          "revision 28": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), overlap=current_overlap(delay), cpu=False),
          "revision 27": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), overlap=current_overlap(delay), moved=False),
          "revision 26": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), overlap=overlapping(delay), moved=False),
          "revision 25": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), overlap=overlapping(delay), spread=False,
              moved=False),
          "revision 24": lambda cal, m, work, delay: choose_current(
              cal, m, work, delay=sum(delay[:2]), spread=False),
          "revision 23": lambda cal, m, work, delay: choose_current(cal, m, work, delay=delay[0],
                                                                   spread=False),
          "revision 22": lambda cal, m, work, delay: choose_current(cal, m, work, spread=False),
          "revision 19": choose_revision19,
          "revision 9": choose_revision9,
          "revision 8": choose_revision8}


def rebuild(workload, frac, rep, pages, tuples_per_page):
    """The pages a point left to read, from the workload's seeds; None where
    the workload's change cannot be rebuilt offline."""
    cls = workloads.WORKLOADS.get(workload)
    if cls is None or not issubclass(cls, workloads.RowTable):
        return None
    # choose() by id; id i lies on page (i - 1) / rows per page until moved
    w = object.__new__(cls)
    w.pages, w.rpp = pages, round(tuples_per_page)
    w.nrows = pages * w.rpp
    return sorted({(i - 1) // w.rpp for i in w.choose(frac, rep)})


def priced_like_this(cal):
    """Whether a calibration holds one figure per density and threshold."""
    ds, ru = cal.get("densities"), cal.get("read_us")
    return (isinstance(ds, list) and isinstance(ru, list) and len(ru) == len(ds) and
            all(isinstance(row, list) and len(row) == len(GAPS) and
                all(isinstance(x, (int, float)) and x > 0 for x in row) for row in ru))


def load(path):
    """A run's calibrations {(server, mode, profile): note} and sweep cells
    {row: {column: {rep: runs.csv row}}}; None for an older runs.csv."""
    calib, cells = {}, {}
    rows = store.dict_rows(path / "runs.csv")[1]
    if not rows or not {"workload", "pages", "rep", "scanned", "note"} <= set(rows[0]):
        return None                    # an older runs.csv
    for r in rows:
        if r["phase"] == "calib":
            try:
                calib[(r["server"], r["mode"], r["profile"])] = json.loads(r["note"])
            except ValueError:
                pass                   # runs from before calibrate() kept its figures
        elif r["phase"] == "sweep":
            row = (r["server"], r["mode"], r["profile"], r["workload"], int(r["pages"]),
                   float(r["frac"]))
            cells.setdefault(row, {}).setdefault(r["threshold"], {})[int(r["rep"])] = r
    return calib, cells


def row_maps(calib, row, cols):
    """A row's calibration, VACUUM's work per page read through, the
    maps of its repetitions {rep: map_counts()} that every fixed
    threshold measured, found alike in every column or rebuilt, that
    read what each of them scanned, and the cost-based delay's sleep per
    page read through (delay_parts()); None where the calibration does
    not price like this or no repetition has such a map."""
    server, mode, profile, workload, pages, frac = row
    note = calib.get((server, mode, profile))
    cal = (note or {}).get("calibrate", {})
    if not priced_like_this(cal):
        return None
    explained = note["workloads"][workload]
    tpp = explained["tuples_per_page"]
    work = cal["cpu_page_us"] + cal["cpu_tuple_us"] * tpp
    delay = delay_parts(note, explained)
    reps = sorted(set.intersection(*(set(cols.get(str(g), {})) for g in GAPS)))
    maps = {}
    for rep in reps:
        found = {cols[str(g)][rep].get("map") or "" for g in GAPS}
        if len(found) == 1 and "" not in found:
            m = json.loads(found.pop())    # the map every threshold found
        else:
            needed = rebuild(workload, frac, rep, pages, tpp)
            if needed is None:
                continue
            m = map_counts(needed, pages)
        if all(int(cols[str(g)][rep]["scanned"]) == m["needed"] + m["read_through"][i]
               for i, g in enumerate(GAPS)):
            maps[rep] = m
    return (cal, work, maps, delay) if maps else None


def judge_choices(cols, chosen):
    """What a row's chosen thresholds ({rep: threshold}) measured in the
    fixed columns: (chosen, median time / the row's best fixed threshold's
    over those repetitions, the verdict against stock, paired by repetition
    and judged as the report does)."""
    best = min(statistics.median(float(cols[str(g)][rep]["ms"]) for rep in chosen)
               for g in GAPS)
    ms = {rep: float(cols[str(t)][rep]["ms"]) for rep, t in chosen.items()}
    vs_stock = stats.judge(
        stats.bounds_of([math.log(ms[rep] / float(cols["32"][rep]["ms"])) for rep in chosen]),
        stats.STOCK_LIMIT, same=all(t == GAPS[-1] for t in chosen.values()))
    return chosen, statistics.median(ms.values()) / best, vs_stock


def replay(path):
    """{model: [(row, chosen per rep, median time / the row's best fixed
    threshold's, verdict against stock)]}, rows left out, each model's
    agreement with the run's own autotuner ({model: n}), and the
    repetitions compared."""
    loaded = load(path)
    if loaded is None:
        return None
    calib, cells = loaded
    out = {name: [] for name in MODELS}
    left_out, compared = [], 0
    agree = {name: 0 for name in MODELS}
    for row, cols in sorted(cells.items()):
        got = row_maps(calib, row, cols)
        if got is None:
            left_out.append(row)
            continue
        cal, work, maps, delay = got
        for name, model in MODELS.items():
            out[name].append((row, *judge_choices(
                cols, {rep: model(cal, m, work, delay) for rep, m in maps.items()})))
        for rep, m in maps.items():
            said = cols.get("auto", {}).get(rep, {}).get("note", "")
            if "calibrated threshold " in said:
                compared += 1
                t = int(said.split("calibrated threshold ")[1].split(";")[0])
                for name, model in MODELS.items():
                    agree[name] += t == model(cal, m, work, delay)
    return out, left_out, agree, compared


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--read-through", action="store_true",
                    help="what a page read through cost, measured and as priced, instead")
    args = ap.parse_args(argv)
    if args.read_through:
        from bench.replay_through import print_read_through
        print_read_through(args.dirs)
        return 0
    names = list(MODELS)
    print("Per model: geometric mean over the rows of time / the row's best fixed "
          "threshold, and (in brackets) the rows above stock's time beyond noise, "
          "paired by repetition.\n")
    told = ("current", "revision 28", "revision 19")
    print(f"| run | rows | {' | '.join(names)} | left out | "
          f"the run's autotuner: = {', = '.join(told)} |")
    print("|---" * (len(names) + 4) + "|")
    for d in args.dirs:
        got = replay(d)
        if got is None:
            print(f"| {d.name} | runs.csv of an older format {'| ' * (len(names) + 2)}|")
            continue
        out, left_out, agree, compared = got
        if not out["current"]:
            print(f"| {d.name} | 0 {'| ' * len(names)}| {len(left_out)} | |")
            continue
        g = " | ".join(f"{stats.geomean([x[2] for x in out[n]]):.3f} "
                       f"({sum(x[3] == 'above' for x in out[n])})" for n in names)
        print(f"| {d.name} | {len(out['current'])} | {g} | {len(left_out)} | "
              f"{', '.join(str(agree[n]) for n in told)} of {compared} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

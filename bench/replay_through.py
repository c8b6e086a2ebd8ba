"""What a page read through cost where a finished `make bench` run measured
it, against what the current model priced it at: `python3 -m bench.replay
--read-through`.

For every rebuilt row and every threshold T that reads at least
MIN_THROUGH pages fewer than 32, (time at 32 - time at T) / (pages 32
reads through - pages T reads through), per repetition, against the same
difference of the current model's costs for that repetition's map; per
server, I/O mode and profile over the runs given.  Both are net figures:
what 32's extra reading cost less what T's breaks cost.  Where the
measured one is the higher, the model prices 32 too cheaply against T,
reading through too cheaply or T's breaks too dearly, and errs towards
32 there."""

import statistics

from bench.replay import GAPS, cost_current, current_overlap, load, row_maps


# what 32 must read through beyond T for the comparison to count: at fewer
# pages the difference of two VACUUMs' times is mostly their noise
MIN_THROUGH = 500


def read_through(path):
    """What reading through cost where the run measured it, against what the
    current model priced it at: for every row whose maps can be rebuilt and
    every threshold T that reads at least MIN_THROUGH pages fewer than 32,
    per repetition (time(32) - time(T)) / (pages 32 reads through - pages T
    reads through), in µs per page, measured and as cost_current() prices
    the repetition's map, each the median over the row's repetitions.
    {(server, mode, profile): [(workload, frac, T, measured, priced)]}; None
    for an older runs.csv."""
    loaded = load(path)
    if loaded is None:
        return None
    calib, cells = loaded
    out = {}
    for row, cols in sorted(cells.items()):
        got = row_maps(calib, row, cols)
        if got is None:
            continue
        cal, work, maps, delay = got
        costs = {rep: cost_current(cal, m, work, delay=sum(delay[:2]),
                                   overlap=current_overlap(delay))
                 for rep, m in maps.items()}
        for i, g in enumerate(GAPS[:-1]):
            measured, priced = [], []
            for rep, m in maps.items():
                pages = m["read_through"][-1] - m["read_through"][i]
                if pages < MIN_THROUGH:
                    continue
                dt = float(cols["32"][rep]["ms"]) - float(cols[str(g)][rep]["ms"])
                measured.append(dt * 1000.0 / pages)
                priced.append((costs[rep][-1] - costs[rep][i]) / pages)
            if measured:
                out.setdefault(row[:3], []).append(
                    (row[3], row[5], g, statistics.median(measured), statistics.median(priced)))
    return out


def quartiles(xs):
    """Lower quartile, median, upper quartile (statistics' exclusive method;
    the value itself for one)."""
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], statistics.median(xs), q[2]


def print_read_through(dirs):
    """The table of --read-through: per server, I/O mode and profile over
    the runs given."""
    groups = {}
    for d in dirs:
        got = read_through(d)
        for g, xs in (got or {}).items():
            groups.setdefault(g, []).extend(xs)
    print("Per server, I/O mode and profile: a page read through at 32 and not at a lower "
          "threshold, µs, as the runs measured it and as the current model priced it "
          "(median and quartiles over rows and thresholds; each the median over the "
          "row's repetitions), and measured - priced.\n")
    print("| server | I/O | profile | comparisons | measured | priced | measured - priced |")
    print("|---|---|---|---|---|---|---|")
    for (server, mode, profile), xs in sorted(groups.items()):
        cells = [quartiles([x[3] for x in xs]), quartiles([x[4] for x in xs]),
                 quartiles([x[3] - x[4] for x in xs])]
        text = " | ".join(f"{m:.1f} [{lo:.1f}, {hi:.1f}]" for lo, m, hi in cells)
        print(f"| {server} | {mode} | {profile} | {len(xs)} | {text} |")

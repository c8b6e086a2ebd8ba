"""The report's sections on the threshold sweeps: the sweep's tables and
figures, the autotuner's score against every fixed threshold, the verdict
per storage profile and I/O mode, and pgbench's sweep scored the same way.
Each section writes through the line writer p."""

from bench.vacbench.plots import plot
from bench.vacbench.profiles import PROFILES, profile_settings
from bench.vacbench.stats import (BEST_LIMIT, SAME_KEY, SIMILAR_WORK, STOCK_LIMIT,
                                  best_constant, calibrated_rpc, fixed_scores, geomean, judge,
                                  medians, per_rep, score_rows, similar_work, thr_key)

SKIP_BENCH_THREAD = "https://postgrespro.com/list/thread-id/2722343"


def paired_text(bounds, limit, same=False):
    if bounds is None:
        return "same work" if same else "–"
    _, lo, gm, hi = bounds
    return f"{gm:.2f} [{lo:.2f}, {hi:.2f}]: {judge(bounds, limit, same)}"


def paired_summary(sc, key, limit, what):
    """One sentence part: how many rows are above, within, undecided."""
    by = {}
    for r in sc:
        by.setdefault(judge(r[key], limit, r[SAME_KEY[key]]), []).append(r)

    def rows(v):
        return ", ".join(f"{r['frac']:g} ({r[key][2]:.2f} [{r[key][1]:.2f}, {r[key][3]:.2f}])"
                         for r in by.get(v, []))

    def n(v):
        k = len(by.get(v, []))
        return f"{k} row{'' if k == 1 else 's'}"
    same = ", ".join(f"{r['frac']:g}" for r in by.get("same work", []))
    return (f"auto ≤ {limit:.2f} × {what} within on {n('within')}"
            + (f", the same work as {what} on {n('same work')} ({same})" if same else "")
            + f", above on {n('above')}"
            + (f" ({rows('above')})" if by.get("above") else "")
            + f", undecided on {n('undecided')}"
            + (f" ({rows('undecided')})" if by.get("undecided") else "")
            + (f", without repetitions on {n('-')}" if by.get("-") else ""))


def paired_summaries(sc):
    """Both criteria's paired_summary(), as one sentence part."""
    return (f"{paired_summary(sc, 'paired_best', BEST_LIMIT, 'best')}; "
            f"{paired_summary(sc, 'paired_stock', STOCK_LIMIT, 'stock')}")


def score_table(p, sc):
    """The score table of score_rows()' rows, through the line writer p:
    (geometric mean auto / best, geometric mean auto / stock)."""
    b, s = f"{BEST_LIMIT:.2f}", f"{STOCK_LIMIT:.2f}"
    p("| frac | best fixed | best ms | auto ms | auto / best | auto / stock | "
      f"≤ {b} × best | ≤ {s} × stock | paired auto / best [bounds]: vs {b} | "
      f"paired auto / stock [bounds]: vs {s} | auto's pages, read calls / best's | "
      "same pages and reads as auto |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sc:
        p(f"| {r['frac']:g} | {r['best_t']} | {r['best']:.1f} | {r['auto']:.1f} | "
          f"{r['vs_best']:.2f} | {r['vs_stock']:.2f} | "
          f"{'yes' if r['vs_best'] <= BEST_LIMIT else 'NO'} | "
          f"{'yes' if r['vs_stock'] <= STOCK_LIMIT else 'NO'} | "
          f"{paired_text(r['paired_best'], BEST_LIMIT, r['same_best'])} | "
          f"{paired_text(r['paired_stock'], STOCK_LIMIT, r['same_stock'])} | "
          f"{r['pages_vs_best']:.2f}, {r['reads_vs_best']:.2f} | "
          f"{', '.join(r['twins']) or '–'} |")
    gb = geomean([r["vs_best"] for r in sc])
    gs = geomean([r["vs_stock"] for r in sc])
    p(f"| geometric mean | | | | {gb:.2f} | {gs:.2f} | | | | | | |\n")
    return gb, gs


def sweep_section(p, out, cfg, rows, med, groups):
    """Per group: times relative to 32, absolute figures, the PNG."""
    p("## Sweep (the SKIP_PAGES_THRESHOLD benchmark): VACUUM time relative to "
      "threshold 32\n")
    p("The SKIP_PAGES_THRESHOLD benchmark: pgsql-hackers, [\"Maybe we should reduce "
      f"SKIP_PAGES_THRESHOLD a bit?\", December 2024]({SKIP_BENCH_THREAD}). "
      "Cells: median time as % of threshold 32's; last columns: threshold 32's median "
      "in ms and pages scanned. Below each table, per threshold: median ms, pages "
      "scanned, read calls.\n")
    for g in groups:
        sweep_group(p, out, cfg, rows, med, g)


def sweep_group(p, out, cfg, rows, med, g):
    server, mode, profile = g
    thrs = sorted({k[4] for k in med if k[:3] == g}, key=thr_key)
    fracs = sorted({k[3] for k in med if k[:3] == g})
    p(f"### {server}, {mode} reads, profile {profile}\n")
    rpc = calibrated_rpc(rows, server, mode, profile)
    conf = profile_settings(int(server.split("-")[0]), mode, profile, rpc)
    p("Settings: " + ", ".join(f"{k} = {v}" for k, v in conf.items()) + ".\n")
    p("| frac | " + " | ".join(str(t) for t in thrs if t != "32") + " | 32 (ms) | 32 pages |")
    p("|---" * (len(thrs) + 2) + "|")
    for f in fracs:
        base = med.get((*g, f, "32"))
        if base is None:
            continue
        cells = []
        for t in thrs:
            if t == "32":
                continue
            v = med.get((*g, f, t))
            cells.append(f"{v[0] / base[0]:.0%}" if v else "")
        p(f"| {f:g} | " + " | ".join(cells) + f" | {base[0]:.1f} | {base[1]:.0f} |")
    p("")
    slowed = PROFILES[profile].slowread
    p("| frac | " + " | ".join(f"{t}: ms, pages, reads" for t in thrs) + " |")
    p("|---" * (len(thrs) + 1) + "|")
    for f in fracs:
        vals = [med.get((*g, f, t)) for t in thrs]
        p(f"| {f:g} | " + " | ".join(
            f"{v[0]:.1f}, {v[1]:.0f}, {v[4]:.0f}" + (f" ({v[3]:.0f} slow)" if slowed else "")
            if v else "" for v in vals) + " |")
    p("\n'reads': read calls the server made during the timed VACUUM (slowread counts "
      "them in both profiles; 18 combines up to 16 pages into one), '(n slow)': those "
      "slowread delayed. Unlike the times, these counts do not depend on the "
      "machine's load.")
    png = f"sweep-{server}-{mode}-{profile}.png"
    plot(med, g, out / png, f"{server}, {mode} reads, profile {profile}: "
         f"{cfg['sweep_pages']} pages")
    p(f"\n![{server} {mode} {profile}]({png})\n")


def score_section(p, med, groups, sweep):
    """The autotuner's score per group; returns (verdicts, {group: rows})."""
    p("## The autotuner's score\n")
    p("Per row: auto = vacskip.threshold -1 under the profile's settings; best = the "
      "fastest fixed threshold of that row (medians). The criteria: "
      f"auto ≤ {BEST_LIMIT:.2f} × best and auto ≤ {STOCK_LIMIT:.2f} × stock (32) on every "
      "row.\n")
    p("Judged two ways. By the medians (the 'auto / best', 'auto / stock' and yes/NO "
      "columns). And paired by repetition ('paired' columns): every threshold of one "
      "repetition updated the same rows, so each repetition gives one ratio of auto's "
      "time to the other's; the cell is their geometric mean with one-sided 95 % "
      "bounds (Student's t on the logarithms), and the criterion is 'within' when the "
      "upper bound meets it, 'above' when the lower bound misses it, 'undecided' when "
      "the interval straddles it, i.e. the repetitions cannot tell; 'same work' where "
      "auto's VACUUM read exactly the other's pages in as many read calls (medians), "
      "so that the two are one VACUUM timed twice: their true ratio is 1, which meets "
      "both criteria, and which bounds around it can only call undecided (or, one "
      f"time in twenty, above {STOCK_LIMIT:.2f}). The best fixed threshold is picked "
      "from the same repetitions, which favours it: an 'above' against it leans "
      "against auto.\n")
    reps = per_rep(sweep)
    scored, verdicts = {}, []
    for g in groups:
        sc = score_rows(med, g, reps)
        scored[g] = sc
        if sc:
            verdicts.append(score_group(p, med, g, sc, sweep))
    return verdicts, scored


def score_group(p, med, g, sc, sweep):
    server, mode, profile = g
    p(f"### {server}, {mode}, {profile}\n")
    chose = sorted({r["note"].split("skip thresholds ")[1] for r in sweep
                    if (r["server"], r["mode"], r["profile"]) == g and
                    r["threshold"] == "auto" and "skip thresholds " in r["note"]})
    if chose:
        p(f"Thresholds auto used (all-frozen/all-visible): {', '.join(chose)}.\n")
    gb, gs = score_table(p, sc)
    p("'Same pages and reads': fixed thresholds whose VACUUM read exactly the pages "
      "auto's did, in as many read calls: the same work, so where the best fixed "
      "threshold is among them, auto / best is noise between identical VACUUMs. "
      "'Pages, read calls / best's': medians of auto's VACUUM over the best fixed "
      "threshold's.\n")
    worst_b = max(sc, key=lambda r: r["vs_best"])
    worst_s = max(sc, key=lambda r: r["vs_stock"])
    ok_b = worst_b["vs_best"] <= BEST_LIMIT
    ok_s = worst_s["vs_stock"] <= STOCK_LIMIT
    fs = fixed_scores(med, g)
    bc = best_constant(fs)
    p(f"For comparison, the fixed threshold whose worst row is closest to each row's "
      f"best, chosen in hindsight: {bc} (worst row {fs[bc][0]:.2f} × best, geometric "
      f"mean {fs[bc][1]:.2f}); worst rows of every fixed threshold: "
      + ", ".join(f"{t}: {fs[t][0]:.2f}" for t in sorted(fs, key=int)) + ".\n")
    same = all(med[(*g, r["frac"], "auto")][1] == med[(*g, r["frac"], "32")][1] for r in sc)
    if same:
        p("Auto scanned exactly the pages threshold 32 scanned on every row: the "
          "autotuner chose 32 throughout, so auto / stock here is this run's "
          "noise between two identical VACUUMs.\n")
    return g, ok_b, ok_s, worst_b, worst_s, gb, gs, bc, fs[bc]


def fracs_text(rows, ratio=None):
    """'frac: ratio, ...' (or the fractions alone), 'none' for no rows."""
    return ", ".join(f"{r['frac']:g}" + (f": {r[ratio]:.2f}" if ratio else "")
                     for r in rows) or "none"


def verdict_section(p, verdicts, scored):
    p("### Verdict per storage profile and I/O mode\n")
    b_lim, s_lim = f"{BEST_LIMIT:.2f}", f"{STOCK_LIMIT:.2f}"
    for g, ok_b, ok_s, wb, ws, gb, gs, bc, bcs in verdicts:
        server, mode, profile = g
        b = ("met" if ok_b else f"NOT met: worst row {wb['frac']:g}, auto is "
             f"{wb['vs_best']:.2f} × best (threshold {wb['best_t']})")
        s = ("met" if ok_s else f"NOT met: worst row {ws['frac']:g}, auto is "
             f"{ws['vs_stock']:.2f} × stock")
        sc = scored[g]
        miss = [r for r in sc if r["vs_best"] > BEST_LIMIT]
        same = [r for r in miss if r["best_t"] in r["twins"]]
        near = [r for r in miss if r["best_t"] not in r["twins"] and similar_work(r)]
        real = [r for r in miss if r["best_t"] not in r["twins"] and not similar_work(r)]
        over = [r for r in sc if r["vs_stock"] > STOCK_LIMIT]
        over_same = fracs_text([r for r in over if "32" in r["twins"]])
        over_real = fracs_text([r for r in over if "32" not in r["twins"]], "vs_stock")
        p(f"- {server}, {mode}, {profile}: auto ≤ {b_lim} × best {b}; auto ≤ {s_lim} × stock "
          f"{s} (geometric means {gb:.2f} and {gs:.2f}). Rows over {b_lim} × best: "
          f"{len(same)} where auto read the same pages as the best threshold "
          f"({fracs_text(same)}), {len(near)} where its pages and read calls were within "
          f"{(SIMILAR_WORK - 1) * 100:.0f} % of the best's ({fracs_text(near, 'vs_best')}), "
          f"{len(real)} where they differed more ({fracs_text(real, 'vs_best')}). "
          f"Rows over {s_lim} × stock where auto read what 32 read: {over_same}; "
          f"where it read differently: {over_real}. The best single fixed threshold in "
          f"hindsight ({bc}) is {bcs[0]:.2f} × best on its worst row. "
          f"Paired by repetition: {paired_summaries(sc)}.")
    p("")


def pgbench_section(p, pgb):
    """pgbench's rows: a table per group, scored like the sweep."""
    p("## pgbench\n")
    p("`pgbench -i -F 90` (HOT room; accounts bigger than shared_buffers), "
      "`VACUUM (FREEZE) pgbench_accounts`, then `pgbench -n -c 1 -t N --random-seed S -b "
      "tpcb-like` with N = frac × accounts and S = 5 + repetition (the same "
      "transactions before every threshold of one repetition), CHECKPOINT, cold "
      "restart with the accounts evicted from the OS cache, timed `VACUUM (VERBOSE) "
      "pgbench_accounts`. The profile's settings and random_page_cost are the "
      "sweep's. Cells: medians over the repetitions (n), time relative to 32's.\n")
    pm = medians(pgb)
    preps = per_rep(pgb)
    for g in sorted({k[:3] for k in pm}):
        thrs = sorted({k[4] for k in pm if k[:3] == g}, key=thr_key)
        note = next(r["note"] for r in pgb if (r["server"], r["mode"], r["profile"]) == g)
        n = sorted({v[2] for k, v in pm.items() if k[:3] == g})
        n = f"{n[0]}" if n[0] == n[-1] else f"{n[0]}-{n[-1]}"
        p(f"### {g[0]}, {g[1]}, profile {g[2]} (scale {next(r['pages'] for r in pgb)}; "
          f"{note.split(', ', 1)[1]}; n = {n})\n")
        p("| frac | " + " | ".join(f"{t}" for t in thrs) + " |")
        p("|---" * (len(thrs) + 1) + "|")
        for f in sorted({k[3] for k in pm if k[:3] == g}):
            base = pm.get((*g, f, "32"))
            cells = []
            for t in thrs:
                v = pm.get((*g, f, t))
                cells.append(f"{v[0]:.1f} ms, {v[1]:.0f} p" +
                             (f" ({v[0] / base[0]:.0%})" if base and t != "32" else "")
                             if v else "")
            p(f"| {f:g} | " + " | ".join(cells) + " |")
        p("")
        sc = score_rows(pm, g, preps)
        if sc:
            p(f"Score of {g[0]}, {g[2]} under pgbench (the sweep's columns and verdicts):\n")
            score_table(p, sc)
            if any(r["paired_best"] or r["paired_stock"] for r in sc):
                p(f"Paired by repetition: {paired_summaries(sc)}.\n")
            else:
                p("One repetition: nothing to pair, the medians are single runs.\n")

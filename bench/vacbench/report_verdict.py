"""The report's verdict: the autotuner against every fixed threshold across
all rows, per group (server, I/O mode, storage profile) and per profile,
against the criteria of stats.py, and what the run can and cannot tell.
Each section writes through the line writer p."""

import re

from bench.vacbench.plan import SIZES
from bench.vacbench.profiles import PROFILES, dba_settings
from bench.vacbench.stats import (AUTO, AUTO_SETTINGS, PROFILE_BEST_LIMIT, ROW_BEST_LIMIT,
                                  STOCK_LIMIT, auto_used, best_constant, blind_best,
                                  charged_spread, chosen_in_fixed, decided, geomean, group_of,
                                  group_verdict, max_reps, overall_verdict, ranking, rows_of,
                                  score_rows, skip_thresholds, verdicts)


def used(sweep, group, column, workload=None, frac=None):
    """The all-frozen thresholds a column's VACUUMs used in a group, or in
    one of its rows (from their VERBOSE line), as text."""
    got = sorted({int(skip_thresholds(r["note"])[0]) for r in sweep
                  if (r["server"], r["mode"], r["profile"]) == group and r["threshold"] == column
                  and (workload is None or r["workload"] == workload)
                  and (frac is None or float(r["frac"]) == frac)
                  and skip_thresholds(r["note"])})
    return "/".join(map(str, got)) or "?"


def bounds_text(b):
    return "–" if b is None else f"{b[2]:.2f} [{b[1]:.2f}, {b[3]:.2f}]"


def rank_table(p, rank):
    p("| rank | column | geometric mean of time / row's best fixed | worst row | rows |")
    p("|---|---|---|---|---|")
    for i, (col, gm, worst, n) in enumerate(rank, 1):
        name = {AUTO: "**auto** (calibrated)", AUTO_SETTINGS: "auto-settings"}.get(col, col)
        p(f"| {i} | {name} | {gm:.3f} | {worst:.2f} | {n} |")
    p("")


def in_fixed(med, reps, rows, used):
    """chosen_in_fixed() over the rows that have it."""
    return [x for x in (chosen_in_fixed(med, reps, r, used.get(r, {})) for r in rows)
            if x is not None]


def overall_section(p, med, reps, rows, used):
    """Every row of every group together; returns a summary line or None."""
    p("### Across every profile, server, I/O mode and workload\n")
    ov = overall_verdict(med, rows)
    if ov is None:
        p("Not enough measured yet.\n")
        return None
    p("For each column, the geometric mean over all rows of its median time over the "
      "row's best fixed threshold's (1.000 = always the best fixed threshold), ranked. "
      "The claim an autotuner exists to make: no constant does as well everywhere.\n")
    rank_table(p, ov["rank"])
    const = ov["constant"]
    b = ov["vs_constant"]
    side = ("undecided" if b is None or b[1] <= 1 <= b[3]
            else "auto faster" if b[3] < 1 else "auto slower")
    p(f"Criterion: auto's geometric mean ({ov['auto'][1]:.3f}) below every fixed "
      f"threshold's: **{'met' if ov['beats_every_fixed'] else 'NOT met'}**. The best "
      f"single fixed threshold over all rows, chosen in hindsight, is {const[0]} "
      f"({const[1]:.3f}); auto over it, row by row (medians, the rows as the sample, "
      f"one-sided 95 % bounds): {bounds_text(b)}: {side}.\n")
    chosen = in_fixed(med, reps, rows, used)
    if chosen:
        p(f"Auto's choices timed in the fixed columns: {geomean(chosen):.3f} × best over "
          f"{len(chosen)} rows. The auto column is timed apart from the fixed ones and "
          "carries a noise of its own; here each repetition's auto threshold (as its VACUUM "
          "reported it) is timed in that threshold's own column in the same repetition, "
          "which leaves that noise out. The criteria stay on the auto column.\n")
    return (f"across {ov['auto'][3]} rows: auto {ov['auto'][1]:.3f} × best, best constant "
            f"{const[0]} {const[1]:.3f}, auto-settings "
            + next((f"{x[1]:.3f}" for x in ov["rank"] if x[0] == AUTO_SETTINGS), "–")
            + f"; auto beats every fixed threshold: {'yes' if ov['beats_every_fixed'] else 'NO'}")


def group_section(p, med, reps, sweep, rows):
    """The criteria per group; returns summary lines."""
    p("### Per storage profile, server and I/O mode\n")
    p(f"Per group, over its rows: auto / best fixed (geometric mean, worst row); "
      f"auto-settings / best; auto / stock (32), each row paired by repetition "
      f"(one-sided 95 % bounds on the geometric mean of the repetitions' ratios) and judged "
      f"against {STOCK_LIMIT:.2f}: above (decided), undecided, within or the same work; "
      "the fixed threshold closest to every row's best in hindsight for the group. "
      f"Criteria: auto / best ≤ {PROFILE_BEST_LIMIT:.2f} (geometric mean) and no row above "
      f"{STOCK_LIMIT:.2f} × stock.\n")
    p("| profile | server, I/O | rows | threshold: settings → auto used | auto / best "
      "(worst row) | auto-settings / best | auto / stock | vs stock: above / undecided / "
      "within or same | best constant | "
      f"≤ {PROFILE_BEST_LIMIT:.2f} × best | none above stock |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    out = []
    groups = sorted({group_of(r) for r in rows}, key=lambda g: (g[2], g[0], g[1]))
    for g in groups:
        v = group_verdict(med, reps, [r for r in rows if group_of(r) == g])
        if v is None:
            continue
        w = v["worst"]
        within = v["rows"] - len(v["above_stock"]) - len(v["undecided_stock"])
        c = v["constant"]
        sv = "–" if v["settings_vs_best"] is None else f"{v['settings_vs_best']:.3f}"
        p(f"| {g[2]} | {g[0]}, {g[1]} | {v['rows']} | {used(sweep, g, AUTO_SETTINGS)} → "
          f"{used(sweep, g, AUTO)} | {v['auto_vs_best']:.3f} ({w['vs_best']:.2f}: {w['row'][3]} "
          f"{w['frac']:g} vs {w['best_t']}) | {sv} | {v['auto_vs_stock']:.3f} | "
          f"{len(v['above_stock'])} / {len(v['undecided_stock'])} / {within} | "
          f"{c[0] if c else '–'}: {c[1]:.3f} | {'yes' if v['best_met'] else 'NO'} | "
          f"{'yes' if v['stock_met'] else 'NO'} |")
        out.append(f"{g[2]} {g[0]} {g[1]}: auto {v['auto_vs_best']:.2f} × best (criterion "
                   f"{'met' if v['best_met'] else 'NOT met'}), settings {sv}, "
                   f"{len(v['above_stock'])} rows above stock, "
                   f"{len(v['undecided_stock'])} undecided")
    p("")
    return out


def profile_section(p, med, reps, rows, profiles, used):
    """Per profile, every server, I/O mode and workload together."""
    p("### Per storage profile, all its servers, I/O modes and workloads\n")
    p("Geometric means over the rows of time / the row's best fixed threshold's (the "
      "best in hindsight). The best in hindsight gains from the repetitions' noise: its "
      "median is the least of six noisy ones, so even the truly best threshold measures "
      "above it on average. 'Best chosen blind' times each row's best fixed threshold as "
      "a rule that must choose first would find it: chosen on all repetitions but one and "
      "timed on the one left out, in turn (the median, over the best in hindsight). The "
      "gain lies between 1.00 and that column, which also pays for choosing on one "
      "repetition fewer. 'Auto's choices in the fixed columns': auto's threshold in each "
      "repetition timed in that threshold's own column (above).\n")
    p("| profile | rows | auto | auto's choices in the fixed columns | auto-settings | best "
      f"constant in hindsight | best chosen blind | auto ≤ {PROFILE_BEST_LIMIT:.2f} × best |")
    p("|---|---|---|---|---|---|---|---|")
    for prof in profiles:
        prows = [r for r in rows if r[2] == prof]
        rank = ranking(med, prows)
        if not rank:
            continue
        by = {x[0]: x for x in rank}
        c = best_constant(rank)
        a, s = by.get(AUTO), by.get(AUTO_SETTINGS)
        blind = [x for x in (blind_best(med, reps, r) for r in prows) if x is not None]
        chosen = in_fixed(med, reps, prows, used)
        p(f"| {prof} | {a[3] if a else c[3]} | {f'{a[1]:.3f}' if a else '–'} | "
          f"{f'{geomean(chosen):.3f}' if chosen else '–'} | "
          f"{f'{s[1]:.3f}' if s else '–'} | {c[0]}: {c[1]:.3f} | "
          f"{f'{geomean(blind):.3f} ({len(blind)} rows)' if blind else '–'} | "
          f"{('yes' if a[1] <= PROFILE_BEST_LIMIT else 'NO') if a else '–'} |")
    p("")


def losses_section(p, med, reps, sweep, rows):
    """Rows where auto lost beyond noise."""
    lost = []
    for sc in score_rows(med, reps, rows):
        vb, vs = verdicts(sc)
        if vs == "above" or vb == "above":
            lost.append((sc, vb, vs))
    p("### Rows where auto lost beyond noise\n")
    if not lost:
        p(f"None: no row's paired auto / stock is above {STOCK_LIMIT:.2f} and no row's "
          f"paired auto / best above {ROW_BEST_LIMIT:.2f} beyond its bounds.\n")
        return
    p("| row | auto used | best (ms) | auto ms | 32 ms | paired auto / best | paired auto / "
      "stock |")
    p("|---|---|---|---|---|---|---|")
    for sc, vb, vs in lost:
        g = group_of(sc["row"])
        row_used = used(sweep, g, AUTO, sc['row'][3], sc['frac'])
        p(f"| {' '.join(g)} {sc['row'][3]} {sc['frac']:g} | {row_used}"
          f" | {sc['best_t']} ({sc['best']:.1f}) | {sc['auto']:.1f} | {sc['stock']:.1f} | "
          f"{bounds_text(sc['paired_best'])}: {vb} | {bounds_text(sc['paired_stock'])}: {vs} |")
    p("")


def charged_text(sweep, profiles):
    """How far the share of a VACUUM's reads that the emulation charged
    varied between repetitions of one cell, on the buffered groups of
    `profiles` (those charging the reads that miss the page cache); ""
    where none has two repetitions."""
    spread = charged_spread(sweep, profiles)
    if not spread:
        return ""
    wide = sum(most > 2 * least for least, most in spread.values())
    cell, (least, most) = max(spread.items(), key=lambda kv: (kv[1][1] - kv[1][0], kv[0]))
    server, _, profile, workload, frac, column = cell
    return (f" Here, with buffered reads on {', '.join(profiles)}, the share of a VACUUM's "
            f"reads charged varied more than twofold between the repetitions of one cell "
            f"(one workload, fraction and threshold; each repetition changes rows of its "
            f"own) in {wide} of {len(spread)} cells; most widely {server} {profile} "
            f"{workload} {frac:g} at {column}: {100 * least:.1f} % to {100 * most:.1f} %. "
            "The cache was evicted before each VACUUM: what it served uncharged, the "
            "kernel's readahead had read during the VACUUM, and whether readahead got ahead "
            "of VACUUM's reads varies from VACUUM to VACUUM; those rows' times carry that "
            "spread.")


def delay_text(setting):
    """A vacuum_cost_delay setting as the report states it: a bare number
    is in milliseconds, its unit otherwise; 0 of any unit is '0 ms'."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*", setting)
    if m is None:
        return setting
    return "0 ms" if float(m[1]) == 0 else f"{m[1]} {m[2] or 'ms'}"


def limits_section(p, size, cfg, med, reps, rows, calib, sweep):
    """What the reader can and cannot conclude."""
    sc = score_rows(med, reps, rows)
    capped = [s for s in sc if s["n"] >= max_reps(cfg) and not decided(s)]
    p("### What this run can and cannot tell\n")
    p(f"- **Size**: {len(rows)} rows ({size} size: {', '.join(cfg['workloads'])}; "
      f"{cfg['sweep_pages']:,} pages per table, pgbench scale {cfg['pgbench_scale']}), "
      f"{cfg['reps']} repetitions per row, up to {max_reps(cfg)} where a row's paired "
      f"verdicts (auto vs best at {ROW_BEST_LIMIT:.2f}, auto vs stock at {STOCK_LIMIT:.2f}) "
      f"were undecided; {len(capped)} rows stayed undecided at the cap. An undecided row "
      "says the repetitions cannot tell, not that auto is as good.")
    p("- **Noise**: the best fixed threshold is picked from the same repetitions, which "
      "favours it: 'above' against it leans against auto, and a ratio a little over 1.00 "
      "is expected even where auto chose the best threshold. Rows where auto read exactly "
      "what another column read are 'the same work' (one VACUUM timed twice).")
    emulated = [x for x in cfg["profiles"] if PROFILES[x].mode != "count"]
    below = [x for x in cfg["profiles"] if PROFILES[x].block_device]
    real = [x for x in cfg["profiles"] if x not in emulated and x not in below]
    if below:
        p(f"- **Emulated storage below the page cache**: {', '.join(below)}: "
          "bench/slowdev.c's sleeps on a loop device over this machine's disk, not a real "
          "device: every request that reaches the device pays, the kernel's readahead's "
          "too, and so does each request's way through the loop device and FUSE. It "
          "shows whether the autotuner follows such storage (calibrate() measures the "
          "device VACUUM reads), not how it does on any particular cloud volume.")
    elif emulated:
        p(f"- **Emulated storage**: {', '.join(emulated)} "
          f"{'is' if len(emulated) == 1 else 'are'} bench/slowread.c's sleeps on this "
          "machine's disk, not real devices: they show whether the autotuner follows the "
          "storage it is given (calibrate() measures the same emulation VACUUM sees), not "
          "how it does on any particular cloud volume. Buffered reads keep the kernel's "
          "readahead, whose extra pages the emulation does not charge."
          + charged_text(sweep, [x for x in emulated if PROFILES[x].mode in ("latency", "iops")])
          + (f" {', '.join(real)}: this machine's disk, as it is or behind the kernel's "
             "own limits." if real else ""))
    else:
        p(f"- **Storage**: {', '.join(real)}: this machine's disk, as it is or behind the "
          "kernel's own limits (Storage profiles); one disk, not the devices of users.")
    p(f"- **One machine**, {len({r['server'] for r in calib}) or 'its'} server(s), one "
      "VACUUM at a time, no concurrent workload; VACUUM of a table that was frozen, "
      "changed once and checkpointed.")
    delays = {x: dba_settings(x, cfg).get("vacuum_cost_delay") for x in cfg["profiles"]}
    slept = [f"{x} ({delay_text(d)})" for x, d in delays.items()
             if d is not None and delay_text(d) != "0 ms"]
    p("- **Cost-based delay**: " + (
        f"under {', '.join(slept)} every VACUUM slept vacuum_cost_delay for each "
        "vacuum_cost_limit points of cost, as autovacuum does (its default: 2 ms for 200 "
        "points, 30 µs a page read through); the other profiles' did not." if slept else
        "none: manual VACUUMs, vacuum_cost_delay at its default 0. Autovacuum sleeps by "
        "default (2 ms for every 200 points of cost, 30 µs a page read through), which makes "
        "reading through dearer and lower thresholds cheaper; --settings "
        "PROFILE.vacuum_cost_delay=2 runs a profile so."))
    if size != "full":
        full = SIZES["full"]
        p("- **Left out at this size**: what `BENCH=full` adds: "
          + "; ".join(f"{w} at {', '.join(f'{f:g}' for f in full['fracs'][w])}"
                      for w in full["workloads"])
          + f" ({full['sweep_pages']:,}-page tables, pgbench scale {full['pgbench_scale']}), "
          f"{full['reps']} repetitions up to {max_reps(full)}.")
    p("")


def verdict_section(p, size, cfg, med, reps, sweep, calib):
    """The verdict; returns summary lines for the terminal."""
    p("## Verdict\n")
    rows = rows_of(med)
    out = []
    used = auto_used(sweep)
    line = overall_section(p, med, reps, rows, used)
    if line:
        out.append(line)
    out += group_section(p, med, reps, sweep, rows)
    profile_section(p, med, reps, rows, cfg["profiles"], used)
    losses_section(p, med, reps, sweep, rows)
    limits_section(p, size, cfg, med, reps, rows, calib, sweep)
    return out


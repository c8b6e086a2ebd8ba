"""The report's per-row sections: for every group (server, I/O mode,
storage profile) and workload, the times of every column relative to
threshold 32, the absolute figures, the autotuner's score per row with its
paired verdicts, and one figure per group.  Each section writes through the
line writer p."""

from bench.vacbench.plots import plot
from bench.vacbench.profiles import profile_settings
from bench.vacbench.report_verdict import bounds_text, used
from bench.vacbench.stats import (AUTO, ROW_BEST_LIMIT, STOCK_LIMIT, group_of, rows_of,
                                  score_rows, thr_key, verdicts)
from bench.vacbench.workloads import WORKLOADS

SKIP_BENCH_THREAD = "https://postgrespro.com/list/thread-id/2722343"


def sweep_section(p, out, cfg, sweep, med, reps):
    p("## Rows\n")
    p("The uniform workload is the SKIP_PAGES_THRESHOLD benchmark: pgsql-hackers, "
      "[\"Maybe we should reduce SKIP_PAGES_THRESHOLD a bit?\", December "
      f"2024]({SKIP_BENCH_THREAD}). Per group and workload: median time of each column as "
      "% of threshold 32's (last columns: 32's median ms and pages scanned, and the "
      "pages the change left not all-visible); then per column median ms, pages scanned, "
      "read calls (and, where the profile delays reads, how many it delayed); then the "
      "score per row. 'n': repetitions of the row.\n")
    rows = rows_of(med)
    for g in sorted({group_of(r) for r in rows}, key=lambda g: (g[2], g[0], g[1])):
        server, mode, profile = g
        p(f"### {server}, {mode} reads, profile {profile}\n")
        conf = profile_settings(int(server.split("-")[0]), mode, profile, cfg)
        p("Settings: " + (", ".join(f"{k} = {v}" for k, v in conf.items()) or "defaults")
          + ".\n")
        for w in [w for w in WORKLOADS if any(r[:4] == (*g, w) for r in rows)]:
            workload_tables(p, sweep, med, reps, [r for r in rows if r[:4] == (*g, w)], g, w)
        png = f"sweep-{server}-{mode}-{profile}.png"
        plot(med, g, out / png, f"{server}, {mode} reads, profile {profile}")
        p(f"![{server} {mode} {profile}]({png})\n")


def modified_text(sweep, row):
    """Median share of the table's pages a row's changes left not
    all-visible."""
    vals = sorted(int(r["modified"]) / int(r["rel_pages"]) for r in sweep
                  if (r["server"], r["mode"], r["profile"], r["workload"]) == row[:4]
                  and float(r["frac"]) == row[4] and r["modified"] and r["rel_pages"])
    return f"{vals[len(vals) // 2]:.1%}" if vals else "?"


def workload_tables(p, sweep, med, reps, rows, g, w):
    thrs = sorted({k[5] for k in med if k[:4] == (*g, w)}, key=thr_key)
    p(f"#### {w} ({WORKLOADS[w].frac_text}); auto-settings ran at "
      f"{used(sweep, g, 'auto-settings', w)}, auto at {used(sweep, g, AUTO, w)}\n")
    p("| frac | modified | " + " | ".join(t for t in thrs if t != "32")
      + " | 32 (ms) | 32 pages |")
    p("|---" * (len(thrs) + 3) + "|")
    for row in rows:
        base = med.get((*row, "32"))
        if base is None:
            continue
        cells = [f"{med[(*row, t)][0] / base[0]:.0%}" if (*row, t) in med else ""
                 for t in thrs if t != "32"]
        p(f"| {row[4]:g} | {modified_text(sweep, row)} | " + " | ".join(cells)
          + f" | {base[0]:.1f} | {base[1]:.0f} |")
    p("")
    delayed = any(med[(*r, t)][3] for r in rows for t in thrs if (*r, t) in med)
    p("| frac | " + " | ".join(f"{t}: ms, pages, reads" for t in thrs) + " |")
    p("|---" * (len(thrs) + 1) + "|")
    for row in rows:
        vals = [med.get((*row, t)) for t in thrs]
        p(f"| {row[4]:g} | " + " | ".join(
            f"{v[0]:.1f}, {v[1]:.0f}, {v[4]:.0f}" + (f" ({v[3]:.0f} delayed)" if delayed else "")
            if v else "" for v in vals) + " |")
    p("")
    score_table(p, score_rows(med, reps, rows))


def score_table(p, sc):
    """Each row's score: best fixed threshold, auto and auto-settings
    against it, auto against stock, paired by repetition."""
    if not sc:
        return
    p(f"| frac | n | best fixed (ms) | auto ms | auto / best | paired auto / best vs "
      f"{ROW_BEST_LIMIT:.2f} | auto / stock | paired auto / stock vs {STOCK_LIMIT:.2f} | "
      "auto-settings / best | auto's pages, read calls / best's | same work as auto |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sc:
        vb, vs = verdicts(r)
        sv = f"{r['settings_vs_best']:.2f}" if r["settings_vs_best"] else "–"
        p(f"| {r['frac']:g} | {r['n']} | {r['best_t']} ({r['best']:.1f}) | {r['auto']:.1f} | "
          f"{r['vs_best']:.2f} | {bounds_text(r['paired_best'])}: {vb} | {r['vs_stock']:.2f} | "
          f"{bounds_text(r['paired_stock'])}: {vs} | {sv} | "
          f"{r['pages_vs_best']:.2f}, {r['reads_vs_best']:.2f} | {', '.join(r['twins']) or '–'} |")
    p("")

"""OUT/report.md, written from OUT/runs.csv (and scope.txt, servers.txt,
load.txt): one function per section; the sweep's tables, the autotuner's
score and pgbench are in report_sweep.py."""

import datetime
import statistics

from bench.vacbench.machine import machine_facts, read_load
from bench.vacbench.plan import SIZES, missing_sweep_points, read_planned, reps_text
from bench.vacbench.profiles import PROFILES
from bench.vacbench.report_sweep import (pgbench_section, score_section, sweep_section,
                                         verdict_section)
from bench.vacbench.stats import medians, rpc_ratio
from bench.vacbench.store import read_rows
from bench.vacbench.workloads import UniformUpdates

CACHED_THREAD = ("https://postgr.es/m/"
                 "CAAKRu_Yf3gvXGcCnqqfoq0Q8LX8UM-e-qbm_B1LeZh60f8WhWA@mail.gmail.com")
# The thread's figures, measured on master in March 2024: its ratio is
# 7.4 ms / 11.5 ms.
CACHED_THREAD_MS = (7.4, 11.5)

SIZE_LABELS = {
    "full": "full run (BENCH=full)",
    "default": "DEFAULT (REDUCED) RUN: fewer fractions and repetitions, "
               "small table; shows the shape, not final figures",
    "smoke": "SMOKE RUN (tiny; exercises the driver only)",
}


def write_report(out, size, cfg, command):
    """Write OUT/report.md and the PNGs; returns the sweep's verdicts."""
    rows = read_rows(out / "runs.csv")
    lines = []
    p = lines.append
    missing = missing_sweep_points(rows, cfg, read_planned(out))
    header(p, out, size, cfg, missing, command)
    machine_section(p)
    settings_section(p, size, cfg)
    profiles_section(p, cfg)
    calib = [r for r in rows if r["phase"] == "calib"]
    if calib:
        calibration_section(p, calib)
    sweep = [r for r in rows if r["phase"] == "sweep"]
    med = medians(sweep)
    groups = sorted({k[:3] for k in med})
    verdicts = []
    if groups:
        sweep_section(p, out, cfg, rows, med, groups)
        verdicts, scored = score_section(p, med, groups, sweep)
        verdict_section(p, verdicts, scored)
    pgb = [r for r in rows if r["phase"] == "pgbench"]
    if pgb:
        pgbench_section(p, pgb)
    cached = [r for r in rows if r["phase"] == "cached"]
    if cached:
        cached_section(p, cached)
    (out / "report.md").write_text("\n".join(lines) + "\n")
    return verdicts


def title(size, cfg, missing):
    """What the run is: its size, the scope that restricts it, complete or not."""
    label = SIZE_LABELS[size]
    part = []
    if tuple(cfg["profiles"]) != SIZES[size]["profiles"]:
        part.append(f"profile{'s' if len(cfg['profiles']) > 1 else ''} "
                    f"{', '.join(cfg['profiles'])} only")
    if tuple(cfg["fracs"]) != SIZES[size]["fracs"]:
        part.append(f"fractions {', '.join(f'{f:g}' for f in cfg['fracs'])} only")
    if (cfg["reps"], cfg.get("cheap_reps")) != (SIZES[size]["reps"], SIZES[size].get("cheap_reps")):
        part.append(reps_text(cfg))
    if part:
        label += ", " + "; ".join(part)
    return ("INCOMPLETE " if missing else "") + label


def load_text(out):
    """The load the run recorded (load.txt), or that it recorded none."""
    sessions = read_load(out)
    if not sessions:
        text = ("Machine load during the measurements: not recorded (the run predates "
                "load.txt)")
        if (out / "interference.txt").exists():
            text += "; what else ran on the machine meanwhile: " \
                    "[interference.txt](interference.txt)"
        return text + "."
    cores = ", ".join(sorted({str(c) for _, _, _, c in sessions}))
    return ("Machine load during the measurements (load average over 1, 5 and 15 "
            f"minutes; {cores} cores), sampled when each measuring session started and "
            "ended: " + ", ".join(f"{la} at the {event} ({when.replace('T', ' ')[:16]} UTC)"
                                  for event, when, la, _ in sessions) + ".")


def header(p, out, size, cfg, missing, command):
    p(f"# vacskip benchmark: {title(size, cfg, missing)}\n")
    p(f"Written {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by "
      f"`{command}`; every measurement is in [runs.csv](runs.csv).\n")
    if missing:
        p(f"**Incomplete**: {sum(missing.values())} planned sweep points are not measured "
          "yet (" + "; ".join(f"{k}: {v}" for k, v in missing.items()) + "). Rows "
          "lacking a threshold are left out of the score. Resume with "
          "`make bench BENCH=<size> BENCH_OUT=<this directory>`.\n")
    p(f"{load_text(out)} Every cell is a median of only {reps_text(cfg)}.\n")


def machine_section(p):
    p("## Machine\n")
    p("| fact | value |\n|---|---|")
    for k, v in machine_facts().items():
        p(f"| {k} | {v} |")
    p("")


def settings_section(p, size, cfg):
    p("## Settings\n")
    p(f"Size `{size}`: sweep table {cfg['sweep_pages']} pages of `t(id int, val int, pad text)` "
      f"(pad {UniformUpdates.ROW_PAD} characters, fillfactor 90, ~96 rows per page), "
      f"shared_buffers {cfg['shared_buffers']}; fractions "
      f"{', '.join(f'{f:g}' for f in cfg['fracs'])}; "
      f"thresholds {', '.join(map(str, cfg['thresholds']))}; {reps_text(cfg)} "
      "(medians). Every server: fsync off, autovacuum off, "
      "vacuum_max_eager_freeze_failure_rate = 0 (18), io_method = worker and "
      "io_combine_limit = 128kB (18), shared_preload_libraries = vacskip.\n")
    p("Per point: `VACUUM (FREEZE) t` (at threshold 1, so it reads only the pages that "
      "are not all-frozen), CHECKPOINT; `UPDATE t SET val = val + 1` on k = frac × rows "
      "rows chosen by a generator seeded with (frac, repetition) — the same rows for "
      "every threshold and every I/O mode and profile; CHECKPOINT; shut down; for "
      "buffered reads `fdatasync` + `posix_fadvise(DONTNEED)` every file of `t`; start; "
      "`SET vacskip.threshold`; time `VACUUM (VERBOSE) t` from the client and read "
      "'pages scanned' from its output.\n")


def profiles_section(p, cfg):
    p("## Storage profiles and the autotuner's settings\n")
    items = [f"- **{prof.name}**: {prof.description.format(penalty_us=cfg['penalty_us'])}"
             for prof in PROFILES.values()]
    p("\n".join(items) + "\n")
    p("effective_io_concurrency and maintenance_io_concurrency: "
      + "; ".join(f"{prof.name} {prof.io_concurrency} ({prof.io_concurrency_reason})"
                  for prof in PROFILES.values()) + ". "
      "random_page_cost (seq_page_cost = 1) describes the disk, so it is measured once "
      "per profile, before its first sweep, the way fio compares random and "
      "sequential reads: same request size (8 kB), same queue depth (1). After "
      "a cold restart, a TID scan (`WHERE ctid = ANY(...)`, one 8 kB read at a time) "
      f"of tuple 1 of pages 0 to n - 1 (sequential), then of n = {cfg['calib_pages']} "
      "sorted random pages (random), the two alternating (this size: "
      f"{cfg.get('calib_reps', 1)} times each; the table says how many runs a result "
      "directory has); "
      "random_page_cost = median random / median sequential cost per page (at least 1), "
      "measured with "
      "direct I/O on 18 (no OS readahead) and used for every I/O mode and server of that "
      "profile. The same settings apply to every threshold column; the fixed "
      "thresholds ignore random_page_cost, the auto column (threshold -1) reads it.\n")


def calibration_section(p, calib):
    """The calibration rows: random_page_cost per profile."""
    p("Calibration (also the check that slowread works: 'penalised' counts the reads "
      "it delayed):\n")
    p("| server | I/O | profile | seq µs/page | random µs/page | random_page_cost | "
      "reads (seq / random) | penalised (seq / random) |")
    p("|---|---|---|---|---|---|---|---|")
    groups = {}
    for r in calib:
        groups.setdefault((r["server"], r["mode"], r["profile"]), {}) \
            .setdefault(r["threshold"], []).append(r)

    def us(rs):
        return [float(r["ms"]) / int(r["scanned"]) * 1000 for r in rs]

    def span(xs):
        return f"{statistics.median(xs):.1f}" + (
            f" ({min(xs):.1f}-{max(xs):.1f}, {len(xs)} runs)" if len(xs) > 1 else "")

    def med_int(rs, field):
        return f"{statistics.median(int(r[field]) for r in rs):g}"

    for (srv, mode, prof), g in sorted(groups.items()):
        if "seq" not in g or "rand" not in g:
            continue
        s, rr = us(g["seq"]), us(g["rand"])
        ratio = rpc_ratio(statistics.median(rr), statistics.median(s))
        p(f"| {srv} | {mode} | {prof} | {span(s)} | {span(rr)} | {ratio:g} | "
          f"{med_int(g['seq'], 'reads')} / {med_int(g['rand'], 'reads')} | "
          f"{med_int(g['seq'], 'penalised')} / {med_int(g['rand'], 'penalised')} |")
    p("")


def cached_section(p, cached):
    """The cached all-frozen VACUUM test's rows, and the thread's ratio."""
    p("## The cached all-frozen VACUUM test\n")
    pages = cached[0]["pages"]
    n = len({r["rep"] for r in cached})
    p("From pgsql-hackers, [\"Confine vacuum skip logic to lazy_scan_skip\", March "
      f"2024]({CACHED_THREAD}), scaled down. "
      f"`bench/cached_vacuum.py`'s setup: `t(id int)` fillfactor 10, {pages} pages, "
      f"`VACUUM (FREEZE)`, `pg_prewarm` of heap and visibility map, one VACUUM "
      f"discarded, then {n} timed plain `VACUUM t` per server, servers alternating; "
      "no module loaded.\n")
    p("ns/page = (median − median VACUUM of a 1-page table) / pages: the "
      "visibility-map walk without the fixed cost.\n")
    p("| server | median ms | min | max | 1-page ms | ns/page |")
    p("|---|---|---|---|---|---|")
    byserver, fixed = {}, {}
    for r in cached:
        byserver.setdefault(r["server"], []).append(float(r["ms"]))
        fixed.setdefault(r["server"], []).append(float(r["note"].split(": ")[1].split()[0]))
    per_page = {}
    for s, v in sorted(byserver.items()):
        m, f = statistics.median(v), statistics.median(fixed[s])
        per_page[s] = (m - f) * 1e6 / int(pages)
        p(f"| {s} | {m:.2f} | {min(v):.2f} | {max(v):.2f} | {f:.2f} | {per_page[s]:.1f} |")
    p("")
    ta, tb = CACHED_THREAD_MS
    p("| major | patched / stock (time) | patched / stock (ns/page) | the thread's ratio "
      f"({ta} ms / {tb} ms, master, March 2024) |")
    p("|---|---|---|---|")
    for m in sorted({s.split("-")[0] for s in byserver}):
        a, b = byserver.get(f"{m}-patched"), byserver.get(f"{m}-stock")
        if a and b:
            p(f"| {m} | {statistics.median(a) / statistics.median(b):.2f} | "
              f"{per_page[f'{m}-patched'] / per_page[f'{m}-stock']:.2f} | "
              f"{ta / tb:.2f} |")
    p("")

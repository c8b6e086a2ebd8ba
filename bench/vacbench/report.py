"""OUT/report.md, written from OUT/runs.csv (and scope.txt, servers.txt,
load.txt): the header, the setup (machine, settings, storage profiles,
workloads, calibrations) and the cached test here; the verdict in
report_verdict.py; the rows' tables in report_sweep.py."""

import datetime
import json
import statistics

from bench.vacbench.harness import numbers_text
from bench.vacbench.machine import machine_facts, read_load
from bench.vacbench.plan import SIZES, missing_sweep_points, read_planned, reps_text
from bench.vacbench.profiles import PROFILES, dba_settings, describe, emulation_text
from bench.vacbench.report_sweep import sweep_section
from bench.vacbench.report_verdict import verdict_section
from bench.vacbench.stats import medians, per_rep
from bench.vacbench.store import read_rows
from bench.vacbench.workloads import WORKLOADS

CACHED_THREAD = ("https://postgr.es/m/"
                 "CAAKRu_Yf3gvXGcCnqqfoq0Q8LX8UM-e-qbm_B1LeZh60f8WhWA@mail.gmail.com")
# The thread's figures, measured on master in March 2024: its ratio is
# 7.4 ms / 11.5 ms.
CACHED_THREAD_MS = (7.4, 11.5)

SIZE_LABELS = {
    "full": "full run (BENCH=full)",
    "default": "DEFAULT (REDUCED) RUN: two workloads, two fractions each, 12,000-page "
               "tables; see 'What this run can and cannot tell'",
    "smoke": "SMOKE RUN (tiny; exercises the driver only)",
}


def write_report(out, size, cfg, command):
    """Write OUT/report.md and the PNGs; returns the verdict's summary lines."""
    rows = read_rows(out / "runs.csv")
    lines = []
    p = lines.append
    missing = missing_sweep_points(rows, cfg, read_planned(out))
    header(p, out, size, cfg, missing, command)
    sweep = [r for r in rows if r["phase"] == "sweep"]
    med, reps = medians(sweep), per_rep(sweep)
    calib = [r for r in rows if r["phase"] == "calib"]
    summary = verdict_section(p, size, cfg, med, reps, sweep, calib) if sweep else []
    profiles_section(p, cfg)
    workloads_section(p, cfg)
    settings_section(p, cfg)
    if calib:
        calibration_section(p, calib)
    if sweep:
        sweep_section(p, out, cfg, sweep, med, reps)
    cached = [r for r in rows if r["phase"] == "cached"]
    if cached:
        cached_section(p, cached)
    machine_section(p)
    (out / "report.md").write_text("\n".join(lines) + "\n")
    return summary


def title(size, cfg, missing):
    """What the run is: its size, the scope that restricts it, complete or not."""
    label = SIZE_LABELS[size]
    part = []
    base = SIZES[size]
    if tuple(cfg["profiles"]) != base["profiles"]:
        part.append(f"profile{'s' if len(cfg['profiles']) > 1 else ''} "
                    f"{', '.join(cfg['profiles'])} only")
    if tuple(cfg["workloads"]) != base["workloads"]:
        part.append(f"workloads {', '.join(cfg['workloads'])}")
    if any(cfg["fracs"][w] != base["fracs"][w] for w in cfg["workloads"]):
        part.append("fractions " + "; ".join(
            f"{w} {', '.join(f'{f:g}' for f in cfg['fracs'][w])}" for w in cfg["workloads"]))
    if (cfg["reps"], cfg.get("max_reps")) != (base["reps"], base.get("max_reps")):
        part.append(reps_text(cfg))
    changed = sorted({*cfg.get("emulation_of", {}), *cfg.get("settings_of", {})})
    if changed:
        part.append(f"storage or settings other than the profiles' for {', '.join(changed)} "
                    "(Storage profiles)")
    if part:
        label += ", " + "; ".join(part)
    return ("INCOMPLETE " if missing else "") + label


def load_text(out):
    """The load the run recorded (load.txt), or that it recorded none."""
    sessions = read_load(out)
    if not sessions:
        return "Machine load during the measurements: not recorded."
    cores = ", ".join(sorted({str(c) for _, _, _, c, _ in sessions}))
    text = ("Machine load during the measurements (load average over 1, 5 and 15 "
            f"minutes; {cores} cores), sampled when each measuring session started and "
            "ended: " + ", ".join(f"{la} at the {event} ({when.replace('T', ' ')[:16]} UTC)"
                                  for event, when, la, _, _ in sessions) + ".")
    ra = sorted({r for *_, r in sessions if r is not None}, key=lambda r: (len(r), r))
    if ra:
        text += (" read_ahead_kb of the clusters' device then: " + ", ".join(ra) + " kB"
                 + (" (it changed between sessions)" if len(ra) > 1 else "") + ".")
    return text


def header(p, out, size, cfg, missing, command):
    p(f"# vacskip benchmark: {title(size, cfg, missing)}\n")
    p(f"Written {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by "
      f"`{command}`; every measurement is in [runs.csv](runs.csv).\n")
    if missing:
        p(f"**Incomplete**: {sum(missing.values())} planned points are not measured "
          "yet (" + "; ".join(f"{k}: {v}" for k, v in missing.items()) + "). Rows "
          "lacking a column are left out of the score. Resume with "
          "`make bench BENCH=<size> BENCH_OUT=<this directory>`.\n")
    p(f"{load_text(out)} Repetitions: {reps_text(cfg)}.\n")


def machine_section(p):
    p("## Machine\n")
    p("| fact | value |\n|---|---|")
    for k, v in machine_facts().items():
        p(f"| {k} | {v} |")
    p("")


def settings_section(p, cfg):
    p("## Settings and method\n")
    p(f"Thresholds (columns): {', '.join(map(str, cfg['thresholds']))}. Every server: fsync "
      "off, autovacuum off, vacuum_max_eager_freeze_failure_rate = 0 (18), io_method = "
      "worker and io_combine_limit = 128kB (18), shared_preload_libraries = vacskip, "
      f"shared_buffers {cfg['shared_buffers']}; data checksums are initdb's default (on "
      "from 18). The storage profile's settings come on top (above).\n")
    p("Per group (server, I/O mode, storage profile): restart with the profile's settings "
      "and LD_PRELOAD environment; `vacskip.forget_calibration('pg_default')`; read the "
      "settings path's threshold (`all_frozen_threshold` of `vacskip.explain_threshold()`, "
      "cost_source 'settings') of every workload's table; `vacskip.calibrate('pg_default', "
      f"{cfg['calib_seconds']:g})` with the emulation on"
      + ("; where it read its patterns fewer than three times, again for the seconds its "
         "WARNING advises, "
         "as a DBA would (the calibration table gives the seconds)"
         if cfg.get("calib_advice") else "")
      + "; every later `explain_threshold()` must say cost_source 'calibration'.\n")
    p("Per point: `VACUUM (FREEZE)` at threshold 1 (it reads only the pages that are not "
      "all-frozen); the workload's change (the same for every column of a repetition); "
      "CHECKPOINT; cold reads without a restart: `vacbench_evict()` "
      "(bench/modules/vacbench_evict: FlushRelationBuffers, then drop every fork's "
      "buffers) and, for buffered reads, `fdatasync` + `posix_fadvise(DONTNEED)` of every "
      "file of the table; `SET vacskip.threshold` (auto-settings: the settings path's "
      "threshold as a fixed value, so that its VACUUM is the one the autotuner would run "
      "without a calibration; auto: -1); the emulation on; time `VACUUM (VERBOSE)` from the "
      "client. Check that it read cold: slowread's byte count must cover every page "
      "scanned (none came from shared buffers) and at least one read must have gone to the "
      "device.\n")


def profiles_section(p, cfg):
    p("## Storage profiles\n")
    p("Emulated by `bench/slowread.c`, preloaded into the server (LD_PRELOAD at `pg_ctl "
      "start`, so also into 18's I/O workers; shared state in a file), switched on only "
      "for the timed VACUUM and calibrate(). Buffered reads go through the kernel's "
      "readahead (read_ahead_kb while measuring: in the header; at the report's writing: "
      "under Machine): a read that misses pays, the pages "
      "readahead brings in with it are later served from the page cache for free"
      + ("; under the profiles whose storage lies below the page cache (as their rows "
         "say), slowread only counts, and every request that reaches the device pays"
         if any(PROFILES[x].block_device or PROFILES[x].kernel_throttle
                for x in cfg["profiles"]) else "") + ".\n")
    p("| profile | storage | emulation | the DBA's settings (why) | servers |")
    p("|---|---|---|---|---|")
    for name in cfg["profiles"]:
        prof = PROFILES[name]
        conf = ", ".join(f"{k} = {v}" for k, v in dba_settings(name, cfg).items()) or "none"
        p(f"| {name} | {describe(name, cfg)} | {emulation_text(name, cfg)} | {conf} "
          f"({prof.settings_reason}) | {', '.join(str(m) for m in prof.majors)} |")
    p("")


def workloads_section(p, cfg):
    p("## Workloads\n")
    p("| workload | table and change | fraction means | fractions | table size |")
    p("|---|---|---|---|---|")
    for w in cfg["workloads"]:
        cls = WORKLOADS[w]
        size = (f"{cfg['sweep_pages']} pages" if cls.size_key == "sweep_pages"
                else f"scale {cfg['pgbench_scale']}")
        only = cfg.get("workload_profiles", {}).get(w)
        p(f"| {w} | {cls.description}{f' (profiles {chr(44).join(only)} only)' if only else ''}"
          f" | {cls.frac_text} | {', '.join(f'{f:g}' for f in cfg['fracs'][w])} | {size} |")
    p("")


def calibration_rows(calib):
    """The calibration rows with their notes parsed."""
    out = []
    for r in calib:
        try:
            note = json.loads(r["note"])
        except ValueError:
            continue
        out.append((r, note))
    return out


def calibration_section(p, calib):
    """Every vacskip.calibrate() of the run."""
    p("## Calibrations\n")
    p("Every `vacskip.calibrate()` of the run (one per group and measuring session), what "
      "it measured and the thresholds before (settings) and after (calibration) per "
      "workload's table. slowread's counters during the call show that the emulation was "
      "active: read calls, those it delayed, those that went to the device. Each "
      "round's figures and the device's requests (calibrate()'s round_ arrays) are in "
      "[runs.csv](runs.csv), phase calib, the note's 'calibrate'.\n")
    p("| server | I/O | profile | # | s | rounds | µs per page read (calibrate()'s arrays) | "
      "CPU µs/page + /tuple | threshold: settings → calibrated | reads / delayed / device | "
      "I/O path |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    for r, note in sorted(calibration_rows(calib),
                          key=lambda x: (x[0]["server"], x[0]["mode"], x[0]["profile"],
                                         int(x[0]["rep"]))):
        cal = note["calibrate"]
        arrays = "; ".join(f"{k}: {numbers_text(v)}" for k, v in cal.items()
                           if isinstance(v, list) and not k.startswith("round_"))
        thr = "; ".join(f"{w} {v['settings_threshold']} → {v['calibrated_threshold']}"
                        for w, v in note["workloads"].items())
        p(f"| {r['server']} | {r['mode']} | {r['profile']} | {r['rep']} | "
          f"{float(r['ms']) / 1000:.1f} | {cal.get('rounds', '?')} | {arrays} | "
          f"{cal.get('cpu_page_us', 0):.2f} + {cal.get('cpu_tuple_us', 0):.3f} | {thr} | "
          f"{r['reads']} / {r['penalised']} / {r['uncached']} | {cal.get('io_path', '?')} |")
    p("")
    p("The autotuner's costs after each calibration, per workload's table (in "
      "explain_threshold()'s unit): [runs.csv](runs.csv), phase calib, the note's "
      "'workloads'.\n")


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


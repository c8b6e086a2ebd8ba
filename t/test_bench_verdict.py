"""make bench's bookkeeping and verdict on made-up rows (no server): the
plan's points, scope, paired ratios, the adaptive repetitions, the ranking
of every column across rows and the criteria of bench/vacbench/stats.py."""

import csv
import json
import math
import statistics

import pytest

from bench import replay
from bench.vacbench import harness, plan, profiles, report, report_verdict, stats, store

G = ("18-patched", "direct", "latency")


def rows_for(row, times, same_as=None):
    """csv rows; auto (and auto-settings) read what same_as[col] reads."""
    out = []
    for col, ms in times.items():
        work = (same_as or {}).get(col, col)
        for rep, x in enumerate(ms):
            out.append(dict(phase="sweep", server=row[0], mode=row[1], profile=row[2],
                            workload=row[3], frac=str(row[4]), rep=str(rep), threshold=col,
                            ms=str(x), scanned=str(100 + 10 * stats.thr_key(work)[1]
                                                   + stats.thr_key(work)[0]),
                            reads=str(50 + stats.thr_key(work)[1]), penalised="0"))
    return out


def data(rows):
    return stats.medians(rows), stats.per_rep(rows)


def test_paired_ratio_and_judge():
    """auto / best paired by repetition, with one-sided 95 % t-bounds."""
    row = (*G, "uniform", 2e-4)
    reps = {(*row, "auto"): {"0": 120.0, "1": 300.0, "2": 180.0},
            (*row, "8"): {"0": 100.0, "1": 200.0, "2": 100.0, "3": 50.0}}
    n, lo, gm, hi = stats.paired_ratio(reps, row, "auto", "8")
    lr = [math.log(1.2), math.log(1.5), math.log(1.8)]
    m = sum(lr) / 3
    # Student's t, one-sided 95 %, 2 df: t / sqrt(2 + t^2) = 0.9 there
    t2 = math.sqrt(2 * 0.81 / 0.19)
    h = t2 * statistics.stdev(lr) / math.sqrt(3)
    assert n == 3      # repetition 3 has no auto: not a pair
    assert math.isclose(gm, (1.2 * 1.5 * 1.8) ** (1 / 3))
    assert math.isclose(lo, math.exp(m - h)) and math.isclose(hi, math.exp(m + h))
    assert stats.judge((n, lo, gm, hi), 1.10) == "undecided"
    assert stats.judge((3, 1.2, 1.3, 1.4), 1.10) == "above"
    assert stats.judge((3, 0.9, 1.0, 1.1), 1.10) == "within"
    assert stats.judge(None, 1.10) == "-"
    assert stats.judge(None, 1.00, same=True) == "same work"
    assert stats.paired_ratio(reps, row, "auto", "16") is None
    # 1 df is the Cauchy distribution; 11 lies between two tabulated (1.812, 1.782)
    assert math.isclose(stats.t95(1), math.tan(0.45 * math.pi))
    assert abs(stats.t95(11) - 1.796) < 5e-4


def test_blind_best():
    """The best fixed threshold chosen on the other repetitions, timed on
    the one left out: 1 is best on repetitions 0 and 1 alone, slow on 2."""
    row = (*G, "uniform", 1e-3)
    med, reps = data(rows_for(row, {"1": [10, 10, 30], "2": [12, 12, 12], "32": [40, 40, 40]}))
    # left out 0 or 1: 2 (median 12 against 1's 20), timed 12; left out 2:
    # 1 (10 against 12), timed 30; median 12 over 1's median 10
    assert math.isclose(stats.blind_best(med, reps, row), 1.2)
    med, reps = data(rows_for(row, {"1": [10, 11, 12], "2": [20, 20, 20], "32": [40, 40, 40]}))
    assert stats.blind_best(med, reps, row) == 1.0      # 1 best whichever is left out
    med, reps = data(rows_for(row, {"1": [10, 11], "32": [40, 40]}))
    assert stats.blind_best(med, reps, row) is None     # two repetitions cannot


def test_chosen_in_fixed():
    """Auto's choices timed in the fixed columns: the threshold each auto
    VACUUM reported, timed in that column in the same repetition; not
    the auto column's own time, and not repetitions whose two thresholds
    differ."""
    row = (*G, "uniform", 1e-3)
    rows = rows_for(row, {"1": [30, 31, 29], "8": [20, 22, 18], "32": [40, 42, 41],
                          "auto": [26, 27, 25]}, same_as={"auto": "8"})
    notes = {"0": "8/8", "1": "8/8", "2": "32/8"}
    for r in rows:
        if r["threshold"] == "auto":
            r["note"] = f"calibrated threshold 8; skip thresholds {notes[r['rep']]}"
    used = stats.auto_used(rows)
    assert used == {row: {"0": "8", "1": "8"}}
    med, reps = data(rows)
    # 8 measured 20 and 22 in repetitions 0 and 1: median 21 over 8's median 20
    assert math.isclose(stats.chosen_in_fixed(med, reps, row, used[row]), 1.05)
    assert math.isclose(stats.column_ratios(med, [row], "auto")[row], 1.3)
    assert stats.chosen_in_fixed(med, reps, row, {}) is None


def test_score_and_adaptive_repetitions():
    """A row is decided when both paired comparisons are; otherwise it gets
    another repetition until the size's cap."""
    cfg = dict(reps=3, max_reps=6)
    row = (*G, "uniform", 1e-3)
    # auto reads what 8 reads (the best); 32 clearly slower: decided
    times = {"1": [30, 31, 29], "8": [20, 21, 19], "32": [40, 42, 41],
             "auto": [20.5, 20, 19.5], "auto-settings": [30, 30, 30]}
    med, reps = data(rows_for(row, times, {"auto": "8", "auto-settings": "1"}))
    sc = stats.score_row(med, reps, row)
    assert sc["best_t"] == "8" and sc["same_best"] and not sc["same_stock"]
    assert sc["twins"] == ["8"] and sc["settings_vs_best"] == 30 / 20
    assert stats.verdicts(sc) == ("same work", "within")
    assert stats.decided(sc)
    assert not stats.wants_more(med, reps, row, 3, cfg)
    # auto as fast as 32 give or take noise, not the same work: undecided
    times = {"1": [30, 31, 29], "8": [50, 50, 50], "32": [20, 22, 21],
             "auto": [19, 23, 21.5], "auto-settings": [30, 30, 30]}
    med, reps = data(rows_for(row, times, {"auto": "16"}))
    sc = stats.score_row(med, reps, row)
    assert sc["best_t"] == "32" and stats.verdicts(sc)[1] == "undecided"
    assert stats.wants_more(med, reps, row, 3, cfg)
    assert not stats.wants_more(med, reps, row, 6, cfg)      # the cap
    assert not stats.wants_more(med, reps, row, 2, cfg)      # base repetitions first
    # the cap defaults to MAX_REPS_FACTOR x reps
    assert stats.max_reps({"reps": 4}) == 4 * stats.MAX_REPS_FACTOR
    # clearly above stock: decided
    times["auto"] = [40, 44, 42]
    med, reps = data(rows_for(row, times, {"auto": "16"}))
    assert stats.verdicts(stats.score_row(med, reps, row))[1] == "above"
    assert not stats.wants_more(med, reps, row, 3, cfg)
    # a row without 32 or auto is not scored (nor repeated)
    del times["auto"]
    med, reps = data(rows_for(row, times))
    assert stats.score_row(med, reps, row) is None and not stats.decided(None)


def two_groups(auto_ms):
    """Rows where 1 is best (latency) and 32 is best (seek); auto's times
    per row given."""
    out = []
    specs = [((*G, "uniform", 1e-3), {"1": 10, "8": 15, "32": 30}),
             ((*G, "clustered", 0.1), {"1": 12, "8": 12.6, "32": 20}),
             (("18-patched", "direct", "seek", "uniform", 1e-3), {"1": 40, "8": 30, "32": 20}),
             (("18-patched", "direct", "seek", "clustered", 0.1), {"1": 50, "8": 25, "32": 24})]
    for (row, fixed), a in zip(specs, auto_ms):
        times = {t: [ms, ms * 1.01, ms * 0.99] for t, ms in fixed.items()}
        times["auto"] = [a, a * 1.01, a * 0.99]
        times["auto-settings"] = [fixed["8"]] * 3
        out += rows_for(row, times)
    return out


def test_ranking_and_criteria():
    """Across rows, every column's geometric mean of time over the row's
    best fixed time, ranked; the per-group and overall criteria."""
    rows = two_groups([10, 12, 20, 24])           # auto always matches the best
    med, reps = data(rows)
    allrows = stats.rows_of(med)
    rank = stats.ranking(med, allrows)
    assert [c for c, *_ in rank][0] == "auto" and rank[0][1] == pytest.approx(1.0)
    by = {c: (gm, worst, n) for c, gm, worst, n in rank}
    assert by["32"][1] == 3.0 and by["32"][2] == 4
    assert by["8"][0] == pytest.approx((1.5 * 1.05 * 1.5 * 25 / 24) ** 0.25)
    assert stats.best_constant(rank)[0] == "8"
    ov = stats.overall_verdict(med, allrows)
    assert ov["beats_every_fixed"] and ov["constant"][0] == "8"
    assert ov["vs_constant"][2] < 1      # auto faster than 8 across rows
    gv = stats.group_verdict(med, reps, [r for r in allrows if r[:3] == G])
    assert gv["best_met"] and gv["stock_met"] and gv["rows"] == 2
    assert gv["auto_vs_best"] == pytest.approx(1.0)
    assert gv["constant"][0] == "1" and gv["above_stock"] == []
    # auto 10 % over the best on every row: criteria missed; 8 does better
    # over all rows than auto where auto is 60 % off on the seek rows
    med, reps = data(two_groups([11, 13.2, 32, 38.4]))
    gv = stats.group_verdict(med, reps, [r for r in stats.rows_of(med) if r[:3] == G])
    assert gv["auto_vs_best"] == pytest.approx(1.1) and not gv["best_met"]
    assert gv["stock_met"]
    seek = [r for r in stats.rows_of(med) if r[2] == "seek"]
    gv = stats.group_verdict(med, reps, seek)
    assert [s["row"] for s in gv["above_stock"]] == seek and not gv["stock_met"]
    ov = stats.overall_verdict(med, stats.rows_of(med))
    assert not ov["beats_every_fixed"]


def test_a_long_calibrations_note_reads_back(tmp_path):
    """A calibration's note with many rounds' figures, past the csv
    module's default limit on a field (128 kB), is read back by a resumed
    run and by the replay."""
    csv.field_size_limit(131072)           # the default, whatever ran before
    rounds = 140                           # 60 seconds on the benchmark machine's disk
    cal = {"rounds": rounds, "round_read_us": [100.123456789] * (8 * 6 * rounds * 4)}
    note = json.dumps({"calibrate": cal})
    assert len(note) > 131072
    res = store.Results(tmp_path / "runs.csv")
    res.add(phase="calib", server="18-patched", major=18, mode="direct", profile="disk",
            rep=0, ms=1.0, note=note)
    res.close()
    again = store.Results(tmp_path / "runs.csv")
    assert json.loads(again.rows[0]["note"])["calibrate"]["rounds"] == rounds
    again.close()
    csv.field_size_limit(131072)
    assert replay.load(tmp_path) is not None


def test_plan_points_and_scope(tmp_path):
    """Every planned point once; groups by major (latency-serial on 18
    only); pending drops what runs.csv has; scope restricts and is kept."""
    cfg = dict(plan.SIZES["default"])
    p18, p15 = plan.base_points(cfg, "18-patched"), plan.base_points(cfg, "15-patched")
    assert len(set(p18)) == len(p18) and len(set(p15)) == len(p15)
    rows = sum(len(cfg["fracs"][w]) for w in cfg["workloads"])
    per_group = rows * cfg["reps"] * len(cfg["thresholds"])
    assert len(p18) == 2 * len(cfg["profiles"]) * per_group
    assert len(p15) == (len(cfg["profiles"]) - 1) * per_group
    assert {p[1] for p in p15} == set(cfg["profiles"]) - {"latency-serial"}
    assert [g for g in plan.groups_of(cfg, 15)] == [("buffered", p) for p in cfg["profiles"]
                                                    if p != "latency-serial"]
    # each repetition of a row has every column once, in a shuffled order
    one = [p[5] for p in p18 if p[:5] == ("direct", "disk", "uniform", 1e-3, 0)]
    assert sorted(one) == sorted(cfg["thresholds"])
    # smoke: some workloads under one profile only
    smoke = plan.SIZES["smoke"]
    assert {p[2] for p in plan.base_points(smoke, "18-patched") if p[1] == "seek"} == {"uniform"}
    # pending: what runs.csv lacks
    res = store.Results(tmp_path / "runs.csv")
    srv = type("S", (), {"name": "18-patched", "major": 18, "variant": "patched"})()
    todo = plan.Plan(cfg, res, [srv])
    assert todo.pending(srv) == p18
    for pt in p18[:5]:
        res.add(**todo.key(srv, *pt), ms=1.0)
    assert todo.pending(srv) == p18[5:]
    assert todo.pending(srv, ("direct", "disk")) == [x for x in p18[5:] if x[:2] ==
                                                     ("direct", "disk")]
    with pytest.raises(ValueError):
        res.add(**todo.key(srv, *p18[0]), ms=1.0)           # never twice
    assert plan.missing_sweep_points(res.rows, cfg, ["18-patched"])[
        "18-patched direct/disk"] == per_group - 5
    res.close()


def test_rep_progress():
    """A resumed row continues at its first incomplete repetition."""
    thr = ("1", "32", "auto")
    rows = [dict(rep=str(r), threshold=t) for r in (0, 1, 3) for t in thr]
    rows += [dict(rep="2", threshold="1")]
    assert plan.rep_progress(rows, thr) == (3, 2)
    assert plan.rep_progress(rows + [dict(rep="2", threshold=t) for t in thr[1:]], thr) == (4, 4)
    assert plan.rep_progress([], thr) == (0, 0)


def test_scope(tmp_path):
    full = plan.SIZES["full"]
    cfg = dict(full)
    assert plan.apply_scope(cfg, tmp_path) == {} and cfg["fracs"] == full["fracs"]
    assert not (tmp_path / "scope.txt").exists()
    plan.apply_scope(cfg, tmp_path, profiles="latency,seek", fracs="uniform:1e-3,0.1",
                     reps="4", workloads="uniform,clustered")
    assert cfg["profiles"] == ("seek", "latency")
    assert cfg["workloads"] == ("uniform", "clustered")
    assert cfg["fracs"]["uniform"] == (1e-3,) and cfg["fracs"]["clustered"] == (0.1,)
    assert cfg["reps"] == 4 and stats.max_reps(cfg) == 4 * stats.MAX_REPS_FACTOR
    again = dict(full)      # a resumed run or --report-only gets the same scope
    assert set(plan.apply_scope(again, tmp_path)) == {"profiles", "fracs", "reps", "workloads"}
    assert again["fracs"] == cfg["fracs"] and again["profiles"] == cfg["profiles"]
    # the default size runs two workloads; --workloads may add the others
    dflt = dict(plan.SIZES["default"])
    (tmp_path / "w").mkdir()
    plan.apply_scope(dflt, tmp_path / "w", workloads="wide,pgbench")
    assert dflt["workloads"] == ("wide", "pgbench")
    assert plan.base_points(dflt, "15-patched")[0][2] in ("wide", "pgbench")
    more = dict(full)
    (tmp_path / "r").mkdir()
    plan.apply_scope(more, tmp_path / "r", reps="5,11")
    assert more["reps"] == 5 and stats.max_reps(more) == 11
    # storage and settings the profiles do not describe, kept for --report-only
    held = dict(dflt)
    (tmp_path / "h").mkdir()
    plan.apply_scope(held, tmp_path / "h", profiles="latency,iops",
                     emulation="latency.latency_us=200,iops.iops=1000",
                     settings="latency.maintenance_io_concurrency=4")
    assert profiles.profile_env("latency", held)["SLOWREAD_LATENCY_US"] == "200"
    assert profiles.profile_env("latency", held)["SLOWREAD_MBPS"] == "250"
    assert profiles.profile_env("iops", held)["SLOWREAD_IOPS"] == "1000"
    assert profiles.profile_env("iops", plan.SIZES["default"])["SLOWREAD_IOPS"] == "3000"
    conf = profiles.profile_settings(18, "direct", "latency", held)
    assert conf["maintenance_io_concurrency"] == "4" and conf["random_page_cost"] == "1.1"
    assert "maintenance_io_concurrency" not in profiles.profile_settings(18, "direct", "iops",
                                                                          held)
    again = dict(plan.SIZES["default"])
    plan.apply_scope(again, tmp_path / "h")
    assert again["emulation_of"] == held["emulation_of"]
    assert again["settings_of"] == held["settings_of"]
    assert "other than the profiles' for iops, latency" in report.title("default", held, [])
    assert "other than" not in report.title("default", dflt, [])
    for kw in (dict(profiles="fast"), dict(profiles=""), dict(fracs="0.3"), dict(fracs="x"),
               dict(fracs="wide:1e-3"), dict(workloads="tpcc"), dict(reps="0"),
               dict(reps="5,x"), dict(reps="1,2,3"), dict(reps="5,4"),
               dict(emulation="latency.iops=1000"), dict(emulation="latency.latency_us=0"),
               dict(emulation="latency.latency_us=x"), dict(emulation="disk.x=1"),
               dict(emulation="fast.latency_us=1"), dict(emulation="latency_us=1"),
               dict(settings="latency.x='1'"), dict(settings="fast.x=1"),
               dict(emulation="latency.latency_us=inf"), dict(emulation=""),
               dict(profiles="block-latency,disk")):
        (tmp_path / "bad").mkdir(exist_ok=True)
        with pytest.raises(ValueError):
            plan.apply_scope(dict(full), tmp_path / "bad", **kw)


def test_block_device_profile(tmp_path):
    """block-latency runs alone (its device holds the clusters); slowread
    only counts under it, its parameters go to bench/slowdev.c."""
    cfg = dict(plan.SIZES["default"])
    assert "block-latency" not in cfg["profiles"]
    plan.apply_scope(cfg, tmp_path, profiles="block-latency",
                     emulation="block-latency.latency_us=200")
    assert cfg["profiles"] == ("block-latency",)
    env = profiles.profile_env("block-latency", cfg)
    assert env == {"SLOWREAD_MODE": "count"}
    assert profiles.emulation("block-latency", cfg) == {"latency_us": "200", "mbps": 250}


def test_charged_spread():
    """The share of a buffered VACUUM's reads the emulation charged, least
    and most over a cell's repetitions; direct groups and other profiles
    left out; the report's sentence names the widest cell."""
    def r(mode, profile, rep, penalised, reads, col="4"):
        return dict(phase="sweep", server="18-patched", mode=mode, profile=profile,
                    workload="uniform", frac="0.001", rep=str(rep), threshold=col,
                    penalised=str(penalised), reads=str(reads))
    sweep = [r("buffered", "latency", 0, 760, 764), r("buffered", "latency", 1, 5, 745),
             r("buffered", "latency", 0, 500, 1000, "8"),
             r("buffered", "latency", 1, 400, 1000, "8"),
             r("direct", "latency", 0, 764, 764), r("direct", "latency", 1, 5, 745),
             r("buffered", "seek", 0, 760, 764), r("buffered", "seek", 1, 5, 745),
             r("buffered", "latency", 0, 3, 10, "16")]
    got = stats.charged_spread(sweep, ["latency"])
    key = ("18-patched", "buffered", "latency", "uniform", 0.001)
    assert set(got) == {(*key, "4"), (*key, "8")}
    assert got[(*key, "4")] == (5 / 745, 760 / 764) and got[(*key, "8")] == (0.4, 0.5)
    text = report_verdict.charged_text(sweep, ["latency"])
    assert "in 1 of 2 cells" in text and "uniform 0.001 at 4: 0.7 % to 99.5 %" in text
    assert report_verdict.charged_text(sweep, ["iops"]) == ""


def test_calibration_note():
    """A calibration row's note: calibrate()'s figures, the cost-based
    delay's settings and, per workload, the thresholds before and after."""
    cal = dict(rounds=3, io_path="direct reads", densities=[0.01, 0.04, 0.15, 0.4],
               read_us=[[250.0] * 6] * 4, cpu_page_us=0.1, cpu_tuple_us=0.02)
    explained = {"uniform": dict(all_frozen_threshold=4, all_visible_threshold=4,
                                 cost_source="calibration", tuples_per_page=96.0,
                                 settings_skip_cost=11.0, map_density=0.05,
                                 costs=[210.0, 190.0, 180.0, 185.0, 200.0, 230.0],
                                 io_method="worker")}
    delay = dict(vacuum_cost_delay=2.0, vacuum_cost_limit=200.0, vacuum_cost_page_miss=2.0,
                 vacuum_cost_page_hit=1.0)
    note = json.loads(harness.calibration_note(cal, {"uniform": (10, 10)}, explained, delay))
    assert note["calibrate"] == cal
    assert note["cost_delay"] == delay
    assert note["workloads"]["uniform"]["settings_threshold"] == 10
    kept = note["workloads"]["uniform"]
    assert kept["costs"][2] == 180.0 and kept["map_density"] == 0.05
    assert kept["settings_skip_cost"] == 11.0
    assert "io_method" not in kept     # inputs: not kept
    assert stats.calibration_threshold(note, "uniform") == 4
    assert stats.calibration_threshold(note, "wide") is None


def test_thresholds_used_per_row():
    """The lost rows' 'auto used' is the row's own: its fraction only."""
    def r(frac, t):
        return dict(server=G[0], mode=G[1], profile=G[2], workload="uniform", frac=str(frac),
                    threshold="auto", note=f"calibrated threshold {t}; skip thresholds {t}/{t}")
    sweep = [r(0.00025, 16), r(0.00025, 16), r(0.001, 8), r(0.001, 32)]
    assert report_verdict.used(sweep, G, "auto", "uniform", 0.00025) == "16"
    assert report_verdict.used(sweep, G, "auto", "uniform", 0.001) == "8/32"
    assert report_verdict.used(sweep, G, "auto", "uniform") == "8/16/32"


def test_cost_based_delay_stated():
    """The report says whether the VACUUMs slept as autovacuum does, and
    under which profiles (--settings PROFILE.vacuum_cost_delay)."""
    def limits(settings_of):
        cfg = dict(plan.SIZES["default"], profiles=("disk", "seek"), settings_of=settings_of)
        lines = []
        report_verdict.limits_section(lines.append, "default", cfg, {}, {}, [], [], [])
        [line] = [x for x in lines if x.startswith("- **Cost-based delay**")]
        return line
    assert "none: manual VACUUMs" in limits({})
    assert "none: manual VACUUMs" in limits({"disk": {"vacuum_cost_delay": "0"}})
    line = limits({"seek": {"vacuum_cost_delay": "2"}})
    assert "under seek (2 ms) every VACUUM slept" in line and "disk" not in line
    line = limits({"seek": {"vacuum_cost_delay": "500us"}, "disk": {"vacuum_cost_delay": "0ms"}})
    assert "under seek (500 us) every VACUUM slept" in line and "disk" not in line

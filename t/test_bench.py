"""make bench's driver runs end to end at its smoke size (a tiny table, a
few points; CI never runs the real benchmark), writes every planned
measurement, what it measured is consistent with what it set up, and a
second run with the same result directory resumes instead of measuring
again."""

import math
import re
import statistics
import subprocess
import types

import pytest

from bench.vacbench import plan, report_sweep, stats, store
from pgkit import TOP


def read_rows(out):
    return store.read_rows(out / "runs.csv")


@pytest.mark.patched
def test_bench_smoke(server, ext_build, tmp_path):
    out = tmp_path / "results"
    cmd = ["/usr/bin/python3", "-m", "bench.vacbench", "--size", "smoke",
           "--installed", "--out", str(out), "--server", f"{server.name}={server.prefix}"]
    res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=TOP)
    print(res.stdout)
    assert res.returncode == 0
    rows = read_rows(out)
    cfg = plan.SIZES["smoke"]
    groups = [(m, p) for m in cfg["io_modes"][server.major] for p in cfg["profiles"]]
    # progress: the plan counted every point the run measured (calibration too)
    steps = [tuple(map(int, m)) for m in re.findall(r": point (\d+)/(\d+) ", res.stdout)]
    assert steps and all(i <= n for i, n in steps) and steps[-1][0] == steps[-1][1], steps[-3:]

    sweep = [r for r in rows if r["phase"] == "sweep"]
    want = {(m, p, str(f), str(t)) for m, p in groups for f in cfg["fracs"]
            for t in cfg["thresholds"]}
    assert {(r["mode"], r["profile"], r["frac"], r["threshold"]) for r in sweep} == want
    for r in sweep:
        assert int(r["rel_pages"]) == cfg["sweep_pages"]
        assert float(r["ms"]) > 0
        if r["threshold"] == "1":
            # threshold 1 skips every all-frozen page but the last: it reads
            # exactly the modified pages, and the last page if unmodified
            modified = int(r["note"].split(" rows on ")[1].split()[0])
            assert int(r["scanned"]) in (modified, modified + 1), r
        if r["threshold"] == "32":
            same = {o["threshold"]: int(o["scanned"]) for o in sweep if
                    (o["mode"], o["profile"], o["frac"]) == (r["mode"], r["profile"], r["frac"])}
            assert same["1"] <= int(r["scanned"])
            # the autotuner's threshold is at most stock's
            assert same["1"] <= same["auto"] <= int(r["scanned"])

    # each profile is calibrated once (calib_reps runs of each kind), with
    # direct I/O where the server has it
    calib = [r for r in rows if r["phase"] == "calib"]
    modes = cfg["io_modes"][server.major]
    calib_mode = "direct" if "direct" in modes else modes[0]
    assert sorted((r["mode"], r["profile"], r["threshold"], r["rep"]) for r in calib) == \
        sorted((calib_mode, p, k, str(i)) for p in cfg["profiles"] for k in ("seq", "rand")
               for i in range(cfg["calib_reps"]))
    # slowread: delays reads only under the slow profile, and there it does
    for r in calib:
        if r["profile"] == "slow" and r["threshold"] == "rand":
            # every sampled page is a separate read; most do not continue
            # the previous one
            assert int(r["penalised"]) >= cfg["calib_pages"] // 2, r
        if r["profile"] == "asis":
            assert int(r["penalised"]) == 0, r
            assert int(r["reads"]) > 0, r

    pgb = [r for r in rows if r["phase"] == "pgbench"]
    assert {(r["frac"], r["threshold"]) for r in pgb} == \
        {(str(f), str(t)) for f in cfg["pgbench_fracs"] for t in cfg["thresholds"]}
    cached = [r for r in rows if r["phase"] == "cached"]
    assert len(cached) == cfg["cached_reps"]

    report = (out / "report.md").read_text()
    assert "SMOKE RUN" in report
    # every planned point of this one server was measured
    assert (out / "servers.txt").read_text().split() == [server.name]
    assert "INCOMPLETE" not in report and "**Incomplete**" not in report
    # the load during the run, sampled when it started and ended
    assert [line.split()[0] for line in (out / "load.txt").read_text().splitlines()] == \
        ["start", "end"]
    assert "Machine load during the measurements (load average" in report
    for m, p in groups:
        assert f"### {server.name}, {m}, {p}" in report        # score table
        assert (out / f"sweep-{server.name}-{m}-{p}.png").stat().st_size > 0

    # the same command again resumes: everything is in runs.csv already
    res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=TOP)
    print(res.stdout)
    assert res.returncode == 0
    assert read_rows(out) == rows


def test_report_helpers():
    """The report's bookkeeping, on made-up rows (no server needed)."""
    full, default = plan.SIZES["full"], plan.SIZES["default"]
    assert [plan.reps_of(full, f) for f in (1e-6, 1e-4, 2e-4, 1e-2)] == [7, 7, 3, 3]
    assert {plan.reps_of(default, f) for f in default["fracs"]} == {default["reps"]}

    # medians: (ms, scanned, n, penalised, read calls)
    g = ("18-patched", "direct", "asis")
    med = {(*g, 1e-3, "1"): (100.0, 50, 3, 0, 40), (*g, 1e-3, "8"): (90.0, 60, 3, 0, 30),
           (*g, 1e-3, "16"): (96.0, 60, 3, 0, 31), (*g, 1e-3, "32"): (150.0, 200, 3, 0, 35),
           (*g, 1e-3, "auto"): (99.0, 60, 3, 0, 30)}
    [row] = stats.score_rows(med, g)
    assert row["best_t"] == "8" and row["twins"] == ["8"]   # 16: same pages, more reads
    assert row["vs_best"] == 99.0 / 90.0 and row["vs_stock"] == 99.0 / 150.0
    assert row["pages_vs_best"] == 1.0 and row["reads_vs_best"] == 1.0
    # auto reading a little more than the best (within 5 %), then much more
    med[(*g, 1e-3, "auto")] = (120.0, 62, 3, 0, 31)
    [row] = stats.score_rows(med, g)
    assert row["twins"] == [] and stats.similar_work(row)
    assert row["pages_vs_best"] == 62 / 60 and row["reads_vs_best"] == 31 / 30
    med[(*g, 1e-3, "auto")] = (120.0, 60, 3, 0, 40)
    [row] = stats.score_rows(med, g)
    assert not stats.similar_work(row)   # same pages, a third more read calls
    # fixed thresholds scored like auto: a second row where 16 is best
    med.update({(*g, 1e-4, "1"): (30.0, 5, 3, 0, 5), (*g, 1e-4, "8"): (24.0, 6, 3, 0, 4),
                (*g, 1e-4, "16"): (20.0, 6, 3, 0, 4), (*g, 1e-4, "32"): (40.0, 9, 3, 0, 4),
                (*g, 1e-4, "auto"): (25.0, 6, 3, 0, 4)})
    fs = stats.fixed_scores(med, g)
    assert fs["8"][0] == 1.2 and math.isclose(fs["8"][1], math.sqrt(1.2))
    assert fs["1"][0] == 1.5 and math.isclose(fs["1"][1], math.sqrt(100 / 90 * 1.5))
    assert fs["16"][0] == 96 / 90 and stats.best_constant(fs) == "16"

    # random_page_cost from repeated calibration runs: ratio of the medians,
    # 0.31 / 0.12 = 2.58 -> 2.6 (one decimal); the outlier 0.5 does not count
    calib = [dict(phase="calib", server="18-patched", mode="direct", profile="slow",
                  threshold=k, ms=str(ms), scanned="100")
             for k, ms in (("seq", 10), ("rand", 31), ("seq", 12), ("rand", 30),
                           ("seq", 50), ("rand", 33))]
    assert stats.calibrated_rpc(calib, "15-patched", "buffered", "slow") == 2.6
    assert stats.calibrated_rpc(calib, "18-patched", "direct", "asis") is None

    # one server's smoke sweep, one point missing
    smoke = plan.SIZES["smoke"]
    rows = [dict(phase="sweep", server="18-patched", mode=m, profile=p, frac=str(f),
                 rep=str(r), threshold=str(t))
            for m in smoke["io_modes"][18] for p in smoke["profiles"] for f in smoke["fracs"]
            for r in range(smoke["reps"]) for t in smoke["thresholds"]]
    assert plan.missing_sweep_points(rows, smoke, ["18-patched"]) == {}
    assert plan.missing_sweep_points(rows[1:], smoke, []) == \
        {f"18-patched {rows[0]['mode']}/{rows[0]['profile']}": 1}
    # a planned server without rows is missing all of its points
    n15 = len(smoke["profiles"]) * len(smoke["fracs"]) * smoke["reps"] * len(smoke["thresholds"])
    assert plan.missing_sweep_points(rows, smoke, ["15-patched"]) == \
        {f"15-patched buffered/{p}": n15 // len(smoke["profiles"]) for p in smoke["profiles"]}


def test_paired_ratio():
    """auto / best paired by repetition, with one-sided 95 % t-bounds."""
    g = ("15-patched", "buffered", "slow")
    # three repetitions; auto's time over 8's is 1.2, 1.5, 1.8 in them
    reps = {(*g, 2e-4, "auto"): {"0": 120.0, "1": 300.0, "2": 180.0},
            (*g, 2e-4, "8"): {"0": 100.0, "1": 200.0, "2": 100.0, "3": 50.0}}
    n, lo, gm, hi = stats.paired_ratio(reps, g, 2e-4, "auto", "8")
    lr = [math.log(1.2), math.log(1.5), math.log(1.8)]
    m = sum(lr) / 3
    sd = math.sqrt(sum((x - m) ** 2 for x in lr) / 2)
    h = 2.920 * sd / math.sqrt(3)      # t, one-sided 95 %, 2 degrees of freedom
    assert n == 3   # repetition 3 has no auto: not a pair
    assert math.isclose(gm, math.exp(m)) and math.isclose(gm, (1.2 * 1.5 * 1.8) ** (1 / 3))
    assert math.isclose(lo, math.exp(m - h)) and math.isclose(hi, math.exp(m + h))
    assert stats.judge((n, lo, gm, hi), 1.10) == "undecided"   # [1.07, 2.04]
    assert stats.judge((3, 1.2, 1.3, 1.4), 1.10) == "above"
    assert stats.judge((3, 0.9, 1.0, 1.1), 1.10) == "within"
    assert stats.judge(None, 1.10) == "-"
    assert stats.paired_ratio(reps, g, 2e-4, "auto", "16") is None
    assert stats.t95(2) == 2.920 and stats.t95(11) == stats.T95[10]
    # score_rows() fills the paired columns from per_rep() of CSV rows
    rows = [dict(server=g[0], mode=g[1], profile=g[2], frac="0.0002", rep=str(r),
                 threshold=t, ms=str(ms))
            for r, times in enumerate(((120, 100, 150), (300, 200, 330), (180, 100, 200)))
            for t, ms in zip(("auto", "8", "32"), times)]
    med = {(*g, 2e-4, t): (statistics.median(float(r["ms"]) for r in rows if r["threshold"] == t),
                           10, 3, 0, 10) for t in ("auto", "8", "32")}
    [row] = stats.score_rows(med, g, stats.per_rep(rows))
    assert row["best_t"] == "8" and row["paired_best"] == (n, lo, gm, hi)
    assert math.isclose(row["paired_stock"][2], (120 / 150 * 300 / 330 * 180 / 200) ** (1 / 3))
    # all three read 10 pages in 10 read calls: one VACUUM timed three ways,
    # judged 'same work' whatever the bounds say
    assert row["same_best"] and row["same_stock"]
    assert stats.judge(row["paired_best"], 1.10, row["same_best"]) == "same work"
    assert "same work as stock on 1 row (0.0002), above on 0 rows" in \
        report_sweep.paired_summary([row], "paired_stock", 1.00, "stock")
    # 32 reads more pages: its verdict is the bounds' again
    med[(*g, 2e-4, "32")] = (150.0, 30, 3, 0, 10)
    [row] = stats.score_rows(med, g, stats.per_rep(rows))
    assert row["same_best"] and not row["same_stock"]
    assert stats.judge(row["paired_stock"], 1.00, row["same_stock"]) == "within"


def test_scope(tmp_path):
    """--profiles / --fracs restrict a size and are remembered by the
    result directory; bad values are refused."""
    full = plan.SIZES["full"]
    cfg = dict(full)
    assert plan.apply_scope(cfg, tmp_path) == {} and cfg == full
    assert not (tmp_path / "scope.txt").exists()
    plan.apply_scope(cfg, tmp_path, "slow", "1e-06,0.001")
    assert cfg["profiles"] == ("slow",) and cfg["pgbench_profiles"] == ("slow",)
    assert cfg["fracs"] == (1e-6, 1e-3)
    # a later run without options (resume, --report-only) gets the same scope
    again = dict(full)
    assert plan.apply_scope(again, tmp_path) == {"profiles": "slow", "fracs": "1e-06,0.001"}
    assert again["fracs"] == (1e-6, 1e-3) and again["profiles"] == ("slow",)
    for profiles, fracs in (("fast", None), ("", None), (None, "0.3"), (None, "x")):
        with pytest.raises(ValueError):
            plan.apply_scope(dict(full), tmp_path / "other", profiles, fracs)
    # more repetitions: N for every fraction, M for those the size repeats more
    more = dict(full)
    (tmp_path / "reps").mkdir()
    plan.apply_scope(more, tmp_path / "reps", reps="5,11")
    assert [plan.reps_of(more, f) for f in (1e-6, 1e-4, 2e-4, 1e-2)] == [11, 11, 5, 5]
    resumed = dict(full)
    assert plan.apply_scope(resumed, tmp_path / "reps") == {"reps": "5,11"}
    assert plan.reps_of(resumed, 1e-5) == 11 and plan.reps_of(resumed, 1e-3) == 5
    for reps in ("0", "5,x", "1,2,3", ""):
        with pytest.raises(ValueError):
            plan.apply_scope(dict(full), tmp_path / "bad", reps=reps)
    with pytest.raises(ValueError):
        plan.apply_scope(dict(plan.SIZES["default"]), tmp_path / "bad", reps="2,4")


def test_pgbench_needs_calibration():
    """pgbench alone in a directory without a calibration of its profile
    would run auto at the default costs: the driver refuses it."""
    full = plan.SIZES["full"]
    # 18.6's slow profile measured with direct I/O: that figure serves every
    # server and I/O mode (calibrated_rpc())
    calib = [dict(phase="calib", profile="slow", mode="direct", server="18-patched",
                  threshold=kind, ms=ms, scanned="100") for kind, ms in (("seq", 10), ("rand", 30))]
    servers = ["15-patched", "18-patched"]
    assert plan.pgbench_uncalibrated([], full, ["pgbench"], servers) == ["asis", "slow"]
    assert plan.pgbench_uncalibrated(calib, full, ["pgbench"], servers) == ["asis"]
    assert plan.pgbench_uncalibrated([], full, ["sweep", "pgbench"], servers) == []
    assert plan.pgbench_uncalibrated([], full, ["sweep", "cached"], servers) == []
    assert plan.pgbench_uncalibrated([], full, ["pgbench"], []) == []
    only_slow = dict(full, profiles=("slow",))
    assert plan.pgbench_uncalibrated([], only_slow, ["sweep", "pgbench"], servers) == ["asis"]
    # a buffered calibration of 15.18 alone does not serve 18.6
    calib15 = [dict(r, server="15-patched", mode="buffered") for r in calib]
    assert plan.pgbench_uncalibrated(calib15, full, ["pgbench"], ["15-patched"]) == ["asis"]
    assert plan.pgbench_uncalibrated(calib15, full, ["pgbench"], servers) == ["asis", "slow"]


def test_pgbench_plan(tmp_path):
    """pgbench's points: every profile, repetition, fraction and threshold
    once, repetition by repetition; repetition 0 in the order the one-repetition
    runs used (so their rows stay repetition 0 of a resumed run), a
    repetition's thresholds in an order of their own; measured points drop out."""
    cfg = dict(plan.SIZES["full"])
    res = store.Results(tmp_path / "runs.csv")
    todo = plan.Plan(cfg, res)
    s = types.SimpleNamespace(name="18-patched")   # pgbench_pending reads its name
    points = todo.pgbench_pending(s)
    profiles, fracs, thrs = cfg["pgbench_profiles"], cfg["pgbench_fracs"], cfg["thresholds"]
    assert cfg["pgbench_reps"] >= 3
    assert len(points) == len(set(points)) == \
        len(profiles) * cfg["pgbench_reps"] * len(fracs) * len(thrs)
    assert [(p, r) for p, r, _, _ in points] == sorted((p, r) for p, r, _, _ in points)
    for f in fracs:
        rep0 = [t for p, r, f_, t in points if (p, r, f_) == (profiles[0], 0, f)]
        assert rep0 == plan.shuffled(thrs, f)
        orders = {tuple(t for p, r, f_, t in points if (p, r, f_) == (profiles[0], rep, f))
                  for rep in range(cfg["pgbench_reps"])}
        assert len(orders) > 1
    done = points[:9]
    for p, r, f, t in done:
        res.add(phase="pgbench", server=s.name, mode="buffered", profile=p,
                pages=cfg["pgbench_scale"], frac=f, rep=r, threshold=t, ms=1.0)
    assert todo.pgbench_pending(s) == points[9:]
    res.close()

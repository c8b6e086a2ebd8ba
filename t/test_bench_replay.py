"""bench/replay.py (no server): its walk of a rebuilt map against the
independent skip rule of t/vacuum_model.py, and its transcription of the
model against the thresholds a committed run's autotuner chose."""

import csv
import json
import math
import random
from pathlib import Path

import pytest

from bench import noise_rules, replay
from bench.vacbench import store
from vacuum_model import predict

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"
# default runs of model revisions 10 (one figure per pattern), 11 (a
# file's first pages timed apart), 12 (each density's noise, Student's t)
# 13 (a calibration of one round keeps 32), 14 (eight densities) and 19
# (calibrations that write as VACUUM writes): their sweep notes say which
# threshold the autotuner chose for every repetition's map
RUNS = [RESULTS / "2026-12-02-vm-2c24g-default-rev10",
        RESULTS / "2026-12-02-vm-2c24g-default-rev11",
        RESULTS / "2026-12-02-vm-2c24g-default-rev11-2",
        RESULTS / "2026-12-02-vm-2c24g-default-rev12",
        RESULTS / "2026-12-02-vm-2c24g-default-rev13",
        RESULTS / "2026-12-02-vm-2c24g-default-rev14",
        RESULTS / "2026-12-06-vm-2c24g-default-dirty-ring"]
REV14 = RUNS[5]
# default runs of revision 20 (the stream's noise counted by the
# difference of its shares)
RUNS_20 = [RESULTS / "2026-12-06-vm-2c24g-default-shared-noise",
           RESULTS / "2026-12-06-vm-2c24g-default-shared-noise-2",
           RESULTS / "2026-12-06-vm-2c24g-default-shared-noise-3",
           RESULTS / "2026-12-06-vm-2c24g-default-rounds"]


def test_map_counts_follow_the_skip_rule():
    rng = random.Random(7)
    for _ in range(300):
        pages = rng.randint(1, 400)
        share = rng.choice((0.01, 0.05, 0.2, 0.6))
        needed = [p for p in range(pages) if rng.random() < share]
        m = replay.map_counts(needed, pages)
        # all-frozen map: needed pages not all-visible, the rest frozen
        vm = [(p not in needed, p not in needed) for p in range(pages)]
        for i, t in enumerate(replay.GAPS):
            want = predict(vm, t)
            assert m["needed"] + m["read_through"][i] == want.scanned
            assert m["read_through"][i] == want.short_runs
            read = set(needed) | {pages - 1}
            # runs of consecutive pages read, counted from the pages read
            scanned = sorted(read | {p for p in range(pages) if p not in read and
                                     run_len(read, p, pages) < t})
            runs = sum(1 for k, p in enumerate(scanned) if k == 0 or scanned[k - 1] != p - 1)
            assert m["io_runs"][i] == runs


def test_kept_maps_replay_as_rebuilt(tmp_path):
    """The maps runs.csv keeps with each measurement (its column map)
    replay a row as its rebuilt maps do, where the workload's change
    cannot be rebuilt: revision 27's default run with its uniform rows
    named pgbench's, their maps kept; without the maps they are left
    out."""
    run = RESULTS / "2026-12-07-vm-2c24g-default-delay-rev27"
    fields, rows = store.dict_rows(run / "runs.csv")
    calib, cells = replay.load(run)
    maps = {}
    for row, cols in cells.items():
        if row[3] == "uniform":
            maps[row] = replay.row_maps(calib, row, cols)[2]
    assert len(maps) == 28

    def write(keep):
        out = tmp_path / ("kept" if keep else "none")
        out.mkdir()
        with open(out / "runs.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=[*fields, "map"])
            w.writeheader()
            for r in rows:
                r = dict(r)
                if r["phase"] == "calib":
                    note = json.loads(r["note"])
                    note["workloads"]["pgbench"] = note["workloads"].pop("uniform")
                    r["note"] = json.dumps(note)
                elif r["phase"] == "sweep" and r["workload"] == "uniform":
                    m = maps[(r["server"], r["mode"], r["profile"], "uniform",
                              int(r["pages"]), float(r["frac"]))][int(r["rep"])]
                    r["workload"], r["map"] = "pgbench", json.dumps(m) if keep else ""
                w.writerow(r)
        return replay.replay(out)
    want = {row: got for row, *got in replay.replay(run)[0]["current"]}
    out, left_out, _, _ = write(True)
    assert not left_out and len(out["current"]) == 56
    for row, *got in out["current"]:
        assert got == want[(*row[:3], "uniform", *row[4:])] if row[3] == "pgbench" else \
            want[row]
    out, left_out, _, _ = write(False)
    assert len(left_out) == 28 and len(out["current"]) == 28


def run_len(read, p, pages):
    """Length of the run of pages not in `read` that holds p."""
    a = p
    while a > 0 and a - 1 not in read:
        a -= 1
    b = p
    while b + 1 < pages and b + 1 not in read:
        b += 1
    return b - a + 1


@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.name)
def test_transcription_chooses_what_the_autotuner_chose(run):
    out, left_out, agree, compared = replay.replay(run)
    assert not left_out and len(out["current"]) == 56
    assert compared >= 56 * 3 and agree["revision 19"] == compared
    # ... among them repetitions where the calibration's noise kept 32
    kept = [rep for cur, r9 in zip(out["current"], out["revision 9"])
            for rep, t in cur[1].items() if t == 32 and r9[1][rep] < 32]
    assert kept


@pytest.mark.parametrize("run", RUNS_20, ids=lambda p: p.name)
def test_transcription_chooses_what_revision_20_chose(run):
    out, left_out, agree, compared = replay.replay(run)
    assert not left_out and len(out["current"]) == 56
    # (without a delay revisions 20 to 25 choose alike)
    assert compared >= 56 * 3 and agree["revision 22"] == compared
    # ... among them repetitions where revision 19's rule would have kept 32
    assert agree["revision 19"] < compared


# default runs of revision 23 under autovacuum's delay (2 ms for 200 points
# on every profile): their notes give the delay as revision 23 priced it
RUNS_23 = [RESULTS / "2026-12-06-vm-2c24g-default-delay-rev23",
           RESULTS / "2026-12-06-vm-2c24g-default-delay-rev23-2"]


@pytest.mark.parametrize("run", RUNS_23, ids=lambda p: p.name)
def test_transcription_chooses_what_revision_23_chose(run):
    """Revision 23, given the delay's miss part of its notes' sleep, chooses
    what those runs' autotuner chose; the current model, which prices the
    free space map's hit too, chooses otherwise on some repetitions."""
    out, left_out, agree, compared = replay.replay(run)
    assert compared >= 56 * 3 and agree["revision 23"] == compared
    assert agree["current"] < compared


RUNS_24 = [RESULTS / "2026-12-06-vm-2c24g-default-delay-rev24",
           RESULTS / "2026-12-06-vm-2c24g-default-delay-rev24-2"]


@pytest.mark.parametrize("run", RUNS_24, ids=lambda p: p.name)
def test_transcription_chooses_what_revision_24_chose(run):
    """On the default runs of revision 24 under the delay, whose notes keep
    the delay's settings, revision 24 chooses what the runs' autotuner
    chose; revision 23, and the current model, which lets the sleep cover
    the reading on 18's rows, otherwise on some repetitions."""
    calib, _ = replay.load(run)
    assert all(n["cost_delay"]["vacuum_cost_delay"] == 2 for n in calib.values())
    out, left_out, agree, compared = replay.replay(run)
    assert compared >= 56 * 3 and agree["revision 24"] == compared
    assert agree["revision 23"] < compared and agree["current"] < compared


REV25 = RESULTS / "2026-12-06-vm-2c24g-default-delay-rev25"


def test_transcription_chooses_what_revision_25_chose():
    """On a default run of revision 25 under the delay revision 25 chooses
    what the run's autotuner chose; revision 24, which added the sleep to
    the reading on 18's rows too, and the current model, which counts the
    interpolation's spread between two calibrated densities, otherwise on
    some repetitions."""
    out, left_out, agree, compared = replay.replay(REV25)
    assert not left_out and len(out["current"]) == 56
    assert compared >= 56 * 3 and agree["revision 25"] == compared
    assert agree["revision 24"] < compared and agree["current"] < compared


def test_transcription_chooses_what_revision_26_chose():
    """On the default run of revision 26 under the delay revision 26's
    transcription chooses what the run's autotuner chose; revision 25
    otherwise on one repetition (15.18 buffered latency-bound uniform 1e-3:
    4 where revision 26, which could not tell 4's saving from the
    interpolation's spread, took 8); the current model otherwise on some
    repetitions with one read issued ahead (latency-serial), and on those
    only: with 16 (every other profile's 18.6 rows) the naps hide all the
    reading the sleep can cover, as revision 26 priced it."""
    run = RESULTS / "2026-12-07-vm-2c24g-default-delay-rev26"
    out, left_out, agree, compared = replay.replay(run)
    assert not left_out and len(out["current"]) == 56
    assert compared >= 56 * 3 and agree["revision 26"] == compared
    assert agree["revision 25"] == compared - 1
    assert agree["current"] < compared
    for cur, r26 in zip(out["current"], out["revision 26"]):
        assert cur[0] == r26[0]
        if cur[1] != r26[1]:
            assert cur[0][2] == "latency-serial", cur[0]


def test_transcription_chooses_what_revision_27_chose():
    """On the default run of revision 27 under the delay revision 27's
    transcription chooses what the run's autotuner chose, and so does the
    current model, whose noise differs there but not enough to change a
    choice; revision 26 otherwise only with one read issued ahead
    (latency-serial), where it prices the sleep and the reading as their
    sum."""
    run = RESULTS / "2026-12-07-vm-2c24g-default-delay-rev27"
    out, left_out, agree, compared = replay.replay(run)
    assert not left_out and len(out["current"]) == 56
    assert compared >= 56 * 3 and agree["revision 27"] == agree["current"] == compared
    assert agree["revision 26"] < compared
    for cur, r26 in zip(out["current"], out["revision 26"]):
        if cur[1] != r26[1]:
            assert cur[0][2] == "latency-serial", cur[0]


def test_transcription_chooses_what_revision_28_chose_on_kept_maps():
    """Revision 28's held-out run, whose wide and pgbench rows no seed
    rebuilds, replays from the maps runs.csv keeps: every row, and on
    every repetition's map the current model chooses what the run's
    autotuner chose; revision 27 otherwise on some, all 18.6's with the
    reads going on while VACUUM sleeps."""
    run = RESULTS / "2026-12-07-vm-2c24g-held-out-delay-rev28"
    out, left_out, agree, compared = replay.replay(run)
    assert not left_out and len(out["current"]) == 44
    assert {row[3] for row, *_ in out["current"]} == {"wide", "pgbench"}
    assert compared >= 44 * 3 and agree["current"] == compared
    assert agree["revision 27"] < compared
    for cur, r27 in zip(out["current"], out["revision 27"]):
        if cur[1] != r27[1]:
            assert cur[0][0] == "18-patched", cur[0]
    # its calibrations measured no share of the reading on a CPU: the
    # current model prices them as revision 28
    assert agree["revision 28"] == compared


@pytest.mark.parametrize("run, rows", [("2026-12-07-vm-2c24g-cost-limit-1000-rev29", 16),
                                       ("2026-12-07-vm-2c24g-held-out-delay-rev29", 44)])
def test_transcription_chooses_what_revision_29_chose(run, rows):
    """Revision 29's runs (under vacuum_cost_limit 1000, and held out): on
    every repetition's map the current model chooses what the run's
    autotuner chose; revision 28, which takes all of the reading for
    waiting a nap can hide, otherwise on some, all 18.6's with the reads
    going on while VACUUM sleeps."""
    out, left_out, agree, compared = replay.replay(RESULTS / run)
    assert not left_out and len(out["current"]) == rows
    assert compared >= rows * 3 and agree["current"] == compared
    assert agree["revision 28"] < compared
    for cur, r28 in zip(out["current"], out["revision 28"]):
        if cur[1] != r28[1]:
            assert cur[0][0] == "18-patched", cur[0]


def test_between_densities_keeps_32_where_the_figures_switch():
    """The row revision 25 read slower than stock (15.18, buffered reads,
    the latency profile, uniform 2.5e-4): its maps (d = 0.0234 to 0.0237)
    lie between the calibrated 1/57 and 1/33, where threshold 8 cost 596
    and 192 µs per page to read, the kernel's readahead keeping ahead of
    its skips at the one and not at the other.  Revision 25 took the
    interpolation between them as exact and chose 8 on every repetition;
    the current model counts its spread and keeps 32, stock's."""
    out = replay.replay(REV25)[0]
    row = ("15-patched", "buffered", "latency", "uniform", 12000, 0.00025)
    r25 = next(x for x in out["revision 25"] if x[0] == row)
    now = next(x for x in out["current"] if x[0] == row)
    assert set(r25[1].values()) == {8} and r25[3] == "above"
    assert set(now[1].values()) == {32} and now[3] == "same work"


def test_between_densities_bounds_the_saving():
    """t/unit/test_core.cpp's test_between_densities(), transcribed: 4
    costs 50 per page to read at 1/33 and 100 at 1/17, 32 100 at both, on
    a map of runs of one page halfway between: the saving's logarithm
    lies between ln 2 and 0 with mean ln 2 / 2, so its spread is ln 2 /
    2, and 32 is kept; where 4 costs 60 at 1/17, 0.0911, and 4 saves;
    interpolated outside its neighbours' bounds, the nearer bound."""
    ds = [0.01, 1 / 57, 1 / 33, 1 / 17, 1 / 9, 1 / 5, 1 / 3, 1 / 2]
    cal = {"densities": ds, "read_us": [[200.0] * 5 + [100.0] for _ in ds],
           "read_noise": [0.0] * 8, "rounds": 201, "cpu_page_us": 0.0}
    cal["read_us"][2][2], cal["read_us"][3][2] = 50.0, 100.0
    cal["start_read_us"] = cal["read_us"]
    m = {"rel_pages": 24690, "needed": 1000, "read_through": [0] * 6,
         "io_runs": [1000 - 10 * t for t in range(6)]}
    cost = replay.cost_current(cal, m, 0.0)
    assert math.log(cost[-1] / cost[2]) == pytest.approx(math.log(2) / 2, abs=1e-3)
    mu, spread = replay.between(cal, m, 0.0, cost, 2)
    assert mu == pytest.approx(math.log(2) / 2, abs=1e-3)
    assert spread == pytest.approx(math.log(2) / 2, abs=1e-3)
    assert replay.choose_current(cal, m, 0.0) == 32
    assert replay.choose_current(cal, m, 0.0, spread=False) == 4
    cal["read_us"][3][2] = 60.0
    cost = replay.cost_current(cal, m, 0.0)
    assert replay.between(cal, m, 0.0, cost, 2)[1] == pytest.approx(0.0911, abs=1e-3)
    assert replay.choose_current(cal, m, 0.0) == 4
    # each cost a sum of parts interpolated each on its own: half the pages
    # among a file's first, whose figures for 4 go from 1,000 to 10 while
    # the rest's go from 10 to 1,000, 32 at 200: ln (200 / 505) at either
    # neighbour, ln 2 interpolated; bounded by the neighbours, a loss: 32
    cal["read_us"] = [[2000.0] * 5 + [200.0] for _ in ds]
    cal["start_read_us"] = [list(row) for row in cal["read_us"]]
    cal["start_read_us"][2][2], cal["start_read_us"][3][2] = 1000.0, 10.0
    cal["read_us"][2][2], cal["read_us"][3][2] = 10.0, 1000.0
    half = {"rel_pages": 4096, "needed": 166, "read_through": [0] * 6,
            "io_runs": [166 - t for t in range(6)]}
    cost = replay.cost_current(cal, half, 0.0)
    assert math.log(cost[-1] / cost[2]) == pytest.approx(math.log(2), abs=1e-2)
    assert replay.between(cal, half, 0.0, cost, 2) == \
        (pytest.approx(math.log(200 / 505), abs=1e-3), 0.0)
    assert replay.choose_current(cal, half, 0.0) == 32
    assert replay.choose_current(cal, half, 0.0, spread=False) == 4


def test_shared_stream_noise_only_drops_a_kept_32():
    """Revision 20 judges a saving against the noise of the parts of the
    two costs that differ: on scattered maps (the uniform workload, no
    pages read on in a stream) it chooses what revision 19 chose; where
    changes cluster it keeps 32 only where revision 19 did, and on the
    revision 19 run it chooses lower on some of those maps."""
    out, _, _, _ = replay.replay(RUNS[-1])
    dropped = 0
    for cur, r19 in zip(out["current"], out["revision 19"]):
        for rep, t in cur[1].items():
            if cur[0][3] == "uniform":
                assert t == r19[1][rep], cur[0]
            elif t != r19[1][rep]:
                assert r19[1][rep] == 32 and t < 32, cur[0]
                dropped += 1
    assert dropped > 0


def test_one_round_keeps_32():
    """A calibration of one round (its noise 0 on no degrees of freedom)
    keeps 32 where the same figures over more rounds choose lower."""
    with open(REV14 / "runs.csv", newline="") as f:
        cal = next(json.loads(r["note"])["calibrate"] for r in csv.DictReader(f)
                   if r["phase"] == "calib" and r["mode"] == "direct" and r["profile"] == "disk")
    rng = random.Random(3)
    m = replay.map_counts([p for p in range(12000) if rng.random() < 0.05], 12000)
    assert replay.choose_current(cal, m, cal["cpu_page_us"]) < 32
    assert len(cal["densities"]) == 8
    none = [0.0] * len(cal["densities"])
    once = dict(cal, rounds=1, read_noise=none, start_read_noise=none)
    assert replay.choose_current(once, m, cal["cpu_page_us"]) == 32


def test_start_share():
    assert replay.start_share(0) == 1.0 and replay.start_share(2000) == 1.0
    assert replay.start_share(12000) == 2048 / 12000
    assert replay.start_share(300000) == 3 * 2048 / 300000


def test_cheapest_keeps_the_larger_of_a_tie():
    assert replay.cheapest([5, 4, 4, 6, 7, 4]) == 32
    assert replay.cheapest([5, 3, 4, 6, 7, 4]) == 2


# runs whose calibrations returned their rounds, made with revision 20
RUNS_ROUNDS_20 = [RESULTS / "2026-12-06-vm-2c24g-default-rounds",
                  RESULTS / "2026-12-06-vm-2c24g-block-latency-rounds"]


@pytest.mark.parametrize("run", RUNS_ROUNDS_20, ids=lambda p: p.name)
def test_noise_rules_follow_revision_20s_calibrations(run):
    """bench/noise_rules.py takes, from the rounds each calibration
    returned, the figures and noises it returned, by revision 20's rule;
    revision 21's sets timings aside with direct reads only, and there in
    at least one calibration of each run."""
    calib, _ = replay.load(run)
    direct_changed = 0
    for (server, mode, profile), note in calib.items():
        cal = note["calibrate"]
        got = noise_rules.figures(cal, noise_rules.revision20)
        for key, values in zip(("read_us", "read_noise", "start_read_us",
                                "start_read_noise"), got):
            assert noise_rules.flat(values) == pytest.approx(
                noise_rules.flat(cal[key]), rel=1e-9, abs=1e-12), (server, mode, profile, key)
        if noise_rules.figures(cal, noise_rules.revision21) != got:
            assert mode == "direct", (server, mode, profile)
            direct_changed += 1
    assert direct_changed >= 1


def test_undisturbed_timings_keep_their_noise():
    """With normal, undisturbed timings the test sets one aside in at most
    5 % of densities (Bonferroni at 5 %, and the whole layout's leverage
    errs towards fewer): 400 simulated layouts may show up to three
    binomial standard deviations more (8.3 %)."""
    for rounds in (3, 9):
        share, kept = noise_rules.undisturbed(rounds)
        assert share <= 0.05 + 3 * (0.05 * 0.95 / 400) ** 0.5, (rounds, share)
        assert kept is None or kept < 1


# default runs whose calibrations counted the device's requests, and the
# revision that made them
RUNS_REQUESTS = [(RESULTS / "2026-12-06-vm-2c24g-default-requests", "revision 21"),
                 (RESULTS / "2026-12-06-vm-2c24g-default-rev22", "revision 22")]


@pytest.mark.parametrize("run,made_by", RUNS_REQUESTS, ids=lambda x: getattr(x, "name", x))
def test_noise_rules_follow_calibrations_that_counted_requests(run, made_by):
    """bench/noise_rules.py takes, by the rule of the revision that made a
    run, the figures and noises each of its calibrations returned; the
    other of revisions 21 and 22 takes others with buffered reads only,
    in at least one calibration, from the requests the run counted."""
    calib, _ = replay.load(run)
    rule = noise_rules.RULES[made_by]
    other = noise_rules.RULES["revision 22" if made_by == "revision 21" else "revision 21"]
    buffered_changed = 0
    for (server, mode, profile), note in calib.items():
        cal = note["calibrate"]
        assert cal["round_requests"] is not None, (server, mode, profile)
        got = noise_rules.figures(cal, rule)
        for key, values in zip(("read_us", "read_noise", "start_read_us",
                                "start_read_noise"), got):
            assert noise_rules.flat(values) == pytest.approx(
                noise_rules.flat(cal[key]), rel=1e-9, abs=1e-12), (server, mode, profile, key)
        if noise_rules.figures(cal, other) != got:
            assert mode == "buffered", (server, mode, profile)
            buffered_changed += 1
    assert buffered_changed >= 1


def test_revision22_tells_a_stall_from_readahead():
    """A buffered timing far from its layout's spread is set aside where
    the device's requests were as in the other rounds (a stall), kept
    where they were not (the readahead's other way of going), and without
    requests nothing is set aside; as t/unit/test_core.cpp's
    test_disturbed_timings checks calibration.cpp's."""
    import math
    level = [1.0, 1.1, 0.95, 1.02, 0.9]
    spread = [[1.00, 1.02, 0.98, 1.01, 0.99], [0.98, 1.00, 1.02, 0.99, 1.01],
              [1.02, 0.99, 1.00, 0.98, 1.01], [1.01, 0.98, 1.01, 1.00, 1.00],
              [0.99, 1.01, 0.99, 1.02, 0.99], [1.00, 1.00, 1.00, 1.00, 1.00]]
    y = [[math.log(100.0 * (k + 1) * level[r] * spread[k][r]) for r in range(5)]
         for k in range(6)]
    y[2][3] += math.log(20)
    q = [[math.log(0.5 * spread[k][(r + 2) % 5]) for r in range(5)] for k in range(6)]
    assert noise_rules.set_aside(y, q) == [(2, 3)]
    assert noise_rules.revision22(y, False, q)[1] < noise_rules.revision22(y, False)[1] / 10
    q[2][3] -= math.log(3)
    assert noise_rules.set_aside(y, q) == []
    # requests that add up exactly: no spread, the stall's as the others'
    even = [[math.log((7 * r + 15) / 257) for r in range(5)] for _ in range(6)]
    assert noise_rules.set_aside(y, even) == [(2, 3)]
    assert noise_rules.revision22(y, True, q) == noise_rules.revision21(y, True)

"""bench/replay.py (no server): how it prices the cost-based delay, on a
synthetic run whose thresholds measured what the current model prices,
and how a delay moves the choices over committed runs' calibrations."""

import csv
import json
import random

import pytest

from bench import replay, replay_through
from bench.vacbench import harness
from test_bench_replay import REV14, RUNS


def synthetic_run(tmp_path, extra_us, explained=None, settings=None, delay=0.0,
                  overlap=None):
    """A run directory of one row, the uniform workload's 1e-3 on 12,000
    pages under a committed run's calibration (18.6 direct, disk), whose
    every threshold measured what the current model prices its map at,
    with `delay` µs of the cost-based delay's sleep per page read through
    (and, where the sleep covers the reading, `overlap` per page to read;
    the note's concurrency_used is then 3 and its calibration's io_method
    worker with 16 reads issued ahead, else 1 and io_method sync), plus
    extra_us for each page it read through; in its note, `explained` as
    explain_threshold()'s cost_delay_per_page and `settings` as the delay's
    settings, where given."""
    with open(REV14 / "runs.csv", newline="") as f:
        calib = next(r for r in csv.DictReader(f)
                     if r["phase"] == "calib" and r["mode"] == "direct" and r["profile"] == "disk")
    note = json.loads(calib["note"])
    cal = note["calibrate"]
    tpp = note["workloads"]["uniform"]["tuples_per_page"]
    work = cal["cpu_page_us"] + cal["cpu_tuple_us"] * tpp
    note["workloads"]["uniform"]["concurrency_used"] = 1 if overlap is None else 3
    note["workloads"]["uniform"]["calibration"] = (
        "measured 2026-12-01 00:00:00+00 with direct reads, io_method " +
        ("sync, maintenance_io_concurrency 16, io_combine_limit 16: 1 in flight"
         if overlap is None else "worker with 3 workers, maintenance_io_concurrency 16, "
         "io_combine_limit 16: 3 in flight"))
    if explained is not None:
        note["workloads"]["uniform"]["cost_delay_per_page"] = explained
    if settings is not None:
        note["cost_delay"] = dict(zip(harness.COST_DELAY_SETTINGS, settings))
    fields = ["phase", "server", "mode", "profile", "workload", "pages", "frac", "rep",
              "threshold", "ms", "scanned", "note"]
    rows = [dict({k: calib[k] for k in fields}, note=json.dumps(note))]
    maps = []
    for rep in range(3):
        m = replay.map_counts(replay.rebuild("uniform", 1e-3, rep, 12000, tpp), 12000)
        cost = replay.cost_current(cal, m, work, delay=delay, overlap=naps(overlap, settings))
        maps.append(m)
        for i, g in enumerate(replay.GAPS):
            rows.append(dict(phase="sweep", server=calib["server"], mode="direct",
                             profile="disk", workload="uniform", pages=12000, frac=1e-3,
                             rep=rep, threshold=g, note="",
                             ms=(cost[i] + extra_us * m["read_through"][i]) / 1000.0,
                             scanned=m["needed"] + m["read_through"][i]))
    with open(tmp_path / "runs.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return cal, work, maps


# (extra_us, explain_threshold()'s cost_delay_per_page, the delay's settings
# (delay ms, limit, page_miss, page_hit[, page_dirty]), the sleep per page
# read through, per page to read where the sleep covers the reading):
# none; revision 23's note, the page's miss alone and the free space map's
# hit at PostgreSQL's defaults, half that; the note's settings; with reads
# in flight, each page to read 2 + 1 + 20 points of 10 µs (the dirty
# page's at PostgreSQL's default where the note has none), 2 + 1 + 5 of
# 10 with vacuum_cost_page_dirty 5
DELAYS = [(0.0, None, None, 0.0, None), (3.0, None, None, 0.0, None),
          (3.0, 20.0, None, 30.0, None), (3.0, 30.0, (2, 200, 2, 1), 30.0, None),
          (3.0, 55.0, (2, 400, 10, 1), 55.0, None), (3.0, 0.0, (0, 200, 2, 1), 0.0, None),
          (3.0, 30.0, (2, 200, 2, 1), 30.0, 230.0),
          (3.0, 30.0, (2, 200, 2, 1, 5), 30.0, 80.0)]


def naps(overlap, settings):
    """What the current model prices a synthetic_run()'s sleep per page to
    read with where the reads go on while VACUUM sleeps: revision 27's
    overlap (replay.cost_current()), naps of the settings' delay with 16
    reads issued ahead of at most 16 pages each."""
    return None if overlap is None else (overlap, 1000.0 * settings[0], 16, 16)


@pytest.mark.parametrize("extra_us,explained,settings,delay,overlap", DELAYS)
def test_read_through_measured_against_priced(tmp_path, extra_us, explained, settings, delay,
                                              overlap):
    """The replay prices each repetition's map with the run's calibration,
    and with its VACUUMs' cost-based delay where the note gives one: added
    to the reading, or where the reads go on while VACUUM sleeps, the
    reading and the sleeping less what the naps hide: all the sleep or
    the reading covers where the naps, 16 reads issued ahead each,
    outnumber the reads (a page to read sleeping 230 µs, 23 / 200 of a nap
    of 2 ms), less at some thresholds where they do not (80 µs)."""
    cal, work, maps = synthetic_run(tmp_path, extra_us, explained, settings, delay, overlap)
    got = replay_through.read_through(tmp_path)
    [(group, xs)] = got.items()
    assert group == ("18-patched", "direct", "disk")
    # every threshold below 32 reads thousands of pages fewer on this map
    assert [x[2] for x in xs] == list(replay.GAPS[:-1])
    for workload, frac, t, measured, priced in xs:
        i = replay.GAPS.index(t)
        per_rep = []
        for m in maps:
            cost = replay.cost_current(cal, m, work, delay=delay,
                                       overlap=naps(overlap, settings))
            pages = m["read_through"][-1] - m["read_through"][i]
            assert pages >= replay_through.MIN_THROUGH
            per_rep.append((cost[-1] - cost[i]) / pages)
            without = replay.cost_current(cal, m, work)
            if overlap is None:
                # the sleep is the same on every page read through
                assert per_rep[-1] - (without[-1] - without[i]) / pages == \
                    pytest.approx(delay)
            else:
                # the work, the reading and the sleeping less what the naps
                # hide: each nap 16 reads at the reading's time per read,
                # the reads one more per run at most than its pages / 16
                partly = 0
                for k, c in enumerate(cost):
                    w = m["read_through"][k] * work
                    read = without[k] - w
                    sleep = m["needed"] * overlap + m["read_through"][k] * delay
                    reads = m["io_runs"][k] + (m["needed"] + m["read_through"][k]) / 16
                    hidden = min(sleep, read, sleep / 2000.0 * 16 * read / reads)
                    assert c == pytest.approx(w + read + sleep - hidden)
                    partly += hidden < min(sleep, read) * (1 - 1e-9)
                assert (partly > 0) == (overlap < 230.0), partly
        assert (workload, frac) == ("uniform", 1e-3)
        assert priced == pytest.approx(sorted(per_rep)[1])
        assert measured == pytest.approx(priced + extra_us)


def test_the_delay_moves_choices_down():
    """Every page read through costs the cost-based delay's sleep: over the
    calibrations of the revision 10 to 19 runs and scattered maps of 0.2 %
    to 20 %, with revision 25's rule a longer delay never raises the
    threshold chosen, and lowers it on some; with the current one (the
    interpolation's spread counted, a delay can make a threshold's saving
    one the spread no longer hides) it may choose another below 32, but
    never takes 32 back once it has left it.  The current model is given
    the run's delay, the page's miss and the free space map's hit,
    revision 23 the miss alone, revision 22 none."""
    lowered = 0
    for run in RUNS:
        calib, _ = replay.load(run)
        for note in calib.values():
            cal = note.get("calibrate", {})
            if not replay.priced_like_this(cal):
                continue
            for frac in (0.002, 0.01, 0.05, 0.2):
                rng = random.Random(7)
                m = replay.map_counts([p for p in range(12000) if rng.random() < frac], 12000)
                work = cal["cpu_page_us"]
                delays = (0, 2, 5, 10, 20, 50, 200)
                chosen = [replay.choose_current(cal, m, work, delay=d) for d in delays]
                before = [replay.choose_current(cal, m, work, delay=d, spread=False)
                          for d in delays]
                assert before == sorted(before, reverse=True), (run.name, frac, before)
                assert 32 not in chosen[next((k for k, t in enumerate(chosen) if t < 32),
                                             len(chosen)):], (run.name, frac, chosen)
                lowered += before[-1] < before[0] and chosen[-1] < chosen[0]
                # (one read in flight, reads that do not go on while
                # VACUUM sleeps: the sleep adds to the reading)
                serial = (15.0, 5.0, 50.0, False, None)
                for model in ("current", "revision 26"):
                    assert replay.MODELS[model](cal, m, work, serial) == chosen[4]
                for model in ("revision 25", "revision 24"):
                    assert replay.MODELS[model](cal, m, work, serial) == before[4]
                miss = (20.0, 10.0, 0.0, False, None)
                assert replay.MODELS["revision 23"](cal, m, work, miss) == before[4]
                assert replay.MODELS["revision 22"](cal, m, work, miss) == before[0]
    assert lowered > 0


def test_reading_error_counts_as_far_as_it_moves_the_cost():
    """Where the reads go on while VACUUM sleeps, an error of the reading
    passes into a cost as far as it moves it (model.cpp's
    reading_share(), its unit test's cases): whole where the naps hide
    all the sleep (the reading the longer), and near where they stop
    hiding all the reading, by how far its noise either way reaches past
    that; revision 27 counted the share not hidden."""
    dens = [0.01, 1 / 57, 1 / 33, 1 / 17, 1 / 9, 0.2, 1 / 3, 0.5]
    flat = [[50.0] * len(replay.GAPS) for _ in dens]
    cal = dict(densities=dens, read_us=flat, start_read_us=flat, read_noise=[0.05] * 8,
               start_read_noise=[0.05] * 8, rounds=100, cpu_page_us=0.0, cpu_tuple_us=0.0)
    rng = random.Random(3)
    m = replay.map_counts([p for p in range(10000) if rng.random() < 0.05], 10000)

    def priced(overlap, moved=True):
        noise, shared, kept = [], [], []
        cost = replay.cost_current(cal, m, 0.0, noise, shared, 1.0, overlap, kept=kept,
                                   moved=moved)
        return cost[0], noise[0] * cost[0], shared[0], kept[0]
    read, spread, stream, share = priced(None)
    sigma = spread + stream
    assert share == 1.0 and m["read_through"][0] == 0 and sigma > 500
    # naps of 0.5 ms, 16 reads issued ahead: each hides more than it lasts
    needed = m["needed"]
    longer = (0.2 * read / needed, 500.0, 16, 16)
    assert priced(longer) == pytest.approx((read, spread, stream, 1.0))
    assert priced(longer, moved=False)[3] <= 0.8 + 1e-9    # the least share not hidden
    turn = ((read + 500) / needed, 500.0, 16, 16)
    cost, noisy, _, share = priced(turn)
    assert cost == pytest.approx(read + 500) and share == pytest.approx((sigma - 500) / sigma)
    assert noisy == pytest.approx(spread * share)
    assert priced(turn, moved=False)[3] == 0.0


def test_no_nap_hides_the_time_on_a_cpu():
    """Where the reads go on while VACUUM sleeps, the naps hide only the
    waiting, the reading less its share on a CPU (calibrate()'s
    read_cpu_share; model.cpp's hidden_by_sleep(), its unit test's
    cases): with 16 reads issued ahead and the sleep the longer, a cost is
    the work, the sleep and the reading's time on a CPU; with one, each
    nap hides one read's waiting; revision 28 (cpu False) and a
    calibration that measured no share take all of the reading for
    waiting."""
    dens = [0.01, 1 / 57, 1 / 33, 1 / 17, 1 / 9, 0.2, 1 / 3, 0.5]
    flat = [[50.0] * len(replay.GAPS) for _ in dens]
    cal = dict(densities=dens, read_us=flat, start_read_us=flat, read_noise=[0.05] * 8,
               start_read_noise=[0.05] * 8, rounds=100, cpu_page_us=2.0, cpu_tuple_us=0.08)
    half = dict(cal, read_cpu_share=[[0.5] * len(replay.GAPS) for _ in dens])
    rng = random.Random(5)
    m = replay.map_counts([p for p in range(10000) if rng.random() < 0.05], 10000)
    needed = m["needed"]

    def priced(c, ahead, cpu=True):
        return replay.cost_current(c, m, 10.0, delay=20.0, overlap=(230.0, 2000.0, ahead, 16),
                                   cpu=cpu)
    reading = [c - t * 10.0 for c, t in zip(replay.cost_current(cal, m, 10.0),
                                            m["read_through"])]
    sleep = [needed * 230.0 + t * 20.0 for t in m["read_through"]]
    assert all(s > r for s, r in zip(sleep, reading))
    assert priced(half, 16) == pytest.approx(
        [t * 10.0 + s + r / 2 for t, s, r in zip(m["read_through"], sleep, reading)])
    # one read ahead, at 1 (nothing read through): each nap one read's
    # waiting, half the reading over its reads at most
    naps, ios = sleep[0] / 2000.0, m["io_runs"][0] + needed / 16
    assert m["read_through"][0] == 0 and naps * reading[0] / 2 / ios < reading[0] / 2
    assert priced(half, 1)[0] == pytest.approx(reading[0] + sleep[0] -
                                               naps * reading[0] / 2 / ios)
    assert priced(half, 16, cpu=False) == pytest.approx(priced(cal, 16))
    assert priced(cal, 16) == pytest.approx(
        [t * 10.0 + max(s, r) for t, s, r in zip(m["read_through"], sleep, reading)])

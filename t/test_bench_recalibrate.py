"""bench/recalibrate.py (no server): the run's scope it calibrates under,
and its replay of a group's rows with a calibration put in place of the
run's own."""

import copy
from pathlib import Path

from bench import recalibrate, replay

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"
HELD_OUT = RESULTS / "2026-12-07-vm-2c24g-held-out-delay-rev29"
KEY = ("15-patched", "buffered", "iops")


def test_scope_is_the_runs():
    # scope.txt: iops.iops=1000, iops.io_unit_kb=128, iops.vacuum_cost_delay=2
    assert recalibrate.scope_of(HELD_OUT, "iops") == (
        {"iops": "1000", "io_unit_kb": "128"}, {"vacuum_cost_delay": "2"})
    # latency.maintenance_io_concurrency=4 is the latency profile's alone
    assert recalibrate.scope_of(HELD_OUT, "latency")[1] == {
        "maintenance_io_concurrency": "4", "vacuum_cost_delay": "2"}
    # a run without scope.txt: the profiles' own
    assert recalibrate.scope_of(RESULTS / "2026-12-02-vm-2c24g-default-rev14", "iops") == ({}, {})


def test_the_runs_own_calibration_replays_as_replay_does():
    calib, cells = replay.load(HELD_OUT)
    own = recalibrate.priced(calib, cells, KEY, calib[KEY]["calibrate"])
    expected = [(row, sorted(set(chosen.values())), ratio)
                for row, chosen, ratio, _ in replay.replay(HELD_OUT)[0]["current"]
                if row[:3] == KEY]
    assert len(own) == 4 and [r[:3] for r in own] == expected


def test_another_calibration_is_the_one_priced():
    calib, cells = replay.load(HELD_OUT)
    cal = copy.deepcopy(calib[KEY]["calibrate"])
    own = recalibrate.priced(calib, cells, KEY, cal)
    # every threshold's reading 32 times dearer than 32's at every density:
    # reading through always pays, and every row is read at 32
    for row in cal["read_us"] + cal["start_read_us"]:
        row[:-1] = [row[-1] * 32] * (len(row) - 1)
    other = recalibrate.priced(calib, cells, KEY, cal)
    assert [r[1] for r in other] == [[32]] * 4
    assert [r[1] for r in own] != [r[1] for r in other]
    # the run's calibration is left as it was
    assert calib[KEY]["calibrate"]["read_us"] != cal["read_us"]

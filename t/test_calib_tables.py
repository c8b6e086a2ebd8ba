"""docs/model.md's calibrated figures are what bench/calib_tables.py
prints for the run the page cites (no server)."""

import re

from bench import calib_tables
from pgkit import TOP


def cited_run():
    """The run of model.md's "This machine's disk, and each profile": the
    first report its section links to."""
    doc = (TOP / "docs" / "model.md").read_text()
    section = doc.split("### This machine's disk, and each profile", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"\(\.\./(bench/results/[^/)]+)/report\.md\)", section)
    assert m, "model.md's section cites no run"
    return TOP / m.group(1), section


def test_model_md_tables_are_the_cited_runs():
    run, section = cited_run()
    cals = calib_tables.calibrations(run)
    assert len(cals) == 14    # 5 profiles; 15.18 buffered, 18.6 both (latency-serial 18 only)
    for table in (calib_tables.disk_table(cals), calib_tables.profile_table(cals)):
        assert table in section


def test_least_threshold_reading():
    # 32 the least; 4 saving 1.33 x, within noise 0.2 and beyond 0.02 after
    # 100 rounds (t95 1.648: 0.47 and 0.047 against ln 1.33 = 0.29); 4
    # saving 1.05 x (two decimals below 1.1) beyond 0.001
    cal = {"rounds": 100, "read_noise": [0.02, 0.2, 0.001],
           "read_us": [[9, 9, 9, 9, 9, 8], [10, 10, 7.5, 10, 10, 10],
                       [10, 10, 9.5, 10, 10, 10]]}
    assert calib_tables.least(cal, 0) == "32"
    assert calib_tables.least(cal, 1) == "4 ?"
    cal["read_noise"][1] = 0.02
    assert calib_tables.least(cal, 1) == "4 (1.3 ×)"
    assert calib_tables.least(cal, 2) == "4 (1.05 ×)"

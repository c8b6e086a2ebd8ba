"""make bench's driver runs end to end at its smoke size (a tiny table, a
few points; CI never runs the real benchmark), writes every planned
measurement, what it measured is consistent with what it set up, and a
second run with the same result directory resumes instead of measuring
again."""

import csv
import subprocess
import sys

import pytest

from conftest import TOP

sys.path.insert(0, str(TOP / "bench"))
import vacbench  # noqa: E402


def read_rows(out):
    with open(out / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.patched
def test_bench_smoke(server, ext_build, tmp_path):
    out = tmp_path / "results"
    cmd = ["/usr/bin/python3", str(TOP / "bench" / "vacbench.py"), "--size", "smoke",
           "--installed", "--out", str(out), "--server", f"{server.name}={server.prefix}"]
    res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(res.stdout)
    assert res.returncode == 0
    rows = read_rows(out)
    cfg = vacbench.SIZES["smoke"]
    groups = [(m, p) for m in cfg["io_modes"][server.major] for p in cfg["profiles"]]

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

    # each profile is calibrated once, with direct I/O where the server has it
    calib = [r for r in rows if r["phase"] == "calib"]
    modes = cfg["io_modes"][server.major]
    calib_mode = "direct" if "direct" in modes else modes[0]
    assert {(r["mode"], r["profile"], r["threshold"]) for r in calib} == \
        {(calib_mode, p, k) for p in cfg["profiles"] for k in ("seq", "rand")}
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
    for m, p in groups:
        assert f"### {server.name}, {m}, {p}" in report        # score table
        assert (out / f"sweep-{server.name}-{m}-{p}.png").stat().st_size > 0

    # the same command again resumes: everything is in runs.csv already
    res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(res.stdout)
    assert res.returncode == 0
    assert read_rows(out) == rows

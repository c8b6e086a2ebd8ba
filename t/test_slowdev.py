"""The block-latency profile's device on its own and end to end:
bench/slowdev.c, a FUSE file whose read requests sleep, under a loop
device (harness.SlowDevice), with the benchmark's clusters on it, and
the smaller benchmarks' one table (bench/onetable.py) on it; and
bench.cost_delay's predictions of what the delay's sleeps cost."""

import mmap
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from bench.vacbench import harness
from bench.vacbench.profiles import PROFILES
from pgkit import TOP
from pgkit.proc import give_to_build_user, run
from test_bench import PAGE, fresh_file, read_rows


def attached_loops():
    """The loop devices attached to a file."""
    return run(["losetup", "--list", "--noheadings", "--output", "NAME"]).split()


def test_slowdevice(tmp_path, monkeypatch):
    """bench/slowdev.c under harness.SlowDevice (the block-latency profile):
    switched on, each request that reaches the device pays the latency plus
    its bytes at the bandwidth, counted in slowread's state (penalised,
    delay_us), and so does the kernel's readahead: buffered reads of a whole
    file go to the device in fewer requests than reads, and those requests
    carry every byte (the loop device reading its file with direct I/O and
    reading ahead as far as the disk does); switched off, nothing is
    counted; closed, nothing is left mounted or attached, the daemon has
    exited and the loop device reads ahead as before.  Lower bounds on the
    delays, as for slowread."""
    slow = harness.SlowRead(tmp_path)
    latency_us, mbps = 2000, 100
    # it reads ahead as far as the disk under the other profiles does: a
    # value no loop device has unless set
    monkeypatch.setattr(harness, "read_ahead_kb", lambda path: "4104")
    dev = harness.SlowDevice(tmp_path, slow.state, latency_us, mbps)
    daemon = dev.daemon
    try:
        assert os.path.ismount(dev.mount) and dev.loop in attached_loops()
        loop_dir = Path("/sys/block") / Path(dev.loop).name
        assert (loop_dir / "loop" / "dio").read_text().strip() == "1"
        assert dev.read_ahead_kb() == "4104" and dev.ra_before != "4104"
        ra_before = dev.ra_before
        ra_file = dev.ra_file()
        path = dev.mount / "data"
        fresh_file(path)
        buf = mmap.mmap(-1, PAGE)

        def timed_reads(pages, flags):
            slow.reset()
            slow.switch(True)
            fd = os.open(path, os.O_RDONLY | flags)
            try:
                t0 = time.perf_counter()
                for p in pages:
                    assert os.preadv(fd, [buf], p * PAGE) == PAGE
                return (time.perf_counter() - t0) * 1e6, slow.counters()
            finally:
                os.close(fd)
                slow.switch(False)

        # direct: four requests, one after the other, each paying
        us, c = timed_reads([0, 10, 20, 30], os.O_DIRECT)
        per_request = latency_us + PAGE // mbps          # 1 MB/s = 1 byte/µs
        assert c["penalised"] >= 4 and c["delay_us"] >= 4 * per_request, c
        assert us >= 4 * latency_us
        # buffered, the whole file in order: readahead reads ahead of the
        # reads, in larger requests, and pays for every byte it brings in
        harness.evict_files([path])
        _, c = timed_reads(range(64), 0)
        assert 1 <= c["penalised"] < 64, c
        # each request's bytes / mbps, rounded down: at most 1 µs each
        assert c["delay_us"] - c["penalised"] * latency_us >= 64 * PAGE // mbps - c["penalised"]
        # switched off: the device's reads are not counted
        harness.evict_files([path])
        slow.reset()
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        try:
            assert os.preadv(fd, [buf], 5 * PAGE) == PAGE
        finally:
            os.close(fd)
        assert slow.counters()["penalised"] == 0
    finally:
        dev.close()
    assert not os.path.ismount(dev.mount) and not os.path.ismount(dev.fuse)
    assert f"/dev/{loop_dir.name}" not in attached_loops() and not dev.image.exists()
    assert daemon.poll() is not None
    assert ra_file.read_text().strip() == ra_before


@pytest.mark.patched
def test_bench_block_latency(server, tmp_path):
    """The block-latency profile end to end at the smoke size: the clusters
    on the profile's device, every planned point measured, the timed
    VACUUMs' reads reaching the device and paying there, and nothing left
    mounted after."""
    out = tmp_path / "results"
    mounted_before = Path("/proc/mounts").read_text().count("slowdev")
    cmd = ["/usr/bin/python3", "-m", "bench.vacbench", "--size", "smoke", "--installed",
           "--out", str(out), "--server", f"{server.name}={server.prefix}",
           "--profiles", "block-latency", "--workloads", "uniform", "--phases", "sweep"]
    res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         cwd=TOP)
    print(res.stdout)
    assert res.returncode == 0
    assert re.search(r"block-latency: the clusters on /dev/loop\d+", res.stdout)
    rows = read_rows(out)
    assert rows and {r["profile"] for r in rows} == {"block-latency"}
    # every timed VACUUM that scanned pages read at least one cold page
    # (the benchmark checks it): one request to the device at least, each
    # paying the profile's latency
    latency_us = PROFILES["block-latency"].emulation["latency_us"]
    timed = [r for r in rows if r["phase"] == "sweep" and int(r["scanned"])]
    assert timed and all(int(r["penalised"]) >= 1 and
                         int(r["delay_us"]) >= latency_us * int(r["penalised"]) for r in timed)
    assert Path("/proc/mounts").read_text().count("slowdev") == mounted_before
    assert "block-latency only" in (out / "report.md").read_text()


@pytest.mark.patched
def test_onetable_block_latency(server, workdir):
    """bench/onetable.py (bench.cost_delay's and bench.io_overlap's one
    table) under the block-latency profile: the cluster lies on the
    profile's device, a cold VACUUM's reads reach it and pay there, and the
    backend's time on a CPU (harness.cold_vacuum()'s cpu_ms) is part of the
    VACUUM's time; closed, nothing is left mounted."""
    from bench.onetable import OneTable

    mounted_before = Path("/proc/mounts").read_text().count("slowdev")
    work = workdir / f"onetable-{server.name}"
    work.mkdir()
    give_to_build_user(work)
    one = OneTable(server, work, "one", "buffered", "block-latency")
    try:
        assert one.device and one.node.base.is_relative_to(one.device.mount)
        with one.node.connect() as conn:
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            one.table.prepare_point(one.node, conn, one.table.choose(1e-3, 0))
            ms, report, c = harness.cold_vacuum(conn, one.slow, "buffered", one.files,
                                                one.table.relation, 32, one.node.block_size,
                                                backend_pid=pid)
        latency_us = PROFILES["block-latency"].emulation["latency_us"]
        assert report.scanned and c["penalised"] >= 1, c
        assert c["delay_us"] >= latency_us * c["penalised"], c
        assert 0 < c["cpu_ms"] < ms, (c, ms)
    finally:
        one.close()
    assert Path("/proc/mounts").read_text().count("slowdev") == mounted_before


def test_sleep_split():
    """bench.cost_delay's split of a VACUUM with the delay against the
    one without it: waiting is the time awake not on a CPU; the sum adds
    the sleep to the time without the delay; the overlap lets the sleep
    cover the waiting, and no more than the waiting."""
    from bench.cost_delay import sleep_split

    # without: 150 ms, 40 on a CPU (110 waiting); with: 400 ms, 45 on a
    # CPU, 300 slept in sleeps of 2 ms (55 waiting): the 150 sleeps hid 55
    # ms of waiting, 0.367 ms each; the overlap lets them cover all 110
    got = sleep_split((150.0, 40.0), 400.0, 45.0, 300.0, 2.0)
    assert got == dict(cpu_0=40.0, wait_0=110.0, cpu_d=45.0, wait_d=55.0, slept=300.0,
                       hidden=pytest.approx(55 / 150), measured=400.0, sum=450.0,
                       overlap=345.0)
    # 50 slept covers 50 of the 110: 60 left
    got = sleep_split((150.0, 40.0), 200.0, 45.0, 50.0, 2.0)
    assert (got["sum"], got["overlap"], got["wait_d"]) == (200.0, 155.0, 105.0)

"""What vacskip says about the server it runs on, against how that server
was built (the test matrix knows: only the patched builds have the hook)."""


def test_status_reports_the_hook_of_this_build(server, node):
    with node.connect() as conn:
        conn.execute("CREATE EXTENSION vacskip")
        hook, version = conn.execute(
            "SELECT hook_available, server_version_num FROM vacskip.status()").fetchone()
        major = conn.execute("SELECT current_setting('server_version_num')::int / 10000"
                             ).fetchone()[0]
    assert hook is server.patched, f"{server.name}: hook_available {hook}"
    assert version // 10000 == major == server.major


def test_pgxn_metadata_matches_the_extension():
    """META.json (PGXN, spec 1.0.0) names what the build installs."""
    import json
    import re
    from pathlib import Path
    top = Path(__file__).resolve().parent.parent
    meta = json.loads((top / "META.json").read_text())
    control = (top / "vacskip.control").read_text()
    default = re.search(r"default_version = '([^']+)'", control).group(1)
    extversion = re.search(r"^EXTVERSION = (\S+)$", (top / "Makefile").read_text(),
                           re.M).group(1)
    provided = meta["provides"]["vacskip"]
    assert default == extversion
    assert meta["version"].startswith(default + ".") and provided["version"] == meta["version"]
    assert provided["file"] == f"vacskip--{default}.sql" and (top / provided["file"]).exists()
    assert (top / provided["docfile"]).exists()
    assert meta["meta-spec"]["version"] == "1.0.0"
    assert {"name", "abstract", "maintainer", "license"} <= set(meta)
    assert "patch" in meta["description"]


def test_calibrate_returns_its_rounds(server, make_cluster):
    """calibrate()'s figures and noises follow from the rounds it returns
    (round_read_us, round_start_read_us) as docs/model.md says they are
    taken: bench/noise_rules.py transcribes calibration.cpp's, and the two
    must agree on every figure and every density's noise, with buffered
    reads and, where the server has them (16 and later), direct reads,
    where timings a disturbance took are set aside first."""
    import os
    from pathlib import Path
    from bench import noise_rules
    import pytest
    paths = [{}] + ([{"debug_io_direct": "'data'"}] if server.major >= 16 else [])
    for extra in paths:
        node = make_cluster(server, {"shared_preload_libraries": "'vacskip'", **extra})
        with node.connect() as conn:
            conn.execute("CREATE EXTENSION vacskip")
            # three rounds or more, or the noise would hardly be tested (it
            # is 0 after one round, and with two a pattern's rounds lie
            # alike about its median): 12 seconds, and on a machine too
            # busy for three rounds in them, 40
            for seconds in (12, 40):
                cur = conn.execute("SELECT * FROM vacskip.calibrate('pg_default', %s)",
                                   (seconds,))
                cal = dict(zip([d.name for d in cur.description], cur.fetchone()))
                if cal["rounds"] >= 3:
                    break
        node.stop()
        assert cal["io_path"].startswith("direct reads" if extra else "buffered reads")
        assert cal["rounds"] >= 3, cal["rounds"]
        got = noise_rules.figures(cal)
        flat = noise_rules.flat
        # each pattern's share of its time on a CPU: the median of its
        # rounds' (round_cpu_share), each a share of a time
        import statistics
        assert all(0 <= x <= 1 for x in flat(cal["round_cpu_share"]))
        assert [statistics.median(rounds) for row in cal["round_cpu_share"] for rounds in row] \
            == pytest.approx(flat(cal["read_cpu_share"]), rel=1e-12, abs=1e-15)
        for key, values in zip(("read_us", "read_noise", "start_read_us",
                                "start_read_noise"), got):
            assert flat(values) == pytest.approx(flat(cal[key]), rel=1e-9, abs=1e-12), key
        assert all(n > 0 for n in cal["read_noise"])
        # the device's read requests, per pattern and round, where the
        # kernel counts the reads of the device under the data directory:
        # each pattern's pages were evicted before it, so its first part
        # (from the file's first page on) asks the device for some, and with
        # direct reads every part does, one figure for both.  With buffered
        # reads the rest of a dense pattern (16 to 256 pages to read, a page
        # or two apart) may lie wholly inside a readahead window the kernel
        # began in the first part (read_ahead_kb: 128 kB by default, 8 MB,
        # 1,024 pages, on some virtual disks) and count none, which
        # calibrate() allows for (src/core/calibration.cpp,
        # density_figures()); the sparsest density's pages to read lie 100
        # pages apart on average, 16 of them at least, and there each rest
        # asks the device for some.
        st = os.stat(node.datadir)
        counted = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat")
        if not counted.exists():
            assert cal["round_requests"] is None and cal["round_start_requests"] is None
            continue
        for key in ("round_requests", "round_start_requests"):
            assert len(flat(cal[key])) == len(flat(cal["round_read_us"])), key
            assert all(r >= 0 for r in flat(cal[key])), key
        assert all(r > 0 for r in flat(cal["round_start_requests"]))
        sparsest = cal["round_requests"] if extra else cal["round_requests"][0]
        assert all(r > 0 for r in flat(sparsest))
        assert (cal["round_start_requests"] == cal["round_requests"]) == bool(extra)

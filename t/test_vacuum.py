"""What VACUUM reads under vacskip.threshold, on real servers.

Every expected count is derived twice: from the pattern the table was built
with (closed form) and from the live visibility map run through the model in
vacuum_model.py.
"""

import pytest

from pgkit.tables import make_mixed_table, make_pattern_table, visibility_map
from pgkit.vacuum import (normalize, parse_report, relation_buffers, relfrozenxid,
                          vacuum_verbose)
from vacuum_model import STOCK_THRESHOLD, predict

PAGES, EVERY = 1000, 10


def closed_form(threshold):
    """Pages read for the pattern: every EVERY-th page modified from page 0,
    runs of EVERY-1 all-frozen pages between them, the last page always read."""
    modified = len(range(0, PAGES, EVERY))
    last_is_modified = (PAGES - 1) % EVERY == 0
    if EVERY - 1 >= threshold:
        # every full run is skipped; the final run ends at the last page,
        # which is read, so it is one page shorter
        final_run = (PAGES - 1) - (modified - 1) * EVERY - 1
        final_read = final_run if final_run < threshold else 0
        return modified + final_read + (0 if last_is_modified else 1)
    return PAGES


@pytest.mark.patched
@pytest.mark.parametrize("threshold", [1, 4, 8, 32, None], ids=lambda t: f"t{t or 'default'}")
def test_scanned_pages_follow_threshold(node, threshold):
    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        vm = visibility_map(conn)
        if threshold is not None:
            conn.execute(f"SET vacskip.threshold = {threshold}")
        # autotuning with PostgreSQL's default settings chooses stock's 32
        effective = threshold or STOCK_THRESHOLD
        expected = predict(vm, effective)
        assert expected.scanned == closed_form(effective)

        report = parse_report(vacuum_verbose(conn))

    assert report.rel_pages == PAGES
    assert report.scanned == expected.scanned
    if effective == STOCK_THRESHOLD:
        # unchanged thresholds: output exactly as stock, no extra line
        assert report.thresholds is None
    else:
        assert report.thresholds == (effective, effective)
        assert report.short_runs == expected.short_runs


@pytest.mark.patched
def test_short_runs_counted(node):
    """At threshold 10 every run is read: 99 runs of 9 pages and the final
    run of 8, 899 short-run pages."""
    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        vm = visibility_map(conn)
        conn.execute("SET vacskip.threshold = 10")
        report = parse_report(vacuum_verbose(conn))
    expected = predict(vm, 10)
    assert report.scanned == PAGES == expected.scanned
    assert report.short_runs == expected.short_runs == PAGES - len(range(0, PAGES, EVERY)) - 1


@pytest.mark.patched
def test_load_per_session(server, make_cluster):
    """Without shared_preload_libraries, LOAD or CREATE EXTENSION in a session
    makes that session's VACUUMs use the setting; other sessions stay stock."""
    node = make_cluster(server)
    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        conn.execute("SET vacskip.threshold = 4")   # placeholder until loaded
        assert parse_report(vacuum_verbose(conn)).scanned == PAGES

    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        conn.execute("LOAD 'vacskip'")
        conn.execute("SET vacskip.threshold = 4")
        report = parse_report(vacuum_verbose(conn))
        assert report.scanned == closed_form(4)
        assert report.thresholds == (4, 4)

    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        conn.execute("CREATE EXTENSION vacskip")
        conn.execute("SET vacskip.threshold = 8")
        assert parse_report(vacuum_verbose(conn)).scanned == closed_form(8)


@pytest.mark.patched
def test_aggressive_vacuum_skips_only_frozen_runs(node):
    """VACUUM (FREEZE) is aggressive: all-visible, unfrozen pages are read
    whatever the threshold, only all-frozen runs follow it, and relfrozenxid
    advances."""
    with node.connect() as conn:
        make_mixed_table(conn)
        vm = visibility_map(conn)
        expected = predict(vm, 1, aggressive=True)
        assert expected.scanned < predict(vm, 32, aggressive=True).scanned
        conn.execute("SET vacskip.threshold = 1")
        before = relfrozenxid(conn)
        text = vacuum_verbose(conn, options="VERBOSE, FREEZE")
        assert relfrozenxid(conn) != before
    assert "aggressively vacuuming" in text
    report = parse_report(text)
    assert report.scanned == expected.scanned
    assert report.short_runs == expected.short_runs == 0


@pytest.mark.patched
def test_a_page_read_through_costs_a_miss_and_a_hit(node):
    """What the autotuner prices under the cost-based delay
    (cost_delay_us()): each page a threshold reads through costs VACUUM
    a miss, the page read in, and a hit, the free space map's page, in
    shared buffers since VACUUM recorded the first page's free space in
    it, where it records this page's.  The same table at 1 and at 32,
    each VACUUM after a restart (shared buffers empty): 32 reads through
    the runs of 9, and nothing more.  Hits and misses are the table's own
    (all forks): VACUUM VERBOSE's buffer usage also counts the catalog
    lookups of the backend, whose number varies by a few from one run of
    the same steps to the next."""
    used, own = {}, {}
    for threshold in (1, 32):
        with node.connect() as conn:
            conn.execute("DROP TABLE IF EXISTS t")
            make_pattern_table(conn, pages=PAGES, every=EVERY)
            conn.execute("CHECKPOINT")
        node.stop()
        node.start()
        with node.connect() as conn:
            conn.execute(f"SET vacskip.threshold = {threshold}")
            before = relation_buffers(conn)
            used[threshold] = parse_report(vacuum_verbose(conn))
            own[threshold] = [a - b for a, b in zip(relation_buffers(conn), before)]
    through = used[32].scanned - used[1].scanned
    assert through == closed_form(32) - closed_form(1) > 0
    (hits_32, misses_32), (hits_1, misses_1) = own[32], own[1]
    assert misses_32 - misses_1 == through
    assert hits_32 - hits_1 == through
    # reading through dirties nothing
    assert used[32].buffers[2] == used[1].buffers[2]


def test_parse_report_buffer_usage():
    """The heap's buffer usage, as 15 and as 18 write it, not the TOAST
    table's after it; and the delay time 18 reports."""
    def text(word, delay=""):
        heap = ("finished vacuuming \"postgres.public.t\": index scans: 0\n"
                "pages: 0 removed, 1000 remain, 101 scanned (10.10% of total)\n"
                f"{delay}buffer usage: 1106 hits, 101 {word}, 102 dirtied\n")
        toast = ("finished vacuuming \"postgres.pg_toast.pg_toast_1\": index scans: 0\n"
                 "pages: 0 removed, 0 remain, 0 scanned (100.00% of total)\n"
                 f"buffer usage: 10 hits, 0 {word}, 0 dirtied\n")
        return heap + toast
    assert parse_report(text("misses")).buffers == (1106, 101, 102)
    assert parse_report(text("misses")).delay_ms is None
    got = parse_report(text("reads", "delay time: 12.345 ms\n"))
    assert got.buffers == (1106, 101, 102) and got.delay_ms == 12.345


@pytest.mark.patched
def test_disable_page_skipping_reads_everything(node):
    with node.connect() as conn:
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        conn.execute("SET vacskip.threshold = 1")
        report = parse_report(vacuum_verbose(conn, options="VERBOSE, DISABLE_PAGE_SKIPPING"))
    assert report.scanned == PAGES
    # with skipping disabled no run can be skipped: VACUUM does not ask the
    # hook, so the stock thresholds apply and no thresholds line is printed
    assert report.thresholds is None


@pytest.mark.stock
def test_stock_server_loads_and_warns(node):
    """The same vacskip.so loads on a server without the patch; setting the
    threshold warns and changes nothing."""
    with node.connect() as conn:
        conn.execute("CREATE EXTENSION vacskip")
        assert conn.execute("SELECT vacskip.hook_active()").fetchone()[0] is False
        warnings = []
        conn.add_notice_handler(lambda d: warnings.append((d.severity_nonlocalized,
                                                           d.sqlstate, d.message_primary)))
        conn.execute("SET vacskip.threshold = 4")
        assert warnings == [("WARNING", "0A000",
                             "vacskip.threshold has no effect on this server")]
        make_pattern_table(conn, pages=PAGES, every=EVERY)
        report = parse_report(vacuum_verbose(conn))
    assert report.scanned == PAGES
    assert report.thresholds is None


def _verbose_without_module(cluster):
    with cluster.connect() as conn:
        out = []
        for make, options in ((make_pattern_table, "VERBOSE"),
                              (make_mixed_table, "VERBOSE"),
                              (make_mixed_table, "VERBOSE, FREEZE"),
                              (make_mixed_table, "VERBOSE, DISABLE_PAGE_SKIPPING")):
            make(conn)
            before = relfrozenxid(conn)
            text = vacuum_verbose(conn, options=options)
            out.append((options, normalize(text), relfrozenxid(conn) != before))
    return out


@pytest.mark.patched
@pytest.mark.parametrize("threshold", [1, 4, 16, 32, 1000], ids=lambda t: f"t{t}")
def test_mixed_map_and_relfrozenxid(node, threshold):
    """Runs of all-frozen and all-visible pages of many lengths: the pages
    read match the model, and relfrozenxid advances exactly when no run with
    an all-visible, unfrozen page was skipped."""
    with node.connect() as conn:
        make_mixed_table(conn)
        vm = visibility_map(conn)
        assert any(v and not f for v, f in vm), "want all-visible, unfrozen pages"
        expected = predict(vm, threshold)
        conn.execute(f"SET vacskip.threshold = {threshold}")
        # freeze everything read, so that relfrozenxid can move past the
        # XIDs on the all-visible pages whenever no such page is skipped
        conn.execute("SET vacuum_freeze_min_age = 0")
        before = relfrozenxid(conn)
        report = parse_report(vacuum_verbose(conn))
        advanced = relfrozenxid(conn) != before
    assert report.scanned == expected.scanned
    if threshold != STOCK_THRESHOLD:
        assert report.short_runs == expected.short_runs
    assert advanced == (not expected.skipped_allvis)


@pytest.mark.patched
def test_no_module_output_identical_to_stock(server, make_cluster):
    """A patched server without vacskip prints what the stock build of the
    same source prints, line for line (run-to-run noise masked), and
    advances relfrozenxid alike."""
    from conftest import SERVERS
    stock = [s for s in SERVERS if s.major == server.major and s.variant == "stock"]
    assert stock, f"needs a stock build of PostgreSQL {server.major} to compare with"
    patched_out = _verbose_without_module(make_cluster(server))
    stock_out = _verbose_without_module(make_cluster(stock[0]))
    assert patched_out == stock_out
    assert not any("skip thresholds" in text for _, text, _ in patched_out)

"""vacskip chains to a skip threshold hook installed before it."""

import pytest

from pgkit import TOP
from pgkit.server import install_extension
from pgkit.tables import make_pattern_table
from pgkit.vacuum import parse_report, vacuum_verbose


@pytest.mark.patched
def test_vacskip_calls_previous_hook(server, make_cluster, workdir):
    install_extension(TOP / "t" / "modules" / "skip_probe",
                      workdir / f"skip_probe-{server.name}", server.pg_config,
                      [server.pg_config])

    # skip_probe installs its hook first; vacskip saves and chains to it
    node = make_cluster(server, {"shared_preload_libraries": "'skip_probe,vacskip'"})
    notices = []
    with node.connect() as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary)
                                if d.severity_nonlocalized == "NOTICE" else None)
        make_pattern_table(conn, pages=100, every=10)
        conn.execute("SET vacskip.threshold = 4")
        notices.clear()     # make_pattern_table's VACUUM (FREEZE) called it too
        report = parse_report(vacuum_verbose(conn))

    # the probe ran first, with the core's defaults, once for the table (and
    # once for its TOAST table); vacskip then set the thresholds it reports
    assert "skip_probe: t, 100 pages, aggressive 0, got 32/32" in notices
    assert len([n for n in notices if n.startswith("skip_probe:")]) == 2
    assert report.thresholds == (4, 4)
    assert report.scanned == 11

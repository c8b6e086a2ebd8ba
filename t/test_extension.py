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


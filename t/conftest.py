"""pytest driver for vacskip: servers, extension builds and clusters.

The servers come from VACSKIP_SERVERS, set by tools/test (make test):
comma-separated NAME=PREFIX entries, NAME being MAJOR-VARIANT with VARIANT
patched (our build with patches/pgMAJOR), stock (our build of the same
pristine source), debian (Debian's package) or hook (the series with the
word-at-a-time walk's use in vacuumlazy.c reverted: a reference for tests
that compare with the per-block lookahead; no test is generated for it),
optionally followed by "+tap" for
servers with the TAP test modules, e.g.
"18-patched+tap=/var/cache/vacskip/.../install".

Tests receive a `server` parameter for every server they apply to:
  @pytest.mark.patched  only servers with the skip threshold hook
  @pytest.mark.stock    only servers without it
  @pytest.mark.tap      only servers built with TAP support
Tests whose marks exclude a server are not generated for it (never skipped).
"""

import os
import subprocess

import pytest

from pgkit import TOP
from pgkit.cluster import Cluster
from pgkit.proc import as_build_user, make_workdir, remove_tree
from pgkit.server import install_extension, parse_servers, private_copy

try:
    SERVERS = parse_servers(os.environ.get("VACSKIP_SERVERS", ""))
except ValueError as e:
    raise pytest.UsageError(f"VACSKIP_SERVERS: {e}") from None


def pytest_configure(config):
    for mark, text in (("patched", "needs a server with the skip threshold hook"),
                       ("stock", "needs a server without the hook"),
                       ("tap", "needs a server built with TAP support")):
        config.addinivalue_line("markers", f"{mark}: {text}")
    if not SERVERS:
        raise pytest.UsageError("VACSKIP_SERVERS is not set; run the suite with `make test`")


def pytest_generate_tests(metafunc):
    if "server" not in metafunc.fixturenames:
        return
    wanted = [s for s in SERVERS if s.variant != "hook"]   # references only
    if metafunc.definition.get_closest_marker("patched"):
        wanted = [s for s in wanted if s.patched]
    if metafunc.definition.get_closest_marker("stock"):
        wanted = [s for s in wanted if not s.patched]
    if metafunc.definition.get_closest_marker("tap"):
        wanted = [s for s in wanted if s.tap]
    metafunc.parametrize("server", wanted, ids=[s.name for s in wanted], indirect=True)


def pytest_collection_modifyitems(config, items):
    """Drop tests whose marks exclude every configured server: they do not
    apply to this run (pytest would otherwise report them as skipped)."""
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if "server" in item.fixturenames and (callspec is None or
                                               "server" not in callspec.params):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
    if rep.failed:
        _any_failure[0] = True


# Set when a test fails, so that the session keeps its clusters and logs.
_any_failure = [False]


@pytest.fixture(scope="session")
def workdir():
    path = make_workdir("vacskip-test-")
    yield path
    if os.environ.get("VACSKIP_KEEP") is None and not _any_failure[0]:
        remove_tree(path)
    else:
        print(f"\nkept test clusters and logs in {path}")


@pytest.fixture(scope="session")
def private_servers(workdir):
    """The servers of this session, each a private copy of its installation
    (PostgreSQL installations are relocatable), so that installing vacskip
    changes neither the build cache nor the system's packages, and concurrent
    sessions testing different trees do not overwrite each other's module."""
    return {s.name: private_copy(s, workdir / "servers" / s.name) for s in SERVERS}


@pytest.fixture(scope="session")
def ext_build(workdir, private_servers):
    """Build vacskip once per major, against the patched server when there is
    one, and install the same vacskip.so into every server of that major."""
    built = {}

    def get(server):
        if server.major in built:
            return built[server.major]
        same_major = [s for s in private_servers.values() if s.major == server.major]
        primary = next((s for s in same_major if s.patched), server)
        src = install_extension(TOP, workdir / f"ext-{server.major}", primary.pg_config,
                                [s.pg_config for s in same_major])
        built[server.major] = src
        return src

    return get


@pytest.fixture
def server(request, ext_build, private_servers):
    srv = private_servers[request.param.name]
    ext_build(srv)
    return srv


@pytest.fixture
def make_cluster(request, workdir):
    """Factory: make_cluster(server, settings) -> started Cluster.

    Stopped at the end of the test; fails the test when a server process was
    terminated by a signal; prints the log tail when the test failed."""
    clusters = []

    def make(server, settings=None, start=True):
        c = Cluster(server, workdir, settings, name=request.node.name[:40]
                    .replace("[", "-").replace("]", "").replace("/", "_"))
        clusters.append(c)
        return c.start() if start else c

    yield make
    crashed = []
    for c in clusters:
        try:
            c.stop()
        except RuntimeError as e:
            crashed.append(f"{c.base}: stop failed: {e}")
        if c.crashed():
            crashed.append(f"{c.base}: a server process was terminated by a signal")
        failed = getattr(request.node, "rep_call", None)
        if crashed or (failed is not None and failed.failed):
            print(f"\n--- log of {c.base} (last 60 lines) ---")
            print("\n".join(c.log().splitlines()[-60:]))
    if crashed:
        pytest.fail("\n".join(crashed))


@pytest.fixture
def node(server, make_cluster):
    """A started cluster with vacskip in shared_preload_libraries."""
    return make_cluster(server, {"shared_preload_libraries": "'vacskip'"})


def run_as_build_user(cmd, env=None, cwd=None):
    return subprocess.run(as_build_user(cmd), env=env, cwd=cwd, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

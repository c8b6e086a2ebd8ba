"""The word-at-a-time visibility map walk decides exactly as the walk before it.

patches/pg18 0001 and patches/pg15 0003 make find_next_unskippable_block()
read the visibility map a 64-bit word at a time.  These tests run the same
VACUUMs on the same data directory with the patched server and with the
"hook" build (the series with the walk's use in vacuumlazy.c reverted, one
block at a time) and
require identical VERBOSE output (run-to-run noise masked), relfrozenxid and
visibility map afterwards; the pages scanned are also checked against the
model in vacuum_model.py.

The pattern tables are built once, on the patched cluster; its data
directory is then copied to the hook cluster, so both start from the same
bytes.  Each setting runs on a fresh copy of the pattern database
(CREATE DATABASE ... TEMPLATE), since a VACUUM changes the map it read.
"""

import random
import re
import shutil

import pytest

from conftest import SERVERS
from pgkit.proc import run
from pgkit.tables import make_state_table, map_states, relation_pages, visibility_map
from pgkit.vacuum import normalize, parse_report, relfrozenxid, vacuum_verbose
from vacuum_model import predict

SEED = 20261130
N_PATTERNS = 120
# Lengths around the word size (32 heap blocks per 64-bit map word) and the
# stock threshold, and lengths of skippable runs in the patterns.
EDGE_LENGTHS = (1, 2, 3, 31, 32, 33, 34, 63, 64, 65, 96, 97)
RUN_LENGTHS = (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 100)
# (vacskip.threshold, VACUUM options): thresholds 1 to 32, and aggressive
# VACUUM (FREEZE) and DISABLE_PAGE_SKIPPING at some of them
SETTINGS = ([(t, "VERBOSE") for t in (1, 2, 3, 4, 8, 16, 32)] +
            [(t, "VERBOSE, FREEZE") for t in (1, 4, 32)] +
            [(t, "VERBOSE, DISABLE_PAGE_SKIPPING") for t in (1, 32)])


def random_patterns(rng, count):
    """`count` lists of page states: 'f' all-frozen, 'v' all-visible (not
    frozen), 'n' not all-visible, in runs of irregular length."""
    patterns = []
    for i in range(count):
        n = EDGE_LENGTHS[i] if i < len(EDGE_LENGTHS) else rng.randint(1, 200)
        pages = []
        while len(pages) < n:
            state = rng.choices("fvn", weights=(5, 2, 2))[0]
            length = (rng.choice(RUN_LENGTHS) if rng.random() < 0.7
                      else rng.randint(1, 80))
            pages += state * length
        patterns.append("".join(pages[:n]))
    return patterns


def build_pattern_tables(conn, patterns):
    """Table pK for pattern K (make_state_table(): 4 rows per page,
    VACUUM (FREEZE), a HOT update on every 'v' and 'n' page, a plain VACUUM,
    a second update on the 'n' pages)."""
    for k, pat in enumerate(patterns):
        make_state_table(conn, f"p{k}", pat)


def run_setting(conn, names, threshold, options, gucs=()):
    """VACUUM every table with one setting; per table: (normalized VERBOSE
    output, pages scanned, relfrozenxid, the map afterwards)."""
    conn.execute(f"SET vacskip.threshold = {threshold}")
    for guc in gucs:
        conn.execute(f"SET {guc}")
    out = {}
    for name in names:
        text = vacuum_verbose(conn, name, options)
        out[name] = (normalize(text), parse_report(text).scanned, relfrozenxid(conn, name),
                     visibility_map(conn, name))
    return out


def hook_reference(server, private_servers):
    ref = [s for s in SERVERS if s.major == server.major and s.variant == "hook"]
    assert ref, (f"needs the hook build of PostgreSQL {server.major} "
                 "(tools/pgdev build MAJOR test hook) in VACSKIP_SERVERS")
    return private_servers[ref[0].name]


def twin_clusters(server, reference, make_cluster, settings, build):
    """Start a cluster of `server`, run build(conn) in its database "work",
    stop it, copy its data directory into a cluster of `reference` (keeping
    that cluster's own postgresql.conf: port and socket), start both and
    return them."""
    a = make_cluster(server, settings)
    with a.connect() as conn:
        conn.execute("CREATE DATABASE work")
    with a.connect(dbname="work") as conn:
        conn.execute("CREATE EXTENSION pg_visibility")
        build(conn)
    a.stop()
    b = make_cluster(reference, settings, start=False)
    conf = b.datadir / "postgresql.conf"
    saved = conf.read_bytes()
    shutil.rmtree(b.datadir)
    run(["cp", "-a", str(a.datadir), str(b.datadir)])
    conf.write_bytes(saved)
    return a.start(), b.start()


CLUSTER_SETTINGS = {"shared_preload_libraries": "'vacskip'",
                    "checkpoint_timeout": "'1h'", "max_wal_size": "'8GB'"}


@pytest.mark.patched
def test_same_decisions_on_random_maps(server, make_cluster, private_servers):
    """>= 100 random maps, each under every setting: the patched server and
    the hook build print the same VERBOSE output, leave the same
    relfrozenxid and map, and read the pages the model predicts."""
    patterns = random_patterns(random.Random(SEED), N_PATTERNS)
    names = [f"p{k}" for k in range(len(patterns))]
    new, old = twin_clusters(server, hook_reference(server, private_servers),
                             make_cluster, CLUSTER_SETTINGS,
                             lambda conn: build_pattern_tables(conn, patterns))

    with new.connect(dbname="work") as conn:
        before = {n: visibility_map(conn, n) for n in names}
    states = "".join(map_states(vm) for vm in before.values())
    # the maps really mix the three states (an opportunistic freeze may turn
    # some intended 'v' page into 'f'; the model reads the live map anyway)
    assert N_PATTERNS >= 100 and len(before) == N_PATTERNS
    assert min(states.count(s) for s in "fvn") > len(states) // 10, states.count("v")

    mismatches = []
    for i, (threshold, options) in enumerate(SETTINGS):
        results = []
        for cluster in (new, old):
            with cluster.connect() as conn:
                conn.execute(f"CREATE DATABASE s{i} TEMPLATE work STRATEGY FILE_COPY")
            with cluster.connect(dbname=f"s{i}") as conn:
                results.append(run_setting(conn, names, threshold, options))
            with cluster.connect() as conn:
                conn.execute(f"DROP DATABASE s{i}")
        got, want = results
        for name in names:
            if got[name] != want[name]:
                mismatches.append((threshold, options, name, got[name][:3], want[name][:3]))
            if "DISABLE_PAGE_SKIPPING" in options:
                expected = len(before[name])
            else:
                expected = predict(before[name], threshold,
                                   aggressive="FREEZE" in options).scanned
            assert got[name][1] == expected, (threshold, options, name)
    assert not mismatches, mismatches[:3]


EAGER_RE = re.compile(r"(\d+) eagerly scanned")
HEAPBLOCKS_PER_PAGE = 32_672   # heap pages one map page covers (8 kB blocks)
BIG_PAGES = 33_000


def build_big_table(conn):
    conn.execute("CREATE TABLE big (id int, pad text) "
                 "WITH (autovacuum_enabled = off, fillfactor = 50)")
    conn.execute("INSERT INTO big SELECT g, repeat('x', 900) "
                 "FROM generate_series(1, %s) g", (HEAPBLOCKS_PER_PAGE * 4,))
    conn.execute("VACUUM (FREEZE) big")
    # the new pages are not all-visible; the map still has a single page, so
    # the first walk passes over all of it and runs into the missing second
    conn.execute("INSERT INTO big SELECT g, repeat('x', 900) "
                 "FROM generate_series(%s, %s) g",
                 (HEAPBLOCKS_PER_PAGE * 4 + 1, BIG_PAGES * 4))
    assert relation_pages(conn, "big") == BIG_PAGES
    assert relation_pages(conn, "big", "vm") == 1


def touch_pages(conn, rng, count):
    """HOT-update one row on `count` random pages, a third of them near the
    boundary between the first two map pages."""
    pages = set(rng.sample(range(BIG_PAGES), count * 2 // 3))
    pages |= set(rng.sample(range(32_600, 32_750), count // 3))
    ids = [4 * p + rng.randint(1, 4) for p in pages]
    conn.execute("UPDATE big SET pad = pad WHERE id = ANY(%s)", (ids,))


def big_steps(major):
    """(threshold, options, extra settings) for each VACUUM of the big table."""
    steps = [(1, "VERBOSE", ()), (32, "VERBOSE", ()), (4, "VERBOSE, FREEZE", ()),
             (2, "VERBOSE", ()), (1, "VERBOSE, FREEZE", ()), (8, "VERBOSE", ())]
    if major >= 18:
        # eager scanning of all-visible pages, with region accounting: freeze
        # everything old enough, so that eager scanning is enabled and every
        # eagerly scanned page freezes (decisions then do not depend on the
        # random start of the first region; with failures they would)
        eager = ("vacuum_max_eager_freeze_failure_rate = 1.0",
                 "vacuum_freeze_min_age = 0")
        steps += [(32, "VERBOSE", eager), (1, "VERBOSE", eager), (4, "VERBOSE", eager)]
    return steps


@pytest.mark.patched
def test_same_decisions_across_map_pages(server, make_cluster, private_servers):
    """A table longer than one map page whose map fork first covers only the
    first page: a sequence of VACUUMs under different settings, with random
    updates between them, decides identically on the patched server and the
    hook build at every step (on 18 also with eager scanning)."""
    new, old = twin_clusters(server, hook_reference(server, private_servers),
                             make_cluster, CLUSTER_SETTINGS, build_big_table)
    rng = random.Random(SEED)
    eager_seen = False
    for step, (threshold, options, gucs) in enumerate(big_steps(server.major)):
        seed = rng.random()
        results = []
        for cluster in (new, old):
            with cluster.connect(dbname="work") as conn:
                if step > 0:
                    touch_pages(conn, random.Random(seed), 300)
                    # some of the touched pages become all-visible, unfrozen
                    conn.execute("SET vacskip.threshold = 1")
                    conn.execute("VACUUM big")
                    touch_pages(conn, random.Random(seed + 1), 200)
                results.append(run_setting(conn, ["big"], threshold, options, gucs)["big"])
        got, want = results
        assert got == want, (step, threshold, options, gucs)
        eager_seen |= any(int(n) > 0 for n in EAGER_RE.findall(got[0]))
    if server.major >= 18:
        assert eager_seen, "no step scanned a page eagerly"

"""Tables with a known visibility-map pattern, and the live map.

Every table here has rows of ~900 bytes, 4 per page (fillfactor 50 leaves
room for a HOT update on every page), row n on page (n-1)/4, and is
all-frozen after make_frozen_table(); HOT updates of chosen pages then make
those pages not all-visible, and a plain VACUUM all-visible again without
freezing them.
"""


def relation_pages(conn, name, fork="main"):
    """Pages of a relation's fork, in the server's block size."""
    return conn.execute("SELECT pg_relation_size(%s::regclass, %s) "
                        "/ current_setting('block_size')::int", (name, fork)).fetchone()[0]


def make_frozen_table(conn, name="t", pages=1000):
    """A table of exactly `pages` pages of 4 rows (row n on page (n-1)/4),
    all-frozen after VACUUM (FREEZE)."""
    with conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {name}")
        # 8 rows of ~900 bytes fill a page to ~90 %; fillfactor 50 leaves
        # room for a HOT update on every page.
        cur.execute(f"CREATE TABLE {name} (id int, pad text) "
                    "WITH (autovacuum_enabled = off, fillfactor = 50)")
        cur.execute(f"INSERT INTO {name} SELECT g, repeat('x', 900) "
                    "FROM generate_series(1, %s) g", (pages * 4,))
    got = relation_pages(conn, name)
    assert got == pages, f"{name} has {got} pages, wanted {pages}"
    conn.execute(f"VACUUM (FREEZE) {name}")


def update_pages(conn, name, pages, item=1):
    """HOT-update tuple `item` of each of `pages` (id = -id, on the same
    page); returns how many rows were updated."""
    cur = conn.execute(f"UPDATE {name} SET id = -id WHERE ctid = ANY(%s::tid[])",
                       ([f"({p},{item})" for p in pages],))
    return cur.rowcount


def make_pattern_table(conn, name="t", pages=1000, every=10):
    """A table of `pages` pages, all-frozen after VACUUM (FREEZE), then one
    tuple updated (HOT, on the same page) on every `every`-th page starting
    at page 0.  Returns the numbers of the modified pages."""
    make_frozen_table(conn, name, pages)
    modified = list(range(0, pages, every))
    assert update_pages(conn, name, modified) == len(modified)
    return modified


# Gaps between the pages modified last in make_mixed_table(): runs of 2 to
# 99 skippable pages, some just under and some just over 32.
MIXED_GAPS = (3, 40, 9, 33, 31, 100, 2, 17, 64, 5, 32)


def make_mixed_table(conn, name="t", pages=1000):
    """A table whose visibility map mixes all-frozen pages, all-visible pages
    that are probably not frozen, and not-all-visible pages in runs of
    irregular length.  Returns nothing; read the map with visibility_map()."""
    make_pattern_table(conn, name, pages=pages, every=50)   # pages 0, 50, ...
    # pages 0, 50, 100, ... become all-visible again, without freezing
    conn.execute(f"VACUUM {name}")
    modified, page, i = [], 1, 0
    while page < pages:
        modified.append(page)
        page += MIXED_GAPS[i % len(MIXED_GAPS)]
        i += 1
    assert update_pages(conn, name, modified, item=2) == len(modified)


def make_state_table(conn, name, states, vacuum_threshold=None, before_last_update=None):
    """A table of len(states) pages whose map follows `states`, one letter a
    page: 'f' all-frozen, 'v' all-visible but not frozen, 'n' not
    all-visible.  make_frozen_table(), a HOT update on every 'v' and 'n'
    page, a plain VACUUM (at vacskip.threshold `vacuum_threshold` when given)
    that makes them all-visible again without freezing them (the update
    already wrote the page image, so pruning does not trigger opportunistic
    freezing), before_last_update() when given, and a second update on the
    'n' pages.  (An opportunistic freeze may still turn a 'v' page into 'f':
    read the live map with visibility_map().)"""
    make_frozen_table(conn, name, len(states))
    touched = [p for p, s in enumerate(states) if s in "vn"]
    if touched:
        update_pages(conn, name, touched)
        if vacuum_threshold is not None:
            conn.execute(f"SET vacskip.threshold = {vacuum_threshold}")
        conn.execute(f"VACUUM {name}")
        if vacuum_threshold is not None:
            conn.execute("RESET vacskip.threshold")
    if before_last_update is not None:
        before_last_update()
    dirty = [p for p, s in enumerate(states) if s == "n"]
    if dirty:
        update_pages(conn, name, dirty, item=2)


def visibility_map(conn, name="t"):
    """[(all_visible, all_frozen)] for every page, read from the live map
    (pg_visibility, created here if missing)."""
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_visibility")
    return [(bool(v), bool(f)) for v, f in conn.execute(
        f"SELECT all_visible, all_frozen FROM pg_visibility_map('{name}') "
        "ORDER BY blkno").fetchall()]


def map_states(vm):
    """A visibility_map() as make_state_table()'s letters ('f', 'v', 'n')."""
    return "".join("n" if not v else "f" if f else "v" for v, f in vm)

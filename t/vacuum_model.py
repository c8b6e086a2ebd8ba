"""Tables with a known visibility-map pattern, VACUUM VERBOSE parsing, and an
independent model of which pages a non-aggressive VACUUM reads.

The model is the skip rule written down from its description, not from the
code: a run of pages that the visibility map lets VACUUM skip is skipped iff
it is at least `threshold` pages long; the last page of the table is always
read; a page that is not all-visible is always read.
"""

import re
from dataclasses import dataclass

STOCK_THRESHOLD = 32  # SKIP_PAGES_THRESHOLD in vacuumlazy.c


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
        cur.execute(f"SELECT pg_relation_size('{name}') / current_setting('block_size')::int")
        got = cur.fetchone()[0]
        assert got == pages, f"table has {got} pages, wanted {pages}"
        cur.execute(f"VACUUM (FREEZE) {name}")


def make_pattern_table(conn, name="t", pages=1000, every=10):
    """A table of `pages` pages, all-frozen after VACUUM (FREEZE), then one
    tuple updated (HOT, on the same page) on every `every`-th page starting
    at page 0.  Returns the numbers of the modified pages."""
    make_frozen_table(conn, name, pages)
    with conn.cursor() as cur:
        modified = list(range(0, pages, every))
        cur.execute(f"UPDATE {name} SET id = -id WHERE ctid = ANY(%s::tid[])",
                    ([f"({p},1)" for p in modified],))
        assert cur.rowcount == len(modified)
    return modified


# Gaps between the pages modified last in make_mixed_table(): runs of 2 to
# 99 skippable pages, some just under and some just over 32.
MIXED_GAPS = (3, 40, 9, 33, 31, 100, 2, 17, 64, 5, 32)


def make_mixed_table(conn, name="t", pages=1000):
    """A table whose visibility map mixes all-frozen pages, all-visible pages
    that are probably not frozen, and not-all-visible pages in runs of
    irregular length.  Returns nothing; read the map with visibility_map()."""
    make_pattern_table(conn, name, pages=pages, every=50)   # pages 0, 50, ...
    with conn.cursor() as cur:
        # pages 0, 50, 100, ... become all-visible again, without freezing
        cur.execute(f"VACUUM {name}")
        modified, page, i = [], 1, 0
        while page < pages:
            modified.append(page)
            page += MIXED_GAPS[i % len(MIXED_GAPS)]
            i += 1
        cur.execute(f"UPDATE {name} SET id = -id WHERE ctid = ANY(%s::tid[])",
                    ([f"({p},2)" for p in modified],))
        assert cur.rowcount == len(modified)


def relfrozenxid(conn, name="t"):
    return conn.execute("SELECT relfrozenxid::text::bigint FROM pg_class "
                        "WHERE oid = %s::regclass", (name,)).fetchone()[0]


def visibility_map(conn, name="t"):
    """[(all_visible, all_frozen)] for every page, read from the live VM."""
    with conn.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pg_visibility")
        cur.execute(f"SELECT all_visible, all_frozen FROM pg_visibility_map('{name}') "
                    "ORDER BY blkno")
        return [(bool(v), bool(f)) for v, f in cur.fetchall()]


@dataclass
class Prediction:
    scanned: int          # pages VACUUM reads
    short_runs: int       # skippable pages read because their run was short
    skipped_allvis: bool  # skipped a run containing an all-visible, unfrozen page


def predict(vm, threshold_frozen, threshold_allvis=None, aggressive=False):
    """What a VACUUM with these thresholds reads.  An aggressive VACUUM
    (FREEZE, or relfrozenxid old enough) may skip only all-frozen pages."""
    if threshold_allvis is None:
        threshold_allvis = threshold_frozen
    n = len(vm)
    scanned = short = 0
    skipped_allvis = False
    block = 0
    while block < n:
        run_end = block
        has_allvis = False
        while vm[run_end][0] and run_end != n - 1:
            if not vm[run_end][1]:
                if aggressive:
                    break
                has_allvis = True
            run_end += 1
        run = run_end - block
        if run >= (threshold_allvis if has_allvis else threshold_frozen):
            skipped_allvis |= has_allvis and run > 0
        else:
            scanned += run
            short += run
        scanned += 1          # the unskippable page at run_end
        block = run_end + 1
    return Prediction(scanned, short, skipped_allvis)


def vacuum_verbose(conn, target="t", options="VERBOSE"):
    """Run VACUUM (options) target; return the INFO messages it sent."""
    messages = []

    def collect(diag):
        if diag.severity_nonlocalized == "INFO":
            messages.append(diag.message_primary)

    conn.add_notice_handler(collect)
    try:
        conn.execute(f"VACUUM ({options}) {target}")
    finally:
        conn.remove_notice_handler(collect)
    return "\n".join(messages)


@dataclass
class Report:
    rel_pages: int
    scanned: int
    thresholds: tuple | None     # (all_frozen, all_visible) when reported
    short_runs: int | None


PAGES_RE = re.compile(r"^pages: (\d+) removed, (\d+) remain, (\d+) scanned", re.M)
SKIP_RE = re.compile(r"^skip thresholds: (\d+) all-frozen, (\d+) all-visible; "
                     r"(\d+) skippable pages scanned in shorter runs$", re.M)


def parse_report(text):
    m = PAGES_RE.search(text)
    assert m, f"no pages: line in\n{text}"
    s = SKIP_RE.search(text)
    return Report(rel_pages=int(m.group(2)), scanned=int(m.group(3)),
                  thresholds=(int(s.group(1)), int(s.group(2))) if s else None,
                  short_runs=int(s.group(3)) if s else None)


# Parts of VACUUM VERBOSE output that differ from run to run.
_VOLATILE = [
    (re.compile(r"(removable cutoff: )\d+, which was \d+"), r"\1N, which was N"),
    (re.compile(r"(new relfrozenxid: )\d+, which is \d+"), r"\1N, which is N"),
    (re.compile(r"(new relminmxid: )\d+, which is \d+"), r"\1N, which is N"),
    (re.compile(r"^(avg read rate|buffer usage|WAL usage|system usage|I/O timings|"
                r"delay time).*$", re.M), r"\1: ..."),
]


def normalize(text):
    """VACUUM VERBOSE output with the run-to-run noise masked."""
    for pat, repl in _VOLATILE:
        text = pat.sub(repl, text)
    return text

"""VACUUM from a client: VERBOSE output and its parsing, timed VACUUMs,
vacskip.threshold, relfrozenxid."""

import re
import time
from dataclasses import dataclass


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
    buffers: tuple | None        # buffer usage: (hits, misses or reads, dirtied)
    delay_ms: float | None       # delay time (18, track_cost_delay_timing on)


PAGES_RE = re.compile(r"^pages: (\d+) removed, (\d+) remain, (\d+) scanned", re.M)
SKIP_RE = re.compile(r"^skip thresholds: (\d+) all-frozen, (\d+) all-visible; "
                     r"(\d+) skippable pages scanned in shorter runs$", re.M)
# "misses" before 18, "reads" from 18 on
BUFFERS_RE = re.compile(r"^buffer usage: (\d+) hits, (\d+) (?:misses|reads), (\d+) dirtied$",
                        re.M)
DELAY_RE = re.compile(r"^delay time: ([0-9.]+) ms$", re.M)


def parse_report(text):
    """VACUUM VERBOSE output -> Report (pages, vacskip's thresholds line,
    buffer usage, the time the cost-based delay slept)."""
    m = PAGES_RE.search(text)
    assert m, f"no pages: line in\n{text}"
    s = SKIP_RE.search(text)
    b = BUFFERS_RE.search(text)
    d = DELAY_RE.search(text)
    return Report(rel_pages=int(m.group(2)), scanned=int(m.group(3)),
                  thresholds=(int(s.group(1)), int(s.group(2))) if s else None,
                  short_runs=int(s.group(3)) if s else None,
                  buffers=tuple(int(x) for x in b.groups()) if b else None,
                  delay_ms=float(d.group(1)) if d else None)


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


def set_threshold(conn, threshold):
    """SET vacskip.threshold; "auto" is -1 (the autotuner)."""
    conn.execute(f"SET vacskip.threshold = {-1 if threshold == 'auto' else threshold}")


def timed_vacuum(conn, table):
    """Milliseconds a plain VACUUM of table takes, timed from the client."""
    t0 = time.perf_counter()
    conn.execute(f"VACUUM {table}")
    return (time.perf_counter() - t0) * 1000.0


def timed_vacuum_verbose(conn, table):
    """VACUUM (VERBOSE) table timed from the client: (ms, Report)."""
    t0 = time.perf_counter()
    text = vacuum_verbose(conn, table)
    ms = (time.perf_counter() - t0) * 1000.0
    return ms, parse_report(text)


def relfrozenxid(conn, name="t"):
    return conn.execute("SELECT relfrozenxid::text::bigint FROM pg_class "
                        "WHERE oid = %s::regclass", (name,)).fetchone()[0]


def relation_buffers(conn, name="t"):
    """(hits, reads) of the relation's own buffers, all its forks, as the
    cumulative statistics count them so far (pg_statio_all_tables).  This
    backend's counts are flushed first: pg_stat_force_next_flush() makes the
    next return to idle, before the next statement, flush them."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    return tuple(conn.execute(
        "SELECT heap_blks_hit, heap_blks_read FROM pg_statio_all_tables "
        "WHERE relid = %s::regclass", (name,)).fetchone())

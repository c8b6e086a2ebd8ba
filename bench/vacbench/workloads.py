"""Workloads: the table a row of the sweep VACUUMs and how a point modifies it.

Each workload is one class of WORKLOADS: created on a started cluster, it
builds its table; choose(frac, rep) says what a point at that fraction and
repetition changes (the same for every threshold, so the thresholds' times
are paired); prepare_point(node, conn, change) freezes the table, makes the
change and checkpoints, and returns the note stored with the point and the
pages the change left not all-visible.  The phases (phases.py) then make
the table cold and time VACUUM (VERBOSE) of `relation`.
"""

import json
import random

from pgkit.proc import run
from pgkit.tables import relation_pages, visibility_map

from bench.vacbench.harness import freeze
from bench.vacbench.progress import log


def not_all_visible(conn, rel):
    """Pages of rel the visibility map does not mark all-visible: what a
    point left for VACUUM to read whatever the threshold."""
    pages = relation_pages(conn, rel)
    visible = conn.execute("SELECT all_visible FROM pg_visibility_map_summary(%s::regclass)",
                           (rel,)).fetchone()[0]
    return pages - visible


def kept_map(conn, rel):
    """What VACUUM reads of rel at each threshold as its visibility map
    stands (map_counts()), as JSON: kept with each measurement, so that a
    run can be replayed where its change cannot be rebuilt offline."""
    vm = visibility_map(conn, rel)
    needed = [p for p, (all_visible, _) in enumerate(vm) if not all_visible]
    return json.dumps(map_counts(needed, len(vm)), separators=(",", ":"))


def map_counts(needed_pages, rel_pages, gaps=(1, 2, 4, 8, 16, 32)):
    """What VACUUM reads on a map whose pages to read are needed_pages (the
    last page always): pages to read, and per threshold of `gaps` the
    skippable pages read through and the runs of consecutive pages read."""
    pages = sorted(set(needed_pages) | {rel_pages - 1})
    through, runs = [], []
    for t in gaps:
        th, r = 0, 1
        if pages[0] < t:         # a first run shorter than T is read through
            th += pages[0]
        for a, b in zip(pages, pages[1:]):
            gap = b - a - 1
            if gap == 0:
                continue
            if gap < t:
                th += gap
            else:
                r += 1
        through.append(th)
        runs.append(r)
    return {"rel_pages": rel_pages, "needed": len(pages), "read_through": through,
            "io_runs": runs}


class RowTable:
    """A table `relation`(id int, val int, pad text) of ROW_PAD-character
    pads at FILLFACTOR, filled in id order, all-frozen.  Rows are chosen by
    id and found by ctid (tracked here, since an update moves a row: within
    its page when HOT, elsewhere when the page has no room)."""

    name = relation = description = frac_text = None
    ROW_PAD = 36
    FILLFACTOR = 90
    size_key = "sweep_pages"

    def __init__(self, node, conn, pages):
        rel = self.relation
        conn.execute(f"DROP TABLE IF EXISTS {rel}")
        conn.execute(f"CREATE TABLE {rel} (id int, val int, pad text) "
                     f"WITH (autovacuum_enabled = off, fillfactor = {self.FILLFACTOR})")
        conn.execute(f"INSERT INTO {rel} SELECT g, 0, repeat('x', %s) "
                     "FROM generate_series(1, 400) g", (self.ROW_PAD,))
        self.rpp = conn.execute(f"SELECT count(*) FROM {rel} WHERE ctid < '(1,0)'").fetchone()[0]
        conn.execute(f"TRUNCATE {rel}")
        conn.execute(f"INSERT INTO {rel} SELECT g, 0, repeat('x', %s) "
                     "FROM generate_series(1, %s) g", (self.ROW_PAD, pages * self.rpp))
        self.nrows = pages * self.rpp
        self.pages = relation_pages(conn, rel)
        assert self.pages == pages, (rel, self.pages, pages)
        self.moved = {}
        # the layout this class assumes: id i at ((i-1) / rpp, (i-1) % rpp + 1)
        probe = random.Random(0).sample(range(1, self.nrows + 1), 20)
        got = dict(conn.execute(f"SELECT id, ctid::text FROM {rel} WHERE ctid = ANY(%s::tid[])",
                                (self.tids(probe),)).fetchall())
        assert got == {i: self.ctid(i) for i in probe}, f"{rel}: unexpected row layout"
        conn.execute(f"VACUUM (FREEZE) {rel}")

    def ctid(self, i):
        return self.moved.get(i) or f"({(i - 1) // self.rpp},{(i - 1) % self.rpp + 1})"

    def tids(self, ids):
        return [self.ctid(i) for i in ids]

    def modify(self, conn, ids):
        """Update the rows by ctid, following them where they move."""
        cur = conn.execute(f"UPDATE {self.relation} SET val = val + 1 "
                           "WHERE ctid = ANY(%s::tid[]) RETURNING id, ctid::text",
                           (self.tids(ids),))
        got = cur.fetchall()
        assert len(got) == len(ids), f"updated {len(got)} of {len(ids)} rows"
        self.moved.update(got)

    def prepare_point(self, node, conn, ids):
        freeze(conn, self.relation)
        self.modify(conn, ids)
        conn.execute("CHECKPOINT")
        modified = not_all_visible(conn, self.relation)
        return f"{len(ids)} rows, {modified} of {self.pages} pages modified", modified


class UniformUpdates(RowTable):
    """The SKIP_PAGES_THRESHOLD benchmark's workload: narrow rows, a seeded
    random fraction of them updated."""

    name, relation = "uniform", "t"
    description = ("`t(id int, val int, pad text)`, pad 36 characters, fillfactor 90 (~96 "
                   "rows per page); a seeded random fraction of the rows updated (the "
                   "SKIP_PAGES_THRESHOLD benchmark's workload)")
    frac_text = "fraction of rows updated"
    SEED = "sweep"

    def choose(self, frac, rep):
        """The ids of the rows a point updates."""
        k = max(1, round(frac * self.nrows))
        return random.Random(f"{self.SEED}-{frac}-{rep}").sample(range(1, self.nrows + 1), k)


class ClusteredUpdates(RowTable):
    """Modified pages in runs: runs of 1 to MAX_RUN consecutive pages (of
    uniformly random length) at random places, one random row of each of
    their pages updated, until the fraction of pages is reached."""

    name, relation = "clustered", "t_clustered"
    MAX_RUN = 16
    description = ("the uniform workload's table; updates hit runs of 1-16 consecutive "
                   "pages (length uniformly random, mean 8.5) at random places, one random "
                   "row on each of their pages, until the fraction of pages is modified")
    frac_text = "fraction of pages modified"

    def choose(self, frac, rep):
        rng = random.Random(f"clustered-{frac}-{rep}")
        want = max(1, round(frac * self.pages))
        pages = set()
        while len(pages) < want:
            start = rng.randrange(self.pages)
            for p in range(start, min(start + rng.randint(1, self.MAX_RUN), self.pages)):
                if len(pages) < want:
                    pages.add(p)
        return [p * self.rpp + rng.randrange(self.rpp) + 1 for p in sorted(pages)]


class WideUpdates(UniformUpdates):
    """Few rows per page: 4 rows of ~1.5 kB at fillfactor 80 (room for one
    HOT update per page), a seeded random fraction of them updated."""

    name, relation = "wide", "t_wide"
    ROW_PAD = 1500
    FILLFACTOR = 80
    description = ("`t_wide(id int, val int, pad text)`, pad 1,500 characters (not "
                   "TOASTed), fillfactor 80: 4 rows per page with room for one HOT update; a "
                   "seeded random fraction of the rows updated (a second update on the same "
                   "page moves its row to another page)")
    SEED = "wide"


class PgbenchTpcb:
    """pgbench's accounts: `pgbench -i -F 90` (HOT room), tpcb-like
    transactions until a fraction of the accounts is updated, the same
    transactions (--random-seed 5 + repetition) before every threshold of a
    repetition."""

    name, relation = "pgbench", "pgbench_accounts"
    size_key = "pgbench_scale"
    description = ("`pgbench -i -F 90` (HOT room), then `pgbench -n -c 1 -t N --random-seed "
                   "S -b tpcb-like`, N = fraction × accounts, S = 5 + repetition (the same "
                   "transactions before every threshold of a repetition); VACUUM of "
                   "pgbench_accounts")
    frac_text = "transactions per account"

    def __init__(self, node, conn, scale):
        self.pgbench = [str(node.server.bindir / "pgbench"), "-h", "127.0.0.1",
                        "-p", str(node.port), "-U", "postgres"]
        log(f"pgbench: {node.server.name}: pgbench -i -s {scale} -F 90")
        run(self.pgbench + ["-i", "-q", "-s", str(scale), "-F", "90", "postgres"],
            env=node.env())
        self.naccounts = conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone()[0]
        self.pages = relation_pages(conn, "pgbench_accounts")
        conn.execute("VACUUM (FREEZE) pgbench_accounts")

    def choose(self, frac, rep):
        """(transactions, random seed) of a point."""
        return max(1, round(frac * self.naccounts)), 5 + rep

    def prepare_point(self, node, conn, change):
        ntx, seed = change
        freeze(conn, self.relation)
        run(self.pgbench + ["-n", "-c", "1", "-t", str(ntx), "--random-seed", str(seed),
                            "-b", "tpcb-like", "postgres"], env=node.env())
        conn.execute("CHECKPOINT")
        modified = not_all_visible(conn, self.relation)
        return (f"{ntx} transactions, {self.naccounts} accounts, {modified} of "
                f"{self.pages} pages modified"), modified


WORKLOADS = {w.name: w for w in (UniformUpdates, ClusteredUpdates, WideUpdates, PgbenchTpcb)}


def create(name, node, conn, cfg):
    """The workload `name`'s table on a started cluster, of cfg's size."""
    cls = WORKLOADS[name]
    return cls(node, conn, cfg[cls.size_key])

"""Workloads: the table a phase VACUUMs and how a point modifies it.

Each workload is one class: created on a started cluster, it builds its
table; choose(frac, rep) says what a point at that fraction and repetition
changes (the same for every threshold, so the thresholds' times are
paired); prepare_point(node, change) freezes the table, makes the change
and checkpoints, and returns the note stored with the point.  The phases
(phases.py) then restart cold and time VACUUM (VERBOSE) of `relation`.
"""

import random

from pgkit.proc import run
from pgkit.tables import relation_pages

from bench.vacbench.harness import freeze
from bench.vacbench.progress import log


class UniformUpdates:
    """The SKIP_PAGES_THRESHOLD benchmark's workload: narrow rows, a seeded
    random fraction of them updated.  Rows are chosen by id, found by ctid
    (tracked in Python, since a HOT update moves a row within its page)."""

    relation = "t"
    ROW_PAD = 36   # (id int, val int, pad text of 36): ~96 rows per page at fillfactor 90

    def __init__(self, conn, pages):
        conn.execute("DROP TABLE IF EXISTS t")
        conn.execute("CREATE TABLE t (id int, val int, pad text) "
                     "WITH (autovacuum_enabled = off, fillfactor = 90)")
        conn.execute("INSERT INTO t SELECT g, 0, repeat('x', %s) FROM generate_series(1, 200) g",
                     (self.ROW_PAD,))
        self.rpp = conn.execute("SELECT count(*) FROM t WHERE ctid < '(1,0)'").fetchone()[0]
        conn.execute("TRUNCATE t")
        conn.execute("INSERT INTO t SELECT g, 0, repeat('x', %s) FROM generate_series(1, %s) g",
                     (self.ROW_PAD, pages * self.rpp))
        self.nrows = pages * self.rpp
        self.pages = relation_pages(conn, "t")
        assert self.pages == pages, (self.pages, pages)
        self.moved = {}
        # the layout this class assumes: id i at ((i-1) / rpp, (i-1) % rpp + 1)
        probe = random.Random(0).sample(range(1, self.nrows + 1), 20)
        got = dict(conn.execute("SELECT id, ctid::text FROM t WHERE ctid = ANY(%s::tid[])",
                                (self.tids(probe),)).fetchall())
        assert got == {i: self.ctid(i) for i in probe}, "unexpected row layout"
        conn.execute("VACUUM (FREEZE) t")

    def ctid(self, i):
        return self.moved.get(i) or f"({(i - 1) // self.rpp},{(i - 1) % self.rpp + 1})"

    def tids(self, ids):
        return [self.ctid(i) for i in ids]

    def choose(self, frac, rep):
        """The ids of the rows a point updates."""
        k = max(1, round(frac * self.nrows))
        return random.Random(f"sweep-{frac}-{rep}").sample(range(1, self.nrows + 1), k)

    def modify(self, conn, ids):
        """Update the rows; returns how many pages they are on."""
        cur = conn.execute("UPDATE t SET val = val + 1 WHERE ctid = ANY(%s::tid[]) "
                           "RETURNING id, ctid::text", (self.tids(ids),))
        got = cur.fetchall()
        assert len(got) == len(ids), f"updated {len(got)} of {len(ids)} rows"
        self.moved.update(got)
        return len({self.ctid(i).split(",")[0] for i in ids})

    def prepare_point(self, node, ids):
        with node.connect() as conn:
            freeze(conn, self.relation)
            npages = self.modify(conn, ids)
            conn.execute("CHECKPOINT")
        return f"{len(ids)} rows on {npages} pages"


class PgbenchTpcb:
    """pgbench's accounts: `pgbench -i -F 90` (HOT room), tpcb-like
    transactions until a fraction of the accounts is updated, the same
    transactions (--random-seed 5 + repetition) before every threshold of a
    repetition."""

    relation = "pgbench_accounts"

    def __init__(self, node, scale):
        self.node = node
        self.pgbench = [str(node.server.bindir / "pgbench"), "-h", "127.0.0.1",
                        "-p", str(node.port), "-U", "postgres"]
        log(f"pgbench: {node.server.name}: pgbench -i -s {scale} -F 90")
        run(self.pgbench + ["-i", "-q", "-s", str(scale), "-F", "90", "postgres"],
            env=node.env())
        with node.connect() as conn:
            conn.execute("DROP TABLE IF EXISTS t")
            self.naccounts = conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone()[0]
            self.rel_pages = relation_pages(conn, "pgbench_accounts")

    def choose(self, frac, rep):
        """(transactions, random seed) of a point."""
        return max(1, round(frac * self.naccounts)), 5 + rep

    def prepare_point(self, node, change):
        ntx, seed = change
        with node.connect() as conn:
            freeze(conn, self.relation)
        run(self.pgbench + ["-n", "-c", "1", "-t", str(ntx), "--random-seed", str(seed),
                            "-b", "tpcb-like", "postgres"], env=node.env())
        with node.connect() as conn:
            conn.execute("CHECKPOINT")
        return f"{ntx} transactions, {self.naccounts} accounts, {self.rel_pages} pages"

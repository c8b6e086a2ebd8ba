"""Randomized VACUUM under concurrent writes and crashes (t/test_stress.py).

One cluster per server, with vacskip in shared_preload_libraries and an
autovacuum tuned to run all the time.  Two account tables (one in the default
tablespace, one in a tablespace with its own cost settings) and a ledger that
every writing transaction updates in the same statement, so that for every
(table, shard) the ledger's count and total equal count(*) and sum(bal) of
the table.  Each round draws its settings from a seeded random generator,
runs pgbench with the custom scripts in t/stress/ while a loop of VACUUMs
with those settings runs on the round's table, in some rounds stops the
server with `pg_ctl stop -m immediate` while pg_stat_progress_vacuum shows a
VACUUM of that table, restarts it (crash recovery), and then checks:

  - pg_visibility: pg_check_visible() and pg_check_frozen() return no rows;
  - amcheck: verify_heapam() reports nothing, bt_index_check(heapallindexed)
    passes for every index;
  - the ledger invariant holds, and index-only scans count what a
    sequential scan counts;
  - no tuple (pageinspect) carries an unfrozen xmin/xmax older than the
    relation's relfrozenxid, or a multixact older than its relminmxid;
  - the server log has no "terminated by signal", "TRAP:", PANIC, and no
    message with an SQLSTATE of class XX (internal error, data corrupted).

A finding is any violation; the run stops after the first round with
findings (a corrupted table stays corrupted) and fails with every finding
listed and the round's seed, which replays the round's choices
(VACSKIP_STRESS_SEED).
"""

import random
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from pgkit.proc import give_to_build_user

SCRIPTS = Path(__file__).resolve().parent / "stress"

# pgbench scripts and their weights
WORKLOAD = {
    "hot_update": 40,      # bal only: HOT when the page has room
    "nonhot_update": 12,   # grp is indexed: never HOT
    "insert": 12,
    "insert_batch": 2,     # 25 rows in one statement
    "insert_toast": 1,     # a row with an out-of-line pad
    "delete": 10,
    "delete_range": 2,
    "lock_share": 10,      # FOR KEY SHARE / FOR SHARE: multixacts
    "rollback": 5,         # aborted transaction and subtransaction
}

TABLES = {1: "pg_default", 2: "ts_fast"}
SHARDS = 8

# Thresholds a round draws from: 1, 2, stock's 32 and 1000000 (no run is
# long enough to skip), auto (-1), and one random value per round.
THRESHOLDS = (1, 2, 32, 1000000, -1, "random")

CLUSTER_SETTINGS = {
    "shared_preload_libraries": "'vacskip'",
    "autovacuum": "on",
    "autovacuum_naptime": "1s",
    "autovacuum_max_workers": "2",
    "autovacuum_vacuum_threshold": "20",
    "autovacuum_vacuum_scale_factor": "0.01",
    "autovacuum_vacuum_insert_threshold": "50",
    "autovacuum_vacuum_insert_scale_factor": "0.01",
    "autovacuum_analyze_threshold": "50",
    "autovacuum_vacuum_cost_delay": "0",
    # the smallest allowed: anti-wraparound autovacuums happen in long runs
    "autovacuum_freeze_max_age": "100000",
    "autovacuum_multixact_freeze_max_age": "10000",
    "log_autovacuum_min_duration": "0",
    "deadlock_timeout": "100ms",
    "log_line_prefix": "'%m [%p] %e '",
    "max_connections": "30",
    "shared_buffers": "32MB",
}


def precedes_sql(a, b):
    """SQL: 32-bit XID/MXID `a` precedes `b`, modulo 2^32 as PostgreSQL
    compares them (TransactionIdPrecedes, MultiXactIdPrecedes); for a query
    with parameters, hence the doubled %."""
    return f"((({a}) - ({b}) + 6442450944) %% 4294967296) - 2147483648 < 0"


# One query per relation: every normal line pointer's xmin/xmax against
# relfrozenxid/relminmxid.  Infomask bits (htup_details.h): 0x0100
# XMIN_COMMITTED, 0x0200 XMIN_INVALID (both: frozen), 0x0800 XMAX_INVALID,
# 0x1000 XMAX_IS_MULTI.  An xmin is checked unless frozen or aborted, an
# xmax unless invalid; XIDs below 3 are permanent (frozen, bootstrap).
XID_CHECK = f"""
WITH rel AS (
    SELECT oid, relfrozenxid::text::bigint AS fx, relminmxid::text::bigint AS mx,
           pg_relation_size(oid) / current_setting('block_size')::int AS pages
    FROM pg_class WHERE oid = %(rel)s::regclass),
tup AS (
    SELECT rel.fx, rel.mx, i.t_xmin::text::bigint AS xmin,
           i.t_xmax::text::bigint AS xmax, i.t_infomask AS m
    FROM rel, generate_series(0, rel.pages - 1) AS b(blk),
         heap_page_items(get_raw_page(%(rel)s::text, b.blk::int)) AS i
    WHERE i.lp_flags = 1)
SELECT count(*),
       count(*) FILTER (WHERE m & 768 NOT IN (512, 768) AND xmin >= 3
                        AND {precedes_sql('xmin', 'fx')}),
       count(*) FILTER (WHERE m & 2048 = 0 AND m & 4096 = 0 AND xmax >= 3
                        AND {precedes_sql('xmax', 'fx')}),
       count(*) FILTER (WHERE m & 2048 = 0 AND m & 4096 <> 0
                        AND {precedes_sql('xmax', 'mx')}),
       count(*) FILTER (WHERE m & 2048 = 0 AND m & 4096 <> 0),
       count(*) FILTER (WHERE m & 768 NOT IN (512, 768) AND xmin >= 3),
       min(fx), min(mx)
FROM tup
"""

# autovacuum's log line for one of the test's tables (or a TOAST table)
AUTOVACUUM_LOG = re.compile(r"automatic (?:aggressive )?vacuum (?:to prevent wraparound )?"
                            r"of table \"postgres\.(?:public\.(?:acct_\d|ledger)|pg_toast\.)")

LOG_FINDINGS = re.compile(
    r"^.*(terminated by signal|TRAP:| PANIC: | XX[0-9A-Z]{3} (WARNING|ERROR|FATAL|PANIC): ).*$",
    re.M)


@dataclass
class Choices:
    """What one round does, all drawn from its seed."""
    seed: int
    table: int
    threshold: int
    autovacuum_threshold: int
    aggressive: str          # "no", "table_age" (vacuum_freeze_table_age 0), "freeze"
    disable_page_skipping: bool
    index_cleanup: str
    freeze_min_age: int | None
    eager_rate: float | None  # 18: vacuum_max_eager_freeze_failure_rate; None on 15
    crash: bool
    seconds: int
    clients: int
    hot_base: int            # where the skewed id distribution peaks

    @classmethod
    def draw(cls, seed, major, crash_share):
        r = random.Random(seed)

        def threshold():
            t = r.choice(THRESHOLDS)
            return r.randint(3, 64) if t == "random" else t

        # drawn on 15 too, so that a seed means the same round on both
        eager = r.choice((0.0, 0.03, 1.0))
        return cls(
            seed=seed,
            table=r.choice(list(TABLES)),
            threshold=threshold(),
            autovacuum_threshold=threshold(),
            aggressive=r.choice(("no", "no", "table_age", "freeze")),
            disable_page_skipping=r.random() < 0.2,
            index_cleanup=r.choice(("auto", "auto", "on", "off")),
            freeze_min_age=r.choice((None, 0, 100, 5000)),
            eager_rate=eager if major >= 18 else None,
            crash=r.random() < crash_share,
            seconds=r.choice((1, 2)),
            clients=r.randint(2, 4),
            hot_base=r.randrange(1 << 20),
        )

    def vacuum_options(self):
        opts = [f"INDEX_CLEANUP {self.index_cleanup}"]
        if self.aggressive == "freeze":
            opts.append("FREEZE")
        if self.disable_page_skipping:
            opts.append("DISABLE_PAGE_SKIPPING")
        return ", ".join(opts)

    def session_settings(self):
        s = {"vacskip.threshold": self.threshold}
        if self.aggressive == "table_age":
            s["vacuum_freeze_table_age"] = 0
        if self.freeze_min_age is not None:
            s["vacuum_freeze_min_age"] = self.freeze_min_age
            s["vacuum_multixact_freeze_min_age"] = self.freeze_min_age
        if self.eager_rate is not None:
            s["vacuum_max_eager_freeze_failure_rate"] = self.eager_rate
        if self.crash:
            # slow enough that pg_stat_progress_vacuum shows it for a while
            s["vacuum_cost_delay"] = "2ms"
            s["vacuum_cost_limit"] = 10
        return s

    def describe(self):
        eager = "" if self.eager_rate is None else f" eager_rate={self.eager_rate}"
        return (f"seed={self.seed} table=acct_{self.table} ({TABLES[self.table]}) "
                f"threshold={self.threshold} autovacuum_threshold={self.autovacuum_threshold} "
                f"aggressive={self.aggressive} disable_page_skipping={self.disable_page_skipping} "
                f"index_cleanup={self.index_cleanup} freeze_min_age={self.freeze_min_age}"
                f"{eager} crash={self.crash} pgbench={self.clients}x{self.seconds}s")


@dataclass
class Totals:
    rounds: int = 0
    crashes: int = 0
    manual_vacuums: int = 0
    autovacuums: int = 0
    transactions: int = 0
    tuples_checked: int = 0      # heap tuples whose xmin/xmax were checked
    rows_checked: int = 0        # live rows summed for the ledger invariant
    multixact_tuples: int = 0    # tuples with a multixact xmax seen
    relfrozenxid_advances: int = 0
    findings: list = field(default_factory=list)

    def summary(self):
        return (f"rounds: {self.rounds}, crashes injected: {self.crashes}, "
                f"vacuums run: {self.manual_vacuums + self.autovacuums} "
                f"({self.manual_vacuums} VACUUM, {self.autovacuums} autovacuum), "
                f"pgbench transactions: {self.transactions}, "
                f"rows checked: {self.rows_checked} (ledger) + {self.tuples_checked} "
                f"(tuple xmin/xmax), multixact xmax seen: {self.multixact_tuples}, "
                f"relfrozenxid advanced: {self.relfrozenxid_advances} times, "
                f"findings: {len(self.findings)}")


class Stress:
    def __init__(self, cluster, out=print):
        self.c = cluster
        self.major = cluster.server.major
        self.out = out
        self.totals = Totals()
        self.log_offset = 0
        self.autovacuum_seen = 0

    # ------------------------------------------------------------ setup
    def setup(self, rows=6000):
        ts_dir = self.c.base / "ts_fast"
        ts_dir.mkdir()
        give_to_build_user(ts_dir)
        with self.c.connect() as conn:
            for ext in ("vacskip", "amcheck", "pg_visibility", "pageinspect"):
                conn.execute(f"CREATE EXTENSION {ext}")
            conn.execute(f"CREATE TABLESPACE ts_fast LOCATION '{ts_dir}'")
            conn.execute("ALTER TABLESPACE ts_fast SET (seq_page_cost = 0.5, "
                         "random_page_cost = 1.1, effective_io_concurrency = 64, "
                         "maintenance_io_concurrency = 64)")
            conn.execute("CREATE TABLE ledger (tbl int, shard int, cnt bigint NOT NULL, "
                         "total bigint NOT NULL, PRIMARY KEY (tbl, shard))")
            for t, ts in TABLES.items():
                conn.execute(f"""
                    CREATE TABLE acct_{t} (
                        id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                        bal bigint NOT NULL, grp int NOT NULL, pad text)
                    WITH (fillfactor = 80) TABLESPACE {ts}""")
                conn.execute(f"CREATE INDEX acct_{t}_grp ON acct_{t} (grp) TABLESPACE {ts}")
                conn.execute(f"INSERT INTO acct_{t} (bal, grp, pad) "
                             f"SELECT g % 1000, g % 50, repeat(md5(g::text), 8) "
                             f"FROM generate_series(1, {rows}) g")
                conn.execute(f"INSERT INTO ledger SELECT {t}, s, count(id), coalesce(sum(bal), 0) "
                             f"FROM generate_series(0, {SHARDS - 1}) s "
                             f"LEFT JOIN acct_{t} ON id % {SHARDS} = s GROUP BY s")
                conn.execute(f"VACUUM (FREEZE) acct_{t}")
            conn.execute("VACUUM (FREEZE) ledger")

    # ------------------------------------------------------------ helpers
    def relations(self, conn):
        """Every heap checked after a round: the tables and their TOAST."""
        rels = []
        for name in [f"acct_{t}" for t in TABLES] + ["ledger"]:
            rels.append(name)
            toast = conn.execute("SELECT reltoastrelid::regclass::text FROM pg_class "
                                 "WHERE oid = %s::regclass AND reltoastrelid <> 0",
                                 (name,)).fetchone()
            if toast:
                rels.append(toast[0])
        return rels

    def relfrozenxids(self, conn):
        return dict(conn.execute(
            "SELECT relname, relfrozenxid::text FROM pg_class "
            "WHERE relname LIKE 'acct\\_%' AND relkind = 'r'").fetchall())

    def set_autovacuum(self, ch):
        """Autovacuum's settings for this round: ALTER SYSTEM and reload."""
        with self.c.connect() as conn:
            conn.execute(f"ALTER SYSTEM SET vacskip.threshold = {ch.autovacuum_threshold}")
            if ch.eager_rate is not None:
                conn.execute("ALTER SYSTEM SET vacuum_max_eager_freeze_failure_rate = "
                             f"{ch.eager_rate}")
            age = {"no": 150000000, "table_age": 0, "freeze": 0}[ch.aggressive]
            conn.execute(f"ALTER SYSTEM SET vacuum_freeze_table_age = {age}")
            if ch.freeze_min_age is None:
                conn.execute("ALTER SYSTEM RESET vacuum_freeze_min_age")
            else:
                conn.execute(f"ALTER SYSTEM SET vacuum_freeze_min_age = {ch.freeze_min_age}")
            conn.execute("SELECT pg_reload_conf()")

    def pgbench(self, ch, max_id):
        cmd = [str(self.c.server.bindir / "pgbench"), "-n", "-h", "127.0.0.1",
               "-p", str(self.c.port), "-U", "postgres", "-c", str(ch.clients),
               "-j", "1", "-T", str(ch.seconds), "--max-tries=20",
               "-D", f"t={ch.table}", "-D", f"n={max_id}", "-D", f"base={ch.hot_base}",
               "--random-seed", str(ch.seed)]
        for name, weight in WORKLOAD.items():
            cmd += ["-f", f"{SCRIPTS / name}.sql@{weight}"]
        cmd.append("postgres")
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    def vacuum_loop(self, ch, stop, result):
        """VACUUM the round's table with its settings until told to stop,
        with pauses that leave autovacuum room.  SKIP_LOCKED: a VACUUM that
        waited for an autovacuum's lock would cancel it."""
        pause = random.Random(ch.seed + 1)
        skipped = []
        try:
            with self.c.connect() as conn:
                conn.add_notice_handler(
                    lambda d: skipped.append(1) if "lock not available" in
                    (d.message_primary or "") else None)
                for k, v in ch.session_settings().items():
                    conn.execute(f"SET {k} = '{v}'")
                while not stop.is_set():
                    n = len(skipped)
                    conn.execute(f"VACUUM ({ch.vacuum_options()}, SKIP_LOCKED) "
                                 f"acct_{ch.table}")
                    result["vacuums" if len(skipped) == n else "skipped"] += 1
                    stop.wait(pause.uniform(0.1, 0.8))
        except psycopg.Error as e:
            result["error"] = str(e).strip()

    def wait_for_vacuum_progress(self, ch, timeout=20):
        """Poll pg_stat_progress_vacuum until it shows a VACUUM (ours or an
        autovacuum) of the round's table past its start; return that row."""
        deadline = time.monotonic() + timeout
        with self.c.connect() as conn:
            while time.monotonic() < deadline:
                row = conn.execute(
                    "SELECT p.phase, p.heap_blks_scanned, p.heap_blks_total, a.backend_type "
                    "FROM pg_stat_progress_vacuum p JOIN pg_stat_activity a USING (pid) "
                    "WHERE p.relid = %s::regclass AND p.phase <> 'initializing'",
                    (f"acct_{ch.table}",)).fetchone()
                if row:
                    return row
                time.sleep(0.005)
        return None

    def new_log(self):
        text = self.c.log()
        new, self.log_offset = text[self.log_offset:], len(text)
        return new

    # ------------------------------------------------------------ a round
    def round(self, index, ch):
        t = self.totals
        label = f"round {index} {ch.describe()}"
        self.out(label)
        findings = []
        self.set_autovacuum(ch)
        with self.c.connect() as conn:
            max_id = conn.execute(f"SELECT coalesce(max(id), 1) FROM acct_{ch.table}"
                                  ).fetchone()[0]
            before = self.relfrozenxids(conn)

        stop, vac = threading.Event(), {"vacuums": 0, "skipped": 0, "error": None}
        bench = self.pgbench(ch, max_id)
        loop = threading.Thread(target=self.vacuum_loop, args=(ch, stop, vac))
        loop.start()
        crashed_at = None
        try:
            if ch.crash:
                time.sleep(random.Random(ch.seed).uniform(0.2, ch.seconds * 0.8))
                crashed_at = self.wait_for_vacuum_progress(ch)
                if crashed_at is None:
                    findings.append("no VACUUM of the table showed in pg_stat_progress_vacuum")
                else:
                    self.c.pg_ctl("-m", "immediate", "stop")
                    self.c.running = False
            bench_out, _ = bench.communicate(timeout=ch.seconds + 120)
        finally:
            stop.set()
            loop.join(timeout=120)
            if bench.poll() is None:
                bench.kill()
        t.manual_vacuums += vac["vacuums"]
        m = re.search(r"number of transactions actually processed: (\d+)", bench_out)
        t.transactions += int(m.group(1)) if m else 0
        if crashed_at is not None:
            t.crashes += 1
            self.out(f"  crashed while {crashed_at[0]} ({crashed_at[1]} of {crashed_at[2]} "
                     f"heap blocks scanned, in a {crashed_at[3]})")
            self.c.start()
            if "database system was not properly shut down" not in self.c.log()[self.log_offset:]:
                findings.append("restart after the immediate stop did no crash recovery")
        else:
            if bench.returncode != 0 or not m:
                findings.append(f"pgbench failed (exit {bench.returncode}):\n{bench_out[-2000:]}")
            if vac["error"]:
                findings.append(f"VACUUM failed: {vac['error']}")

        findings += self.check(ch, before)
        log = self.new_log()
        self.autovacuum_seen += len(AUTOVACUUM_LOG.findall(log))
        findings += [f"server log: {m.group(0)}" for m in LOG_FINDINGS.finditer(log)]
        t.autovacuums = self.autovacuum_seen
        t.rounds += 1
        self.out(f"  {vac['vacuums']} VACUUMs, {m.group(1) if m else '?'} transactions; "
                 f"{len(findings)} findings")
        for f in findings:
            t.findings.append(f"{label}: {f}")
            self.out(f"  FINDING: {f}")
        return not findings

    # ------------------------------------------------------------ checks
    def check(self, ch, frozen_before):
        t = self.totals
        findings = []
        with self.c.connect() as conn:
            for rel in self.relations(conn):
                for fn in ("pg_check_visible", "pg_check_frozen"):
                    bad = conn.execute(f"SELECT t::text FROM {fn}(%s::regclass) t",
                                       (rel,)).fetchall()
                    if bad:
                        findings.append(f"{fn}({rel}): {len(bad)} tuples, e.g. "
                                        f"{', '.join(b[0] for b in bad[:5])}")
                bad = conn.execute(
                    "SELECT format('(%%s,%%s) %%s', blkno, offnum, msg) "
                    "FROM verify_heapam(%s::regclass)", (rel,)).fetchall()
                if bad:
                    findings.append(f"verify_heapam({rel}): {len(bad)} problems, e.g. "
                                    f"{'; '.join(b[0] for b in bad[:3])}")
                n, xmin_bad, xmax_bad, multi_bad, multis, unfrozen, fx, mx = conn.execute(
                    XID_CHECK, {"rel": rel}).fetchone()
                t.tuples_checked += n
                t.multixact_tuples += multis
                if xmin_bad or xmax_bad or multi_bad:
                    findings.append(
                        f"{rel}: relfrozenxid {fx} / relminmxid {mx} newer than "
                        f"{xmin_bad} unfrozen xmin, {xmax_bad} xmax, {multi_bad} "
                        f"multixact xmax (of {n} tuples, {unfrozen} unfrozen)")
            for idx, in conn.execute(
                    "SELECT indexrelid::regclass::text FROM pg_index i JOIN pg_class c "
                    "ON c.oid = i.indrelid WHERE c.relname LIKE 'acct\\_%' "
                    "OR c.relname = 'ledger' ORDER BY 1").fetchall():
                try:
                    conn.execute("SELECT bt_index_check(%s::regclass, true)", (idx,))
                except psycopg.Error as e:
                    findings.append(f"bt_index_check({idx}): {e.sqlstate} {str(e).strip()}")

            for tbl in TABLES:
                bad = conn.execute(f"""
                    SELECT l.shard, l.cnt, l.total, a.cnt, a.total
                    FROM ledger l LEFT JOIN (
                        SELECT id % {SHARDS} AS shard, count(*) AS cnt, sum(bal) AS total
                        FROM acct_{tbl} GROUP BY 1) a ON a.shard = l.shard
                    WHERE l.tbl = {tbl} AND (l.cnt, l.total) IS DISTINCT FROM
                          (coalesce(a.cnt, 0), coalesce(a.total, 0))""").fetchall()
                if bad:
                    findings.append(f"ledger invariant broken for acct_{tbl}: "
                                    f"(shard, ledger count, sum, table count, sum) {bad}")
                rows = conn.execute(f"SELECT count(*) FROM acct_{tbl}").fetchone()[0]
                t.rows_checked += rows
                findings += self.index_only_counts(conn, tbl, rows)

            after = self.relfrozenxids(conn)
        t.relfrozenxid_advances += sum(after[k] != frozen_before.get(k) for k in after)
        return findings

    def index_only_counts(self, conn, tbl, rows):
        """A wrong all-visible bit makes an index-only scan return a dead row
        (or miss none): count through each index, index-only, and compare."""
        findings = []
        with conn.transaction():
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            for col in ("id", "grp"):
                query = f"SELECT count(*) FROM acct_{tbl} WHERE {col} >= 0"
                plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN {query}").fetchall())
                if "Index Only Scan" not in plan:
                    findings.append(f"no index-only scan for {query}:\n{plan}")
                    continue
                got = conn.execute(query).fetchone()[0]
                if got != rows:
                    findings.append(f"{query}: index-only scan counts {got}, "
                                    f"sequential scan {rows}")
        return findings

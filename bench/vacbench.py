"""vacskip's benchmark (make bench): VACUUM time against the skip threshold.

Phases, each on throwaway clusters of the bench-flavour servers given with
--server NAME=PREFIX (tools/bench builds them):

  sweep    seed 1's test: a table of narrow rows, VACUUM (FREEZE), update a
           seeded random fraction of rows, make reads cold, time
           VACUUM (VERBOSE) at each vacskip.threshold (1 ... 32, and -1 =
           auto); every threshold of one fraction and repetition updates the
           same rows, so the ratios are paired.  Cold reads: direct I/O
           (debug_io_direct = data, 18 only) or buffered with the relation's
           files evicted from the OS cache after a restart.  Storage
           profiles: this disk as it is, and "slow": bench/slowread.c
           (LD_PRELOAD) adds a penalty to every read that does not continue
           the previous read of its file.  Each profile gets random_page_cost
           and I/O concurrency settings (postgresql.conf) that describe it;
           random_page_cost comes from a calibration measured at the start.
  cached   seed 2's test: plain VACUUM of an all-frozen table that is in
           shared buffers, stock against patched (bench/cached_vacuum.py).
  pgbench  pgbench -i, tpcb-like transactions until a fraction of accounts
           is updated, VACUUM pgbench_accounts at each threshold.

Every measurement is appended to OUT/runs.csv as it is taken; a second run
with the same --out skips what the CSV already has (resume).  At the end
OUT/report.md and OUT/*.png are written from the CSV (--report-only redoes
just that).

Usage: bench/vacbench.py [--size smoke|default|full] [--out DIR]
                         --server 18-patched=PREFIX [--server ...]
"""

import argparse
import csv
import datetime
import math
import os
import platform
import random
import re
import socket
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "t"))
sys.path.insert(0, str(TOP / "bench"))

from pgcluster import (Cluster, as_build_user, give_to_build_user,  # noqa: E402
                       install_extension, make_workdir, private_copy, remove_tree, run,
                       server_from_spec)
from vacuum_model import parse_report, vacuum_verbose  # noqa: E402
import cached_vacuum  # noqa: E402

THRESHOLDS = (1, 2, 4, 8, 16, 32, "auto")
SEED1_FRACS = (1e-6, 1e-5, 2.5e-5, 5e-5, 7.5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 1e-2)

# What each --size runs.  sweep_pages: heap pages of the sweep table (~96
# rows of 48 bytes per page at fillfactor 90); shared_buffers is well below
# it.  penalty_us: the slow profile's cost of a read that does not continue
# the previous one (see bench/slowread.c).
SIZES = {
    "smoke": dict(sweep_pages=300, shared_buffers="16MB", fracs=(1e-3, 1e-2),
                  thresholds=(1, 32, "auto"), reps=1, penalty_us=200,
                  io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                  profiles=("asis", "slow"), calib_pages=50, calib_reps=2,
                  cached_pages=2000, cached_reps=3,
                  pgbench_scale=1, pgbench_fracs=(1e-3,), pgbench_profiles=("asis",),
                  pgbench_reps=1),
    "default": dict(sweep_pages=8000, shared_buffers="16MB",
                    fracs=(1e-5, 1e-4, 5e-4, 1e-3, 1e-2),
                    thresholds=THRESHOLDS, reps=2, penalty_us=200,
                    io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                    profiles=("asis", "slow"), calib_pages=1000, calib_reps=3,
                    cached_pages=60000, cached_reps=51,
                    pgbench_scale=5, pgbench_fracs=(2e-4,), pgbench_profiles=("asis",),
                    pgbench_reps=1),
    "full": dict(sweep_pages=240000, shared_buffers="256MB", fracs=SEED1_FRACS,
                 thresholds=THRESHOLDS, reps=3, cheap_reps=(1e-4, 7), penalty_us=200,
                 io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                 profiles=("asis", "slow"), calib_pages=4000, calib_reps=5,
                 cached_pages=230000, cached_reps=101,
                 pgbench_scale=100, pgbench_fracs=(1e-4, 1e-3),
                 pgbench_profiles=("asis", "slow"), pgbench_reps=5),
}

# I/O concurrency of each storage profile.  asis: fio on this disk serves
# 4x the 8 kB random IOPS at queue depth 16 than at 1 (MEASURED.md), so 16
# (also 18's default).  slow: slowread's penalty is a sleep in the reading
# process, a device that serves one random read at a time: 1.
PROFILE_IO_CONCURRENCY = {"asis": 16, "slow": 1}

CSV_FIELDS = ("phase", "server", "major", "mode", "profile", "pages", "frac", "rep",
              "threshold", "ms", "scanned", "rel_pages", "reads", "penalised", "note")

STATE_SIZE = 1 << 20


def reps_of(cfg, frac):
    """Repetitions of a fraction: cfg's cheap_reps = (f, n) gives fractions up
    to f n repetitions (their VACUUMs take milliseconds, so noise weighs
    most there and more runs cost little)."""
    cheap = cfg.get("cheap_reps")
    if cheap and frac <= cheap[0]:
        return max(cheap[1], cfg["reps"])
    return cfg["reps"]

# Fractions above this modify most pages: each point rewrites the table.
HEAVY_FRAC = 1e-3


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def fmt_s(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Phase, point i of n, elapsed, estimate of the time left."""

    def __init__(self, total):
        self.total = total
        self.done = 0
        self.t0 = time.monotonic()
        self.spent = {}      # phase -> (points, seconds) measured in this run

    def step(self, phase, what, seconds):
        self.done += 1
        n, s = self.spent.get(phase, (0, 0.0))
        self.spent[phase] = (n + 1, s + seconds)
        elapsed = time.monotonic() - self.t0
        left = self.left.get(phase, 0) - 1
        self.left[phase] = left
        est = sum(self.per_point(p) * k for p, k in self.left.items())
        log(f"{phase}: point {self.done}/{self.total} {what}; "
            f"elapsed {fmt_s(elapsed)}, about {fmt_s(est)} left")

    def per_point(self, phase):
        n, s = self.spent.get(phase, (0, 0.0))
        if n:
            return s / n
        allp = [s / n for n, s in self.spent.values() if n]
        return statistics.mean(allp) if allp else 2.0


# ----------------------------------------------------------------- results

class Results:
    """runs.csv: one row per measurement, appended and flushed as taken."""

    def __init__(self, path):
        self.path = path
        self.rows = []
        if path.exists():
            with open(path, newline="") as f:
                self.rows = list(csv.DictReader(f))
        self.keys = {self.key(r) for r in self.rows}
        new = not path.exists()
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=CSV_FIELDS)
        if new:
            self.w.writeheader()

    @staticmethod
    def key(r):
        return tuple(str(r.get(k, "")) for k in
                     ("phase", "server", "mode", "profile", "pages", "frac", "rep", "threshold"))

    def have(self, **kw):
        return self.key(kw) in self.keys

    def get(self, **kw):
        k = self.key(kw)
        return next(r for r in self.rows if self.key(r) == k)

    def add(self, **kw):
        row = {k: kw.get(k, "") for k in CSV_FIELDS}
        row = {k: (f"{v:.3f}" if isinstance(v, float) and k == "ms" else v)
               for k, v in row.items()}
        row = {k: str(v) for k, v in row.items()}
        self.w.writerow(row)
        self.f.flush()
        self.rows.append(row)
        self.keys.add(self.key(row))

    def close(self):
        self.f.close()


# ----------------------------------------------------------------- slowread

class SlowRead:
    """bench/slowread.c, built into the work directory, and its shared state."""

    def __init__(self, work):
        self.lib = work / "slowread.so"
        run(["cc", "-O2", "-Wall", "-shared", "-fPIC", "-o", self.lib,
             TOP / "bench" / "slowread.c", "-ldl"])
        self.state = work / "slowread.state"
        with open(self.state, "wb") as f:
            f.truncate(STATE_SIZE)
        self.state.chmod(0o666)
        give_to_build_user(self.state)

    def env(self, penalty_us):
        return {"LD_PRELOAD": str(self.lib), "SLOWREAD_STATE": str(self.state),
                "SLOWREAD_PENALTY_US": str(penalty_us)}

    def reset(self):
        with open(self.state, "r+b") as f:
            f.seek(8)
            f.write(bytes(24))

    def counters(self):
        with open(self.state, "rb") as f:
            reads, penalised, nbytes = struct.unpack_from("<QQQ", f.read(32), 8)
        return reads, penalised, nbytes


# ----------------------------------------------------------------- clusters

class BenchCluster(Cluster):
    """A Cluster whose storage profile (settings in bench_profile.conf, and
    the server's environment, for LD_PRELOAD) can change between restarts."""

    def __init__(self, server, work, settings, name):
        super().__init__(server, work, settings, name=name)
        self.append_conf({"include_if_exists": "'bench_profile.conf'"})
        self.start_env = {}

    def set_profile(self, settings, env):
        path = self.datadir / "bench_profile.conf"
        path.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
        give_to_build_user(path)
        self.start_env = dict(env)

    def pg_ctl(self, *args):
        envs = [f"{k}={v}" for k, v in self.start_env.items()]
        return run(as_build_user(["env", *envs, self.server.bindir / "pg_ctl",
                                  "-D", self.datadir, "-l", self.logfile, "-w", *args]))

    def relation_files(self, conn, rel):
        """The files of every fork of rel, all segments."""
        relpath = conn.execute("SELECT pg_relation_filepath(%s)", (rel,)).fetchone()[0]
        path = self.datadir / relpath
        pat = re.compile(rf"^{path.name}(_fsm|_vm)?(\.\d+)?$")
        return [p for p in path.parent.iterdir() if pat.match(p.name)]


def evict(files):
    """Write back, then drop the files' pages from the OS page cache."""
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def cold_restart(node, mode, files):
    """Shut down (checkpoint), drop the relation from the OS cache when reads
    are buffered, start: the relation is in neither cache."""
    node.stop()
    # fsync is off: write back now what the server left dirty in the page
    # cache, so that writeback does not compete with the timed reads
    os.sync()
    if mode == "buffered":
        evict(files)
    node.start()


def profile_settings(major, mode, profile, random_page_cost=None):
    conf = {}
    if mode == "direct":
        conf["debug_io_direct"] = "'data'"
    conc = PROFILE_IO_CONCURRENCY[profile]
    conf["effective_io_concurrency"] = str(conc)
    conf["maintenance_io_concurrency"] = str(conc)
    if random_page_cost is not None:
        conf["random_page_cost"] = f"{random_page_cost:g}"
        conf["seq_page_cost"] = "1"
    return conf


# ----------------------------------------------------------------- sweep table

ROW_PAD = 36   # (id int, val int, pad text of 36): ~96 rows per page at fillfactor 90


class SweepTable:
    """Seed 1's table; rows are chosen by id, found by ctid (tracked in
    Python, since a HOT update moves a row within its page)."""

    def __init__(self, conn, pages):
        conn.execute("DROP TABLE IF EXISTS t")
        conn.execute("CREATE TABLE t (id int, val int, pad text) "
                     "WITH (autovacuum_enabled = off, fillfactor = 90)")
        conn.execute("INSERT INTO t SELECT g, 0, repeat('x', %s) FROM generate_series(1, 200) g",
                     (ROW_PAD,))
        self.rpp = conn.execute("SELECT count(*) FROM t WHERE ctid < '(1,0)'").fetchone()[0]
        conn.execute("TRUNCATE t")
        conn.execute("INSERT INTO t SELECT g, 0, repeat('x', %s) FROM generate_series(1, %s) g",
                     (ROW_PAD, pages * self.rpp))
        self.nrows = pages * self.rpp
        self.pages = conn.execute("SELECT pg_relation_size('t') / 8192").fetchone()[0]
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
        k = max(1, round(frac * self.nrows))
        return random.Random(f"sweep-{frac}-{rep}").sample(range(1, self.nrows + 1), k)

    def modify(self, conn, ids):
        cur = conn.execute("UPDATE t SET val = val + 1 WHERE ctid = ANY(%s::tid[]) "
                           "RETURNING id, ctid::text", (self.tids(ids),))
        got = cur.fetchall()
        assert len(got) == len(ids), f"updated {len(got)} of {len(ids)} rows"
        self.moved.update(got)
        return len({self.ctid(i).split(",")[0] for i in ids})


def pgbench_uncalibrated(rows, cfg, phases, servers):
    """The pgbench profiles whose random_page_cost phase_pgbench() would not
    find for one of `servers` (names): not in rows (calibrated_rpc(), as
    phase_pgbench() reads it), and no sweep of that profile in this run to
    measure it first (the calibration scans the sweep's table)."""
    if "pgbench" not in phases:
        return []
    swept = set(cfg["profiles"]) if "sweep" in phases else set()
    return [p for p in cfg["pgbench_profiles"] if p not in swept and
            any(calibrated_rpc(rows, s, "buffered", p) is None for s in servers)]


def calibrated_rpc(rows, server, mode, profile):
    """random_page_cost of a storage profile from the calibration rows: the
    direct-I/O calibration of that profile (of any server) if there is one,
    else that of this server and I/O mode; None if neither was measured."""
    def per_page(rs, kind):
        """Median cost per page of the calibration runs of that kind."""
        costs = [float(r["ms"]) / int(r["scanned"]) for r in rs if r["threshold"] == kind]
        return statistics.median(costs) if costs else None

    calib = [r for r in rows if r["phase"] == "calib" and r["profile"] == profile]
    for rs in ([r for r in calib if r["mode"] == "direct"],
               [r for r in calib if r["server"] == server and r["mode"] == mode]):
        servers = sorted({r["server"] for r in rs})
        rs = [r for r in rs if servers and r["server"] == servers[-1]]
        seq, rand = per_page(rs, "seq"), per_page(rs, "rand")
        if seq and rand:
            return max(1.0, round(rand / seq, 1))
    return None


def shuffled(thresholds, seed):
    """The thresholds in an order of their own for each fraction and
    repetition (seeded): no threshold always runs after the same one."""
    order = list(thresholds)
    random.Random(f"order-{seed}").shuffle(order)
    return order


def pgbench_order_seed(frac, rep):
    """shuffled()'s seed for one pgbench fraction and repetition (repetition
    0 keeps the order of the runs that had only one)."""
    return frac if rep == 0 else f"pgbench-{frac}-{rep}"


def set_threshold(conn, threshold):
    conn.execute(f"SET vacskip.threshold = {-1 if threshold == 'auto' else threshold}")


def freeze(conn, rel):
    """Make every page all-frozen again; threshold 1 reads only the pages
    that are not (an aggressive VACUUM may skip only all-frozen ones)."""
    set_threshold(conn, 1)
    conn.execute(f"VACUUM (FREEZE) {rel}")
    conn.execute("CHECKPOINT")


def warm_up(conn, rel):
    """After a restart: bring the catalogs a VACUUM reads and updates into
    shared buffers (VACUUM of a one-row table), and rel's relcache entry, so
    that the timed VACUUM reads only its own relation cold."""
    conn.execute("CREATE TABLE IF NOT EXISTS warm (id int) WITH (autovacuum_enabled = off)")
    conn.execute("INSERT INTO warm VALUES (1)")
    conn.execute("VACUUM warm")
    conn.execute(f"SELECT 1 FROM {rel} LIMIT 0")


def used_thresholds(report):
    """The thresholds VACUUM used (all-frozen/all-visible), from its report:
    the line is there only when they differ from stock's."""
    t = report.thresholds or (32, 32)
    return f"{t[0]}/{t[1]}"


def timed_vacuum_verbose(conn, rel, threshold):
    set_threshold(conn, threshold)
    t0 = time.perf_counter()
    text = vacuum_verbose(conn, rel)
    ms = (time.perf_counter() - t0) * 1000.0
    return ms, parse_report(text)


# ----------------------------------------------------------------- the bench

class Bench:
    def __init__(self, args, cfg, servers, out):
        self.args = args
        self.cfg = cfg
        self.servers = servers
        self.out = out
        self.res = Results(out / "runs.csv")
        self.work = make_workdir("vacskip-bench-")
        self.slow = SlowRead(self.work)
        self.nodes = []

    # -- planning: how many points each phase has left, for the estimate
    def sweep_plan(self, major):
        cfg = self.cfg
        for mode in cfg["io_modes"].get(major, ()):
            for profile in cfg["profiles"]:
                yield mode, profile

    def sweep_passes(self):
        """The fractions in two passes: those up to HEAVY_FRAC first, then the
        rest, whose points cost far more (every page modified, frozen and
        written again before each VACUUM): a run cut short keeps the rows
        that tell thresholds apart."""
        fracs = self.cfg["fracs"]
        light = tuple(f for f in fracs if f <= HEAVY_FRAC)
        heavy = tuple(f for f in fracs if f > HEAVY_FRAC)
        return [p for p in (light, heavy) if p]

    def sweep_left(self, s, fracs=None):
        cfg = self.cfg
        n = 0
        for mode, profile in self.sweep_plan(s.major):
            for frac in (cfg["fracs"] if fracs is None else fracs):
                for rep in range(reps_of(cfg, frac)):
                    for thr in cfg["thresholds"]:
                        n += not self.res.have(
                            phase="sweep", server=s.name, mode=mode, profile=profile,
                            pages=cfg["sweep_pages"], frac=frac, rep=rep, threshold=thr)
        return n

    def calib_left(self):
        """Calibration points still to measure: both kinds, calib_reps
        times, once per profile (the first server and I/O mode of a profile
        that has none measures it; the others reuse it)."""
        cfg = self.cfg
        todo = set()
        for s in self.patched():
            for mode, profile in self.sweep_plan(s.major):
                if self.calibrated_rpc(s, mode, profile) is None:
                    todo.add(profile)
        return 2 * cfg.get("calib_reps", 1) * len(todo)

    def pgbench_pending(self, s):
        """(profile, rep, frac, threshold) still to measure, in the order
        phase_pgbench() measures them."""
        cfg = self.cfg
        return [(profile, rep, frac, thr) for profile in sorted(cfg["pgbench_profiles"])
                for rep in range(cfg["pgbench_reps"])
                for frac in sorted(cfg["pgbench_fracs"])
                for thr in shuffled(cfg["thresholds"], pgbench_order_seed(frac, rep))
                if not self.res.have(phase="pgbench", server=s.name, mode="buffered",
                                     profile=profile, pages=cfg["pgbench_scale"], frac=frac,
                                     rep=rep, threshold=thr)]

    def cached_pending(self):
        cfg = self.cfg
        return [s for s in self.servers
                if not self.res.have(phase="cached", server=s.name, mode="cached", profile="",
                                     pages=cfg["cached_pages"], frac="",
                                     rep=cfg["cached_reps"] - 1, threshold="")]

    def count_points(self, phases):
        left = {}
        for s in self.patched():
            if "sweep" in phases:
                left["sweep"] = left.get("sweep", 0) + self.sweep_left(s)
            if "pgbench" in phases:
                left["pgbench"] = left.get("pgbench", 0) + len(self.pgbench_pending(s))
        if "sweep" in phases:
            left["sweep"] = left.get("sweep", 0) + self.calib_left()
        if "cached" in phases:
            left["cached"] = len(self.cached_pending()) * self.cfg["cached_reps"]
        return left

    def calib_key(self, server, mode, profile, rep=0):
        return dict(phase="calib", server=server.name, mode=mode, profile=profile,
                    pages=self.cfg["sweep_pages"], frac="", rep=rep)

    def calibrated_rpc(self, server, mode, profile):
        """random_page_cost from the calibration in runs.csv, or None."""
        return calibrated_rpc(self.res.rows, server.name, mode, profile)

    def profile_env(self, profile):
        return self.slow.env(self.cfg["penalty_us"] if profile == "slow" else 0)

    def patched(self):
        return [s for s in self.servers if s.variant == "patched"]

    def start_cluster(self, server, settings, name):
        node = BenchCluster(server, self.work, settings, name)
        self.nodes.append(node)
        return node

    def close(self):
        for n in self.nodes:
            try:
                n.stop()
            except RuntimeError as e:
                print(e, file=sys.stderr)
        self.res.close()
        remove_tree(self.work)

    def install(self):
        """Private copies of the servers, vacskip built once per major (against
        the patched server) and installed into the patched copy only
        (--installed: the given patched servers have it already)."""
        copies = []
        for s in self.servers:
            copies.append(private_copy(s, self.work / "servers" / s.name))
        for s in copies:
            if s.patched and self.args.installed:
                lib = Path(run([s.pg_config, "--pkglibdir"]).strip()) / "vacskip.so"
                if not lib.exists():
                    raise SystemExit(f"--installed, but {s.name} has no {lib}")
            elif s.patched:
                install_extension(TOP, self.work / f"ext-{s.major}", s.pg_config, [s.pg_config])
        self.servers = copies

    # -- calibration: per-page cost of sequential and of random reads
    def calibrate(self, node, server, mode, profile, files):
        """The storage profile's random_page_cost: the cost of an 8 kB read
        of a random page over that of the next page, one read at a time
        (a TID scan), as fio compares them in MEASURED.md.
        It describes the disk, so it is measured once per profile, with
        direct I/O where the server has it (no OS readahead); other I/O
        modes and servers reuse that figure."""
        cfg = self.cfg
        # A run that has a calibration keeps it (however many repetitions
        # it has): a resumed run must not change the autotuner's input.
        if self.calibrated_rpc(server, mode, profile) is not None:
            return self.calibrated_rpc(server, mode, profile)
        node.set_profile(profile_settings(server.major, mode, profile),
                         self.profile_env(profile))
        pages = cfg["sweep_pages"]
        sample = sorted(random.Random("calib").sample(range(pages), cfg["calib_pages"]))
        # repetitions alternate the two kinds; random_page_cost is the ratio
        # of their medians
        for rep in range(cfg.get("calib_reps", 1)):
            key = self.calib_key(server, mode, profile, rep)
            for kind in ("seq", "rand"):
                cold_restart(node, mode, files)
                with node.connect() as conn:
                    warm_up(conn, "t")
                    self.slow.reset()
                    t0 = time.perf_counter()
                    blocks = range(len(sample)) if kind == "seq" else sample
                    conn.execute("SELECT count(*) FROM t WHERE ctid = ANY(%s::tid[])",
                                 ([f"({b},1)" for b in blocks],))
                    n = len(blocks)
                    ms = (time.perf_counter() - t0) * 1000.0
                    reads, pen, _ = self.slow.counters()
                self.res.add(threshold=kind, ms=ms, scanned=n, reads=reads, penalised=pen,
                             major=server.major, note=f"{ms / n * 1000:.1f} us/page", **key)
                self.progress.step("sweep", f"calibration {server.name} {mode}/{profile} "
                                   f"{kind} {rep + 1}/{cfg.get('calib_reps', 1)}: "
                                   f"{ms / n * 1000:.1f} us/page", ms / 1000.0)
        return self.calibrated_rpc(server, mode, profile)

    def phase_sweep(self, server, fracs):
        cfg = self.cfg
        settings = {"shared_buffers": f"'{cfg['shared_buffers']}'",
                    "shared_preload_libraries": "'vacskip'",
                    "max_wal_size": "'8GB'", "checkpoint_timeout": "'1h'"}
        if server.major >= 18:
            settings.update(io_method="'worker'", io_combine_limit="'128kB'")
        node = self.start_cluster(server, settings, f"sweep-{server.name}")
        node.start()
        log(f"sweep: {server.name}: creating the table ({cfg['sweep_pages']} pages)")
        with node.connect() as conn:
            conn.execute("CREATE EXTENSION pg_prewarm")
            table = SweepTable(conn, cfg["sweep_pages"])
            conn.execute("CHECKPOINT")
            files = node.relation_files(conn, "t")
        log(f"sweep: {server.name}: {table.pages} pages, {table.rpp} rows per page")
        for mode, profile in self.sweep_plan(server.major):
            rpc = self.calibrate(node, server, mode, profile, files)
            conf = profile_settings(server.major, mode, profile, rpc)
            env = self.profile_env(profile)
            node.set_profile(conf, env)
            log(f"sweep: {server.name} {mode}/{profile}: {conf}, "
                f"read penalty {env['SLOWREAD_PENALTY_US']} us")
            node.stop()
            node.start()
            for frac in fracs:
                for rep in range(reps_of(cfg, frac)):
                    ids = table.choose(frac, rep)
                    for thr in shuffled(cfg["thresholds"], f"{frac}-{rep}"):
                        key = dict(phase="sweep", server=server.name, mode=mode,
                                   profile=profile, pages=cfg["sweep_pages"], frac=frac,
                                   rep=rep, threshold=thr)
                        if self.res.have(**key):
                            continue
                        t0 = time.monotonic()
                        with node.connect() as conn:
                            freeze(conn, "t")
                            npages = table.modify(conn, ids)
                            conn.execute("CHECKPOINT")
                        ms, rep_, reads, pen = self.cold_vacuum(node, mode, files, "t", thr)
                        self.res.add(ms=ms, scanned=rep_.scanned, rel_pages=rep_.rel_pages,
                                     reads=reads, penalised=pen, major=server.major,
                                     note=f"{len(ids)} rows on {npages} pages; "
                                     f"skip thresholds {used_thresholds(rep_)}", **key)
                        self.progress.step("sweep", f"{server.name} {mode}/{profile} frac={frac:g} "
                                           f"rep={rep} threshold={thr}: {ms:.1f} ms, "
                                           f"{rep_.scanned} pages", time.monotonic() - t0)
        return node

    def cold_vacuum(self, node, mode, files, rel, threshold):
        """Restart with `rel`'s files out of the OS cache (or direct I/O),
        then time VACUUM (VERBOSE) rel: (ms, report, read calls, penalised)."""
        cold_restart(node, mode, files)
        with node.connect() as conn:
            warm_up(conn, rel)
            self.slow.reset()
            ms, report = timed_vacuum_verbose(conn, rel, threshold)
            reads, pen, _ = self.slow.counters()
        return ms, report, reads, pen

    def phase_pgbench(self, server, node):
        cfg = self.cfg
        scale = cfg["pgbench_scale"]
        env = node.env()
        pgbench = [str(server.bindir / "pgbench"), "-h", "127.0.0.1", "-p", str(node.port),
                   "-U", "postgres"]
        pending = self.pgbench_pending(server)
        if not pending:
            return
        node.set_profile(profile_settings(server.major, "buffered", "asis"), self.slow.env(0))
        node.stop()
        node.start()
        log(f"pgbench: {server.name}: pgbench -i -s {scale} -F 90")
        run(pgbench + ["-i", "-q", "-s", str(scale), "-F", "90", "postgres"], env=env)
        with node.connect() as conn:
            conn.execute("DROP TABLE IF EXISTS t")
            naccounts = conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone()[0]
            rel_pages = conn.execute("SELECT pg_relation_size('pgbench_accounts') / 8192").fetchone()[0]
            files = node.relation_files(conn, "pgbench_accounts")
        for profile, rep, frac, thr in pending:
            mode = "buffered"
            rpc = self.calibrated_rpc(server, mode, profile)
            if rpc is None:   # run() refuses a pgbench phase that would get here
                raise RuntimeError(f"pgbench: no calibration of {profile}")
            node.set_profile(profile_settings(server.major, mode, profile, rpc),
                             self.profile_env(profile))
            t0 = time.monotonic()
            ntx = max(1, round(frac * naccounts))
            with node.connect() as conn:
                freeze(conn, "pgbench_accounts")
            run(pgbench + ["-n", "-c", "1", "-t", str(ntx), "--random-seed", str(5 + rep),
                           "-b", "tpcb-like", "postgres"], env=env)
            with node.connect() as conn:
                conn.execute("CHECKPOINT")
            ms, rep_, reads, pen = self.cold_vacuum(node, mode, files, "pgbench_accounts",
                                                    thr)
            self.res.add(phase="pgbench", server=server.name, major=server.major, mode=mode,
                         profile=profile, pages=scale, frac=frac, rep=rep, threshold=thr, ms=ms,
                         scanned=rep_.scanned, rel_pages=rep_.rel_pages, reads=reads,
                         penalised=pen, note=f"{ntx} transactions, {naccounts} accounts, "
                         f"{rel_pages} pages")
            self.progress.step("pgbench", f"{server.name} {profile} frac={frac:g} rep={rep} "
                               f"threshold={thr}: "
                               f"{ms:.1f} ms, {rep_.scanned} of {rep_.rel_pages} pages",
                               time.monotonic() - t0)

    def phase_cached(self):
        cfg = self.cfg
        pages = cfg["cached_pages"]
        todo = self.cached_pending()
        if not todo:
            return
        sb = f"'{int(pages * 8 / 1024 * 1.2) + 64}MB'"
        nodes = []
        for s in todo:
            node = self.start_cluster(s, {"shared_buffers": sb}, f"cached-{s.name}")
            node.start()
            nodes.append(node)
            log(f"cached: {s.name}: creating an all-frozen table of {pages} pages")
            cached_vacuum.setup(node, pages)
        conns = [n.connect() for n in nodes]
        try:
            for c in conns:
                c.execute("SELECT pg_prewarm('t')")
                c.execute("SELECT pg_prewarm('t', 'buffer', 'vm')")
                cached_vacuum.timed_vacuum(c, "t")      # warm-up, discarded
            for rep in range(cfg["cached_reps"]):
                for s, c in zip(todo, conns):
                    ms = cached_vacuum.timed_vacuum(c, "t")
                    one = cached_vacuum.timed_vacuum(c, "one")
                    self.res.add(phase="cached", server=s.name, major=s.major, mode="cached",
                                 profile="", pages=pages, frac="", rep=rep, threshold="",
                                 ms=ms, note=f"1-page table: {one:.3f} ms")
                    self.progress.step("cached", f"{s.name} rep {rep}: {ms:.2f} ms", ms / 1000.0)
        finally:
            for c in conns:
                c.close()
            for n in nodes:
                n.stop()

    def drop_cluster(self, node):
        node.stop()
        self.nodes.remove(node)
        remove_tree(node.base)

    def run(self, phases):
        self.progress = Progress(0)
        self.progress.left = self.count_points(phases)
        self.progress.total = sum(self.progress.left.values())
        log(f"plan: {self.progress.left} points still to measure")
        if not self.progress.total:
            return
        missing = pgbench_uncalibrated(self.res.rows, self.cfg, phases,
                                       [s.name for s in self.patched() if self.pgbench_pending(s)])
        if missing:
            raise SystemExit(
                f"pgbench: {'profiles' if len(missing) > 1 else 'profile'} "
                f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no "
                "random_page_cost calibration here, and the auto column would run at "
                "PostgreSQL's default costs; the "
                "calibration is part of the sweep: add the sweep phase (e.g. --phases "
                "sweep,pgbench --fracs 1e-2), or use a result directory whose sweep has it")
        self.install()
        passes = self.sweep_passes() if "sweep" in phases else []
        # The cheap, telling rows first, then pgbench and seed 2, then the
        # heavy rows (hours at full size).
        if passes:
            self.sweep_pass(passes[0])
        if "pgbench" in phases:
            for s in self.patched():
                if self.pgbench_pending(s):
                    node = self.start_cluster(
                        s, {"shared_buffers": f"'{self.cfg['shared_buffers']}'",
                            "shared_preload_libraries": "'vacskip'",
                            "max_wal_size": "'8GB'"}, f"pgb-{s.name}")
                    node.start()
                    self.phase_pgbench(s, node)
                    self.drop_cluster(node)
        if "cached" in phases:
            self.phase_cached()
        for fracs in passes[1:]:
            self.sweep_pass(fracs)

    def sweep_pass(self, fracs):
        for s in self.patched():
            if self.sweep_left(s, fracs):
                self.drop_cluster(self.phase_sweep(s, fracs))


# ----------------------------------------------------------------- report

def machine_facts():
    def read(path):
        try:
            return Path(path).read_text()
        except OSError:
            return ""
    mem = re.search(r"MemTotal:\s+(\d+)", read("/proc/meminfo"))
    cpu = re.search(r"model name\s*:\s*(.*)", read("/proc/cpuinfo"))
    disk = subprocess.run(["findmnt", "-no", "SOURCE,FSTYPE,OPTIONS", "-T", "/tmp"],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    return {
        "cores": os.cpu_count(),
        "cpu": cpu.group(1) if cpu else "?",
        "memory": f"{int(mem.group(1)) / 1024 / 1024:.1f} GiB" if mem else "?",
        "kernel": platform.release(),
        "os": read("/etc/debian_version").strip() and f"Debian {read('/etc/debian_version').strip()}",
        "filesystem of the clusters": disk,
        "load average when the report was written":
            " ".join(read("/proc/loadavg").split()[:3]),
    }


def machine_tag():
    mem = re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())
    gb = round(int(mem.group(1)) / 1024 / 1024) if mem else 0
    host = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname().split(".")[0])[:10] or "host"
    return f"{host}-{os.cpu_count()}c{gb}g"


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def row_key(r):
    """A sweep row's cell: (server, mode, profile, frac, threshold)."""
    return (r["server"], r["mode"], r["profile"], float(r["frac"]), r["threshold"])


def medians(rows):
    """(server, mode, profile, frac, threshold) -> (median ms, median scanned,
    n, median reads penalised, median read calls)"""
    groups = {}
    for r in rows:
        groups.setdefault(row_key(r), []).append(r)
    out = {}
    for k, rs in groups.items():
        out[k] = (statistics.median(float(r["ms"]) for r in rs),
                  statistics.median(int(r["scanned"]) for r in rs),
                  len(rs), statistics.median(int(r["penalised"] or 0) for r in rs),
                  statistics.median(int(r["reads"] or 0) for r in rs))
    return out


def thr_key(t):
    return (1, 0) if t == "auto" else (0, int(t))


def per_rep(rows):
    """(server, mode, profile, frac, threshold) -> {rep: ms}"""
    out = {}
    for r in rows:
        out.setdefault(row_key(r), {})[r["rep"]] = float(r["ms"])
    return out


# One-sided 95 % quantiles of Student's t by degrees of freedom; a df between
# two entries takes the smaller df's (larger) quantile.
T95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860,
       9: 1.833, 10: 1.812, 12: 1.782, 15: 1.753, 20: 1.725, 30: 1.697, 60: 1.671}


def t95(df):
    return T95[max(k for k in T95 if k <= df)]


def paired_ratio(reps, group, frac, a, b):
    """a's time over b's, paired by repetition (the same rows were updated
    for both): (pairs, lower bound, geometric mean, upper bound), the bounds
    one-sided 95 % (Student's t on the logarithms of the ratios).  None with
    fewer than two pairs."""
    xa, xb = reps.get((*group, frac, a), {}), reps.get((*group, frac, b), {})
    lr = [math.log(xa[k] / xb[k]) for k in xa if k in xb and xa[k] > 0 and xb[k] > 0]
    if len(lr) < 2:
        return None
    m = statistics.mean(lr)
    h = t95(len(lr) - 1) * statistics.stdev(lr) / math.sqrt(len(lr))
    return len(lr), math.exp(m - h), math.exp(m), math.exp(m + h)


def judge(bounds, limit, same=False):
    """'above' limit beyond noise (lower bound over it), 'within' (upper
    bound at most it), else 'undecided' (or '-' without repetitions).
    'same work' where auto's VACUUM read exactly the other's pages in as
    many read calls: the times of one VACUUM repeated, whose true ratio is
    1, which the bounds can never place on the right side of 1.00."""
    if same:
        return "same work"
    if bounds is None:
        return "-"
    _, lo, _, hi = bounds
    return "above" if lo > limit else "within" if hi <= limit else "undecided"


def fixed_medians(med, group, frac):
    """{fixed threshold: median ms} of one row."""
    return {k[4]: v[0] for k, v in med.items() if k[:4] == (*group, frac) and k[4] != "auto"}


def score_rows(med, group, reps=None):
    """Per fraction: best fixed threshold, auto / best, auto / stock; with
    reps (per_rep()), the same two paired by repetition with their bounds."""
    fracs = sorted({k[3] for k in med if k[:3] == group})
    rows = []
    for f in fracs:
        fixed = fixed_medians(med, group, f)
        auto = med.get((*group, f, "auto"))
        if not fixed or auto is None or "32" not in fixed:
            continue
        best_t = min(fixed, key=fixed.get)
        # fixed thresholds that read exactly auto's pages with as many read
        # calls (medians): the same VACUUM, so their times differ only by noise
        twins = sorted((t for t in fixed
                        if med[(*group, f, t)][1] == auto[1] and med[(*group, f, t)][4] == auto[4]),
                       key=int)
        best = med[(*group, f, best_t)]
        rows.append(dict(frac=f, best_t=best_t, best=fixed[best_t], auto=auto[0],
                         stock=fixed["32"], vs_best=auto[0] / fixed[best_t],
                         vs_stock=auto[0] / fixed["32"], twins=twins,
                         pages_vs_best=auto[1] / best[1] if best[1] else float("nan"),
                         reads_vs_best=auto[4] / best[4] if best[4] else float("nan"),
                         paired_best=paired_ratio(reps, group, f, "auto", best_t) if reps else None,
                         paired_stock=paired_ratio(reps, group, f, "auto", "32") if reps else None,
                         same_best=best_t in twins, same_stock="32" in twins))
    return rows


def paired_text(bounds, limit, same=False):
    if bounds is None:
        return "same work" if same else "–"
    _, lo, gm, hi = bounds
    return f"{gm:.2f} [{lo:.2f}, {hi:.2f}]: {judge(bounds, limit, same)}"


# The paired verdict's key in a score_rows() row -> its 'same work' key.
SAME_KEY = {"paired_best": "same_best", "paired_stock": "same_stock"}


def paired_summary(sc, key, limit, what):
    """One sentence part: how many rows are above, within, undecided."""
    by = {}
    for r in sc:
        by.setdefault(judge(r[key], limit, r[SAME_KEY[key]]), []).append(r)

    def rows(v):
        return ", ".join(f"{r['frac']:g} ({r[key][2]:.2f} [{r[key][1]:.2f}, {r[key][3]:.2f}])"
                         for r in by.get(v, []))

    def n(v):
        k = len(by.get(v, []))
        return f"{k} row{'' if k == 1 else 's'}"
    same = ", ".join(f"{r['frac']:g}" for r in by.get("same work", []))
    return (f"auto ≤ {limit:.2f} × {what} within on {n('within')}"
            + (f", the same work as {what} on {n('same work')} ({same})" if same else "")
            + f", above on {n('above')}"
            + (f" ({rows('above')})" if by.get("above") else "")
            + f", undecided on {n('undecided')}"
            + (f" ({rows('undecided')})" if by.get("undecided") else "")
            + (f", without repetitions on {n('-')}" if by.get("-") else ""))


def fixed_scores(med, group):
    """For every fixed threshold t, scored like auto over the rows that
    score_rows() scores: {t: (worst t / best, geometric mean t / best)}.
    What one threshold, chosen in hindsight for this profile and I/O mode,
    achieves against the criteria under this run's noise."""
    ratios = {}
    fracs = [r["frac"] for r in score_rows(med, group)]
    for f in fracs:
        fixed = fixed_medians(med, group, f)
        best = min(fixed.values())
        for t, ms in fixed.items():
            ratios.setdefault(t, []).append(ms / best)
    return {t: (max(rs), geomean(rs)) for t, rs in ratios.items() if len(rs) == len(fracs)}


def best_constant(scores):
    """The fixed threshold with the lowest worst-row ratio (then geomean)."""
    return min(scores, key=lambda t: (scores[t][0], scores[t][1], int(t)))


# Work within this factor of the best threshold's (pages scanned and read
# calls, both ways) cannot explain a time 1.10 x the best's.
SIMILAR_WORK = 1.05


def similar_work(r):
    return all(1 / SIMILAR_WORK <= x <= SIMILAR_WORK
               for x in (r["pages_vs_best"], r["reads_vs_best"]))


def plot(med, group, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    thrs = sorted({k[4] for k in med if k[:3] == group}, key=thr_key)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for t in thrs:
        pts = sorted((k[3], v[0]) for k, v in med.items() if k[:3] == group and k[4] == t)
        style = dict(color="black", linewidth=2.5, linestyle="--") if t == "auto" else {}
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                label=f"threshold {t}" if t != "auto" else "auto (-1)", **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fraction of rows updated")
    ax.set_ylabel("VACUUM time, ms (median)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def score_table(p, sc):
    """The score table of score_rows()' rows, through the line writer p:
    (geometric mean auto / best, geometric mean auto / stock)."""
    p("| frac | best fixed | best ms | auto ms | auto / best | auto / stock | "
      "≤ 1.10 × best | ≤ 1.00 × stock | paired auto / best [bounds]: vs 1.10 | "
      "paired auto / stock [bounds]: vs 1.00 | auto's pages, read calls / best's | "
      "same pages and reads as auto |")
    p("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sc:
        p(f"| {r['frac']:g} | {r['best_t']} | {r['best']:.1f} | {r['auto']:.1f} | "
          f"{r['vs_best']:.2f} | {r['vs_stock']:.2f} | "
          f"{'yes' if r['vs_best'] <= 1.10 else 'NO'} | "
          f"{'yes' if r['vs_stock'] <= 1.00 else 'NO'} | "
          f"{paired_text(r['paired_best'], 1.10, r['same_best'])} | "
          f"{paired_text(r['paired_stock'], 1.00, r['same_stock'])} | "
          f"{r['pages_vs_best']:.2f}, {r['reads_vs_best']:.2f} | "
          f"{', '.join(r['twins']) or '–'} |")
    gb = geomean([r["vs_best"] for r in sc])
    gs = geomean([r["vs_stock"] for r in sc])
    p(f"| geometric mean | | | | {gb:.2f} | {gs:.2f} | | | | | | |\n")
    return gb, gs


def reps_text(cfg):
    cheap = cfg.get("cheap_reps")
    if cheap:
        return (f"{max(cheap[1], cfg['reps'])} runs up to fraction {cheap[0]:g}, "
                f"{cfg['reps']} above")
    return f"{cfg['reps']} run(s)"


def read_planned(out):
    """The patched servers runs into `out` were given (servers.txt)."""
    path = out / "servers.txt"
    return path.read_text().split() if path.exists() else []


def missing_sweep_points(rows, cfg, planned):
    """{'server mode/profile': points planned by cfg but not in rows}, for the
    patched servers `planned` and those with rows."""
    have = {(r["server"], r["mode"], r["profile"], float(r["frac"]), r["rep"], r["threshold"])
            for r in rows if r["phase"] == "sweep"}
    servers = sorted({*planned, *(r["server"] for r in rows if r["phase"] == "sweep")},
                     key=lambda n: (-int(n.split("-")[0]), n))
    missing = {}
    for s in servers:
        for mode in cfg["io_modes"].get(int(s.split("-")[0]), ()):
            for profile in cfg["profiles"]:
                n = sum((s, mode, profile, float(f), str(rep), str(t)) not in have
                        for f in cfg["fracs"] for rep in range(reps_of(cfg, f))
                        for t in cfg["thresholds"])
                if n:
                    missing[f"{s} {mode}/{profile}"] = n
    return missing


def write_report(out, size, cfg, profiles_used, command):
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    L = []
    p = L.append
    label = {"full": "full run (BENCH=full)",
             "default": "DEFAULT (REDUCED) RUN: fewer fractions and repetitions, "
                        "small table; shows the shape, not final figures",
             "smoke": "SMOKE RUN (tiny; exercises the driver only)"}[size]
    part = []
    if tuple(cfg["profiles"]) != SIZES[size]["profiles"]:
        part.append(f"profile{'s' if len(cfg['profiles']) > 1 else ''} "
                    f"{', '.join(cfg['profiles'])} only")
    if tuple(cfg["fracs"]) != SIZES[size]["fracs"]:
        part.append(f"fractions {', '.join(f'{f:g}' for f in cfg['fracs'])} only")
    if (cfg["reps"], cfg.get("cheap_reps")) != (SIZES[size]["reps"], SIZES[size].get("cheap_reps")):
        part.append(reps_text(cfg))
    if part:
        label += ", " + "; ".join(part)
    missing = missing_sweep_points(rows, cfg, read_planned(out))
    if missing:
        label = "INCOMPLETE " + label
    p(f"# vacskip benchmark: {label}\n")
    p(f"Written {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by "
      f"`{command}`; every measurement is in [runs.csv](runs.csv).\n")
    if missing:
        p(f"**Incomplete**: {sum(missing.values())} planned sweep points are not measured "
          "yet (" + "; ".join(f"{k}: {v}" for k, v in missing.items()) + "). Rows "
          "lacking a threshold are left out of the score. Resume with "
          "`make bench BENCH=<size> BENCH_OUT=<this directory>`.\n")
    p("Caveat: this machine has 2 cores shared with other engineers compiling and "
      "testing while this ran; single timings vary by ±15 % or more (MEASURED.md), "
      f"and every cell is a median of only {reps_text(cfg)}.\n")
    p("## Machine\n")
    p("| fact | value |\n|---|---|")
    for k, v in machine_facts().items():
        p(f"| {k} | {v} |")
    p("")
    p("## Settings\n")
    p(f"Size `{size}`: sweep table {cfg['sweep_pages']} pages of `t(id int, val int, pad text)` "
      f"(pad {ROW_PAD} characters, fillfactor 90, ~96 rows per page), shared_buffers "
      f"{cfg['shared_buffers']}; fractions {', '.join(f'{f:g}' for f in cfg['fracs'])}; "
      f"thresholds {', '.join(map(str, cfg['thresholds']))}; {reps_text(cfg)} "
      "(medians). Every server: fsync off, autovacuum off, "
      "vacuum_max_eager_freeze_failure_rate = 0 (18), io_method = worker and "
      "io_combine_limit = 128kB (18), shared_preload_libraries = vacskip.\n")
    p("Per point: `VACUUM (FREEZE) t` (at threshold 1, so it reads only the pages that "
      "are not all-frozen), CHECKPOINT; `UPDATE t SET val = val + 1` on k = frac × rows "
      "rows chosen by a generator seeded with (frac, repetition) — the same rows for "
      "every threshold and every I/O mode and profile; CHECKPOINT; shut down; for "
      "buffered reads `fdatasync` + `posix_fadvise(DONTNEED)` every file of `t`; start; "
      "`SET vacskip.threshold`; time `VACUUM (VERBOSE) t` from the client and read "
      "'pages scanned' from its output.\n")
    p("## Storage profiles and the autotuner's settings\n")
    p("- **asis**: this disk as it is.")
    p(f"- **slow**: `bench/slowread.c` preloaded into the server (LD_PRELOAD at `pg_ctl "
      f"start`, so also into 18's I/O workers): a read whose offset does not continue one "
      f"of the last 8 reads of the same file (device and inode, shared by all server "
      f"processes) first sleeps {cfg['penalty_us']} µs.\n")
    p("effective_io_concurrency and maintenance_io_concurrency: asis 16 (fio on this "
      "disk serves 4× more 8 kB random reads at queue depth 16 than at 1, MEASURED.md); "
      "slow 1 (the penalty is a sleep in the reading process: one random read at a time). "
      "random_page_cost (seq_page_cost = 1) describes the disk, so it is measured once "
      "per profile, before its first sweep, the way MEASURED.md compares random and "
      "sequential reads with fio: same request size (8 kB), same queue depth (1). After "
      "a cold restart, a TID scan (`WHERE ctid = ANY(...)`, one 8 kB read at a time) "
      f"of tuple 1 of pages 0 to n - 1 (sequential), then of n = {cfg['calib_pages']} "
      "sorted random pages (random), the two alternating (this size: "
      f"{cfg.get('calib_reps', 1)} times each; the table says how many runs a result "
      "directory has); "
      "random_page_cost = median random / median sequential cost per page (at least 1), "
      "measured with "
      "direct I/O on 18 (no OS readahead) and used for every I/O mode and server of that "
      "profile. The same settings apply to every threshold column; the fixed "
      "thresholds ignore random_page_cost, the auto column (threshold -1) reads it.\n")
    calib = [r for r in rows if r["phase"] == "calib"]
    if calib:
        p("Calibration (also the check that slowread works: 'penalised' counts the reads "
          "it delayed):\n")
        p("| server | I/O | profile | seq µs/page | random µs/page | random_page_cost | "
          "reads (seq / random) | penalised (seq / random) |")
        p("|---|---|---|---|---|---|---|---|")
        groups = {}
        for r in calib:
            groups.setdefault((r["server"], r["mode"], r["profile"]), {}) \
                .setdefault(r["threshold"], []).append(r)

        def us(rs):
            return [float(r["ms"]) / int(r["scanned"]) * 1000 for r in rs]

        def span(xs):
            return f"{statistics.median(xs):.1f}" + (
                f" ({min(xs):.1f}-{max(xs):.1f}, {len(xs)} runs)" if len(xs) > 1 else "")

        def med_int(rs, field):
            return f"{statistics.median(int(r[field]) for r in rs):g}"

        for (srv, mode, prof), g in sorted(groups.items()):
            if "seq" not in g or "rand" not in g:
                continue
            s, rr = us(g["seq"]), us(g["rand"])
            ratio = max(1.0, round(statistics.median(rr) / statistics.median(s), 1))
            p(f"| {srv} | {mode} | {prof} | {span(s)} | {span(rr)} | {ratio:g} | "
              f"{med_int(g['seq'], 'reads')} / {med_int(g['rand'], 'reads')} | "
              f"{med_int(g['seq'], 'penalised')} / {med_int(g['rand'], 'penalised')} |")
        p("")
    sweep = [r for r in rows if r["phase"] == "sweep"]
    med = medians(sweep)
    groups = sorted({k[:3] for k in med})
    verdicts = []
    if groups:
        p("## Sweep (seed 1): VACUUM time relative to threshold 32\n")
        p("Cells: median time as % of threshold 32's; last columns: threshold 32's median "
          "in ms and pages scanned. Below each table, per threshold: median ms, pages "
          "scanned, read calls.\n")
    for g in groups:
        server, mode, profile = g
        thrs = sorted({k[4] for k in med if k[:3] == g}, key=thr_key)
        fracs = sorted({k[3] for k in med if k[:3] == g})
        p(f"### {server}, {mode} reads, profile {profile}\n")
        rpc = calibrated_rpc(rows, server, mode, profile)
        conf = profile_settings(int(server.split("-")[0]), mode, profile, rpc)
        p("Settings: " + ", ".join(f"{k} = {v}" for k, v in conf.items()) + ".\n")
        p("| frac | " + " | ".join(str(t) for t in thrs if t != "32") + " | 32 (ms) | 32 pages |")
        p("|---" * (len(thrs) + 2) + "|")
        for f in fracs:
            base = med.get((*g, f, "32"))
            if base is None:
                continue
            cells = []
            for t in thrs:
                if t == "32":
                    continue
                v = med.get((*g, f, t))
                cells.append(f"{v[0] / base[0]:.0%}" if v else "")
            p(f"| {f:g} | " + " | ".join(cells) + f" | {base[0]:.1f} | {base[1]:.0f} |")
        p("")
        p("| frac | " + " | ".join(f"{t}: ms, pages, reads" for t in thrs) + " |")
        p("|---" * (len(thrs) + 1) + "|")
        for f in fracs:
            vals = [med.get((*g, f, t)) for t in thrs]
            p(f"| {f:g} | " + " | ".join(
                f"{v[0]:.1f}, {v[1]:.0f}, {v[4]:.0f}" + (f" ({v[3]:.0f} slow)" if profile == "slow" else "")
                if v else "" for v in vals) + " |")
        p("\n'reads': read calls the server made during the timed VACUUM (slowread counts "
          "them in both profiles; 18 combines up to 16 pages into one), '(n slow)': those "
          "slowread delayed. Unlike the times, these counts do not depend on the "
          "machine's load.")
        png = f"sweep-{server}-{mode}-{profile}.png"
        plot(med, g, out / png, f"{server}, {mode} reads, profile {profile}: "
             f"{cfg['sweep_pages']} pages")
        p(f"\n![{server} {mode} {profile}]({png})\n")
    if groups:
        p("## The autotuner's score\n")
        p("Per row: auto = vacskip.threshold -1 under the profile's settings; best = the "
          "fastest fixed threshold of that row (medians). Criteria of the issue: "
          "auto ≤ 1.10 × best and auto ≤ 1.00 × stock (32) on every row.\n")
        p("Judged two ways. By the medians (the 'auto / best', 'auto / stock' and yes/NO "
          "columns). And paired by repetition ('paired' columns): every threshold of one "
          "repetition updated the same rows, so each repetition gives one ratio of auto's "
          "time to the other's; the cell is their geometric mean with one-sided 95 % "
          "bounds (Student's t on the logarithms), and the criterion is 'within' when the "
          "upper bound meets it, 'above' when the lower bound misses it, 'undecided' when "
          "the interval straddles it, i.e. the repetitions cannot tell; 'same work' where "
          "auto's VACUUM read exactly the other's pages in as many read calls (medians), "
          "so that the two are one VACUUM timed twice: their true ratio is 1, which meets "
          "both criteria, and which bounds around it can only call undecided (or, one "
          "time in twenty, above 1.00). The best fixed threshold is picked from the same "
          "repetitions, which favours it: an 'above' against it leans against auto.\n")
        reps = per_rep(sweep)
        scored = {}
        for g in groups:
            sc = score_rows(med, g, reps)
            scored[g] = sc
            if not sc:
                continue
            server, mode, profile = g
            p(f"### {server}, {mode}, {profile}\n")
            chose = sorted({r["note"].split("skip thresholds ")[1] for r in sweep
                            if (r["server"], r["mode"], r["profile"]) == g and
                            r["threshold"] == "auto" and "skip thresholds " in r["note"]})
            if chose:
                p(f"Thresholds auto used (all-frozen/all-visible): {', '.join(chose)}.\n")
            gb, gs = score_table(p, sc)
            p("'Same pages and reads': fixed thresholds whose VACUUM read exactly the pages "
              "auto's did, in as many read calls: the same work, so where the best fixed "
              "threshold is among them, auto / best is noise between identical VACUUMs. "
              "'Pages, read calls / best's': medians of auto's VACUUM over the best fixed "
              "threshold's.\n")
            worst_b = max(sc, key=lambda r: r["vs_best"])
            worst_s = max(sc, key=lambda r: r["vs_stock"])
            ok_b = worst_b["vs_best"] <= 1.10
            ok_s = worst_s["vs_stock"] <= 1.00
            fs = fixed_scores(med, g)
            bc = best_constant(fs)
            p(f"For comparison, the fixed threshold whose worst row is closest to each row's "
              f"best, chosen in hindsight: {bc} (worst row {fs[bc][0]:.2f} × best, geometric "
              f"mean {fs[bc][1]:.2f}); worst rows of every fixed threshold: "
              + ", ".join(f"{t}: {fs[t][0]:.2f}" for t in sorted(fs, key=int)) + ".\n")
            verdicts.append((g, ok_b, ok_s, worst_b, worst_s, gb, gs, bc, fs[bc]))
            same = all(med[(*g, r["frac"], "auto")][1] == med[(*g, r["frac"], "32")][1]
                       for r in sc)
            if same:
                p("Auto scanned exactly the pages threshold 32 scanned on every row: the "
                  "autotuner chose 32 throughout, so auto / stock here is this run's "
                  "noise between two identical VACUUMs.\n")
        p("### Verdict per storage profile and I/O mode\n")
        for g, ok_b, ok_s, wb, ws, gb, gs, bc, bcs in verdicts:
            server, mode, profile = g
            b = ("met" if ok_b else f"NOT met: worst row {wb['frac']:g}, auto is "
                 f"{wb['vs_best']:.2f} × best (threshold {wb['best_t']})")
            s = ("met" if ok_s else f"NOT met: worst row {ws['frac']:g}, auto is "
                 f"{ws['vs_stock']:.2f} × stock")
            sc = scored[g]
            miss = [r for r in sc if r["vs_best"] > 1.10]
            same = [r for r in miss if r["best_t"] in r["twins"]]
            near = [r for r in miss if r["best_t"] not in r["twins"] and similar_work(r)]
            real = [r for r in miss if r["best_t"] not in r["twins"] and not similar_work(r)]
            same_s = ", ".join(f"{r['frac']:g}" for r in same) or "none"
            near_s = ", ".join(f"{r['frac']:g}: {r['vs_best']:.2f}" for r in near) or "none"
            real_s = ", ".join(f"{r['frac']:g}: {r['vs_best']:.2f}" for r in real) or "none"
            over = [r for r in sc if r["vs_stock"] > 1.00]
            over_same = ", ".join(f"{r['frac']:g}" for r in over if "32" in r["twins"]) or "none"
            over_real = ", ".join(f"{r['frac']:g}: {r['vs_stock']:.2f}" for r in over
                                  if "32" not in r["twins"]) or "none"
            p(f"- {server}, {mode}, {profile}: auto ≤ 1.10 × best {b}; auto ≤ 1.00 × stock {s} "
              f"(geometric means {gb:.2f} and {gs:.2f}). Rows over 1.10 × best: "
              f"{len(same)} where auto read the same pages as the best threshold "
              f"({same_s}), {len(near)} where its pages and read calls were within "
              f"{(SIMILAR_WORK - 1) * 100:.0f} % of the best's ({near_s}), {len(real)} "
              f"where they differed more ({real_s}). "
              f"Rows over 1.00 × stock where auto read what 32 read: {over_same}; "
              f"where it read differently: {over_real}. The best single fixed threshold in "
              f"hindsight ({bc}) is {bcs[0]:.2f} × best on its worst row. "
              f"Paired by repetition: {paired_summary(sc, 'paired_best', 1.10, 'best')}; "
              f"{paired_summary(sc, 'paired_stock', 1.00, 'stock')}.")
        p("")
    pgb = [r for r in rows if r["phase"] == "pgbench"]
    if pgb:
        p("## pgbench\n")
        p("`pgbench -i -F 90` (HOT room; accounts bigger than shared_buffers), "
          "`VACUUM (FREEZE) pgbench_accounts`, then `pgbench -n -c 1 -t N --random-seed S -b "
          "tpcb-like` with N = frac × accounts and S = 5 + repetition (the same "
          "transactions before every threshold of one repetition), CHECKPOINT, cold "
          "restart with the accounts evicted from the OS cache, timed `VACUUM (VERBOSE) "
          "pgbench_accounts`. The profile's settings and random_page_cost are the "
          "sweep's. Cells: medians over the repetitions (n), time relative to 32's.\n")
        pm = medians(pgb)
        preps = per_rep(pgb)
        for g in sorted({k[:3] for k in pm}):
            thrs = sorted({k[4] for k in pm if k[:3] == g}, key=thr_key)
            note = next(r["note"] for r in pgb if (r["server"], r["mode"], r["profile"]) == g)
            n = sorted({v[2] for k, v in pm.items() if k[:3] == g})
            n = f"{n[0]}" if n[0] == n[-1] else f"{n[0]}-{n[-1]}"
            p(f"### {g[0]}, {g[1]}, profile {g[2]} (scale {next(r['pages'] for r in pgb)}; "
              f"{note.split(', ', 1)[1]}; n = {n})\n")
            p("| frac | " + " | ".join(f"{t}" for t in thrs) + " |")
            p("|---" * (len(thrs) + 1) + "|")
            for f in sorted({k[3] for k in pm if k[:3] == g}):
                base = pm.get((*g, f, "32"))
                cells = []
                for t in thrs:
                    v = pm.get((*g, f, t))
                    cells.append(f"{v[0]:.1f} ms, {v[1]:.0f} p" +
                                 (f" ({v[0] / base[0]:.0%})" if base and t != "32" else "")
                                 if v else "")
                p(f"| {f:g} | " + " | ".join(cells) + " |")
            p("")
            sc = score_rows(pm, g, preps)
            if sc:
                p(f"Score of {g[0]}, {g[2]} under pgbench (the sweep's columns and verdicts):\n")
                score_table(p, sc)
                if any(r["paired_best"] or r["paired_stock"] for r in sc):
                    p(f"Paired by repetition: {paired_summary(sc, 'paired_best', 1.10, 'best')}; "
                      f"{paired_summary(sc, 'paired_stock', 1.00, 'stock')}.\n")
                else:
                    p("One repetition: nothing to pair, the medians are single runs.\n")
    cached = [r for r in rows if r["phase"] == "cached"]
    if cached:
        p("## Cached all-frozen VACUUM (seed 2)\n")
        pages = cached[0]["pages"]
        n = len({r["rep"] for r in cached})
        p(f"`bench/cached_vacuum.py`'s setup: `t(id int)` fillfactor 10, {pages} pages, "
          f"`VACUUM (FREEZE)`, `pg_prewarm` of heap and visibility map, one VACUUM "
          f"discarded, then {n} timed plain `VACUUM t` per server, servers alternating; "
          "no module loaded.\n")
        p("ns/page = (median − median VACUUM of a 1-page table) / pages: the "
          "visibility-map walk without the fixed cost.\n")
        p("| server | median ms | min | max | 1-page ms | ns/page |")
        p("|---|---|---|---|---|---|")
        byserver, fixed = {}, {}
        for r in cached:
            byserver.setdefault(r["server"], []).append(float(r["ms"]))
            fixed.setdefault(r["server"], []).append(float(r["note"].split(": ")[1].split()[0]))
        per_page = {}
        for s, v in sorted(byserver.items()):
            m, f = statistics.median(v), statistics.median(fixed[s])
            per_page[s] = (m - f) * 1e6 / int(pages)
            p(f"| {s} | {m:.2f} | {min(v):.2f} | {max(v):.2f} | {f:.2f} | {per_page[s]:.1f} |")
        p("")
        p("| major | patched / stock (time) | patched / stock (ns/page) | seed 2 (master, 2024) |")
        p("|---|---|---|---|")
        for m in sorted({s.split("-")[0] for s in byserver}):
            a, b = byserver.get(f"{m}-patched"), byserver.get(f"{m}-stock")
            if a and b:
                p(f"| {m} | {statistics.median(a) / statistics.median(b):.2f} | "
                  f"{per_page[f'{m}-patched'] / per_page[f'{m}-stock']:.2f} | 0.64 |")
        p("")
    (out / "report.md").write_text("\n".join(L) + "\n")
    return verdicts


# ----------------------------------------------------------------- main

def apply_scope(cfg, out, profiles=None, fracs=None, reps=None):
    """Restrict cfg to some storage profiles and sweep fractions (a run that
    measures part of a size: a model revision that changes only some
    profiles' thresholds), or change its repetitions: "N" or "N,M" (M for
    the fractions the size repeats more often).  Options given are written to OUT/scope.txt;
    options not given are read from it, so a resumed run or --report-only
    plans and reports the same points.  Returns {option: value} in force."""
    path = out / "scope.txt"
    kept = {}
    if path.exists():
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            kept[k] = v.strip()
    scope = {k: v for k, v in (("profiles", profiles), ("fracs", fracs), ("reps", reps))
             if v is not None}
    scope = {**kept, **scope}
    if "profiles" in scope:
        want = [x.strip() for x in scope["profiles"].split(",") if x.strip()]
        bad = [x for x in want if x not in cfg["profiles"]]
        if bad or not want:
            raise ValueError(f"--profiles: {', '.join(bad) or 'none given'}: not among this "
                             f"size's profiles ({', '.join(cfg['profiles'])})")
        cfg["profiles"] = tuple(x for x in cfg["profiles"] if x in want)
        cfg["pgbench_profiles"] = tuple(x for x in cfg["pgbench_profiles"] if x in want)
    if "fracs" in scope:
        try:
            want = [float(x) for x in scope["fracs"].split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"--fracs: not a list of numbers: {scope['fracs']}") from None
        bad = [x for x in want if x not in cfg["fracs"]]
        if bad or not want:
            raise ValueError(f"--fracs: {', '.join(map(str, bad)) or 'none given'}: not among "
                             f"this size's fractions ({', '.join(f'{f:g}' for f in cfg['fracs'])})")
        cfg["fracs"] = tuple(f for f in cfg["fracs"] if f in want)
    if "reps" in scope:
        try:
            n = [int(x) for x in scope["reps"].split(",")]
        except ValueError:
            n = []
        if not 1 <= len(n) <= 2 or min(n) < 1:
            raise ValueError(f"--reps: {scope['reps']}: want N or N,M, positive integers")
        if len(n) == 2 and not cfg.get("cheap_reps"):
            raise ValueError("--reps N,M: this size repeats every fraction alike; give N")
        cfg["reps"] = n[0]
        if cfg.get("cheap_reps"):
            cfg["cheap_reps"] = (cfg["cheap_reps"][0], n[-1])
    if scope:
        path.write_text("".join(f"{k} {v}\n" for k, v in sorted(scope.items())))
    return scope


def parse_server(spec):
    try:
        server = server_from_spec(spec)
    except ValueError as e:
        raise SystemExit(str(e))
    if server.variant not in ("patched", "stock"):
        raise SystemExit(f"bad --server {spec!r}: the benchmark compares patched and stock")
    return server


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=SIZES, default="default")
    ap.add_argument("--out", type=Path, help="result directory (default: "
                    "bench/results/DATE-MACHINE[-SIZE]); an existing runs.csv there is resumed")
    ap.add_argument("--server", action="append", default=[], metavar="NAME=PREFIX")
    ap.add_argument("--phases", default="sweep,pgbench,cached")
    ap.add_argument("--penalty-us", type=int, help="slow profile's read penalty")
    ap.add_argument("--cached-pages", type=int, help="seed 2's table size")
    ap.add_argument("--profiles", help="comma-separated subset of the size's storage "
                    "profiles (asis, slow); kept in OUT/scope.txt for later runs")
    ap.add_argument("--fracs", help="comma-separated subset of the size's sweep "
                    "fractions; kept in OUT/scope.txt for later runs")
    ap.add_argument("--reps", help="repetitions: N, or N,M where the size repeats its "
                    "smallest fractions more (M); kept in OUT/scope.txt for later runs")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--installed", action="store_true",
                    help="vacskip is installed in the patched servers already (tests)")
    args = ap.parse_args(argv)
    cfg = dict(SIZES[args.size])
    if args.penalty_us is not None:
        cfg["penalty_us"] = args.penalty_us
    if args.cached_pages is not None:
        cfg["cached_pages"] = args.cached_pages
    out = args.out or (TOP / "bench" / "results" /
                       f"{datetime.date.today():%Y-%m-%d}-{machine_tag()}"
                       f"{'' if args.size == 'full' else '-' + args.size}")
    out.mkdir(parents=True, exist_ok=True)
    try:
        scope = apply_scope(cfg, out, args.profiles, args.fracs, args.reps)
    except ValueError as e:
        ap.error(str(e))
    command = " ".join(["bench/vacbench.py", "--size", args.size] +
                       (["--phases", args.phases] if args.phases != ap.get_default("phases") else []) +
                       [f"--{k} {v}" for k, v in scope.items()])
    if not args.report_only:
        servers = [parse_server(s) for s in args.server]
        if not servers:
            raise SystemExit("no --server given")
        # the report's count of missing points covers the servers of the run
        planned = sorted({*read_planned(out), *(s.name for s in servers if s.patched)})
        (out / "servers.txt").write_text("".join(f"{n}\n" for n in planned))
        phases = [p.strip() for p in args.phases.split(",") if p.strip()]
        bench = Bench(args, cfg, servers, out)
        t0 = time.monotonic()
        try:
            bench.run(phases)
        finally:
            bench.close()
        log(f"measurements done in {fmt_s(time.monotonic() - t0)}")
    verdicts = write_report(out, args.size, cfg, None, command)
    log(f"report: {os.path.relpath(out / 'report.md')}")
    for g, ok_b, ok_s, wb, ws, gb, gs, bc, bcs in verdicts:
        log(f"autotuner {'/'.join(g)}: auto/best geomean {gb:.2f} (worst {wb['vs_best']:.2f}), "
            f"auto/stock geomean {gs:.2f} (worst {ws['vs_stock']:.2f}); best single fixed "
            f"threshold {bc} (worst {bcs[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

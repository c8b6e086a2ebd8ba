"""The measuring phases: calibration and sweep, pgbench, cached; each
appends its points to runs.csv as it measures them and skips the points
runs.csv has."""

import random
import sys
import time
from pathlib import Path

from pgkit import TOP
from pgkit.proc import make_workdir, remove_tree, run
from pgkit.server import install_extension, private_copy
from pgkit.vacuum import timed_vacuum

from bench import cached_vacuum
from bench.vacbench.harness import (BenchCluster, SlowRead, cold_vacuum, timed_read,
                                    used_thresholds)
from bench.vacbench.plan import Plan, pgbench_uncalibrated, reps_of, shuffled
from bench.vacbench.profiles import PLAIN_PROFILE, profile_settings
from bench.vacbench.progress import Progress, log
from bench.vacbench.store import Results
from bench.vacbench.workloads import PgbenchTpcb, UniformUpdates


def sweep_settings(cfg, major):
    """postgresql.conf of a sweep's cluster."""
    settings = {"shared_buffers": f"'{cfg['shared_buffers']}'",
                "shared_preload_libraries": "'vacskip'",
                "max_wal_size": "'8GB'", "checkpoint_timeout": "'1h'"}
    if major >= 18:
        settings.update(io_method="'worker'", io_combine_limit="'128kB'")
    return settings


def pgbench_settings(cfg):
    """postgresql.conf of a pgbench phase's cluster."""
    return {"shared_buffers": f"'{cfg['shared_buffers']}'",
            "shared_preload_libraries": "'vacskip'", "max_wal_size": "'8GB'"}


class Bench:
    def __init__(self, args, cfg, servers, out):
        self.args = args
        self.cfg = cfg
        self.out = out
        self.res = Results(out / "runs.csv")
        self.plan = Plan(cfg, self.res, servers)
        self.work = make_workdir("vacskip-bench-")
        self.slow = SlowRead(self.work)
        self.nodes = []
        self.progress = None

    def start_cluster(self, server, settings, name):
        node = BenchCluster(server, self.work, settings, name)
        self.nodes.append(node)
        return node

    def drop_cluster(self, node):
        node.stop()
        self.nodes.remove(node)
        remove_tree(node.base)

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
        for s in self.plan.servers:
            copies.append(private_copy(s, self.work / "servers" / s.name))
        for s in copies:
            if s.patched and self.args.installed:
                lib = Path(run([s.pg_config, "--pkglibdir"]).strip()) / "vacskip.so"
                if not lib.exists():
                    raise SystemExit(f"--installed, but {s.name} has no {lib}")
            elif s.patched:
                install_extension(TOP, self.work / f"ext-{s.major}", s.pg_config, [s.pg_config])
        self.plan.servers = copies

    def set_profile(self, node, mode, profile, rpc=None):
        """A storage profile's settings and environment, from the next start."""
        conf = profile_settings(node.server.major, mode, profile, rpc)
        env = self.slow.profile_env(profile, self.cfg)
        node.set_profile(conf, env)
        return conf, env

    # -- calibration: per-page cost of sequential and of random reads
    def calibrate(self, node, server, mode, profile, files):
        """The storage profile's random_page_cost: the cost of an 8 kB read
        of a random page over that of the next page, one read at a time
        (a TID scan), the way fio compares random and sequential reads.
        It describes the disk, so it is measured once per profile, with
        direct I/O where the server has it (no OS readahead); other I/O
        modes and servers reuse that figure."""
        cfg = self.cfg
        # A run that has a calibration keeps it (however many repetitions
        # it has): a resumed run must not change the autotuner's input.
        if self.plan.calibrated_rpc(server, mode, profile) is not None:
            return self.plan.calibrated_rpc(server, mode, profile)
        self.set_profile(node, mode, profile)
        pages = cfg["sweep_pages"]
        sample = sorted(random.Random("calib").sample(range(pages), cfg["calib_pages"]))
        # repetitions alternate the two kinds; random_page_cost is the ratio
        # of their medians
        for rep in range(cfg.get("calib_reps", 1)):
            key = self.plan.calib_key(server, mode, profile, rep)
            for kind in ("seq", "rand"):
                blocks = range(len(sample)) if kind == "seq" else sample
                ms, reads, pen = timed_read(node, self.slow, mode, files, "t", blocks)
                n = len(blocks)
                self.res.add(threshold=kind, ms=ms, scanned=n, reads=reads, penalised=pen,
                             major=server.major, note=f"{ms / n * 1000:.1f} us/page", **key)
                self.progress.step("sweep", f"calibration {server.name} {mode}/{profile} "
                                   f"{kind} {rep + 1}/{cfg.get('calib_reps', 1)}: "
                                   f"{ms / n * 1000:.1f} us/page", ms / 1000.0)
        return self.plan.calibrated_rpc(server, mode, profile)

    def phase_sweep(self, server, fracs):
        cfg = self.cfg
        node = self.start_cluster(server, sweep_settings(cfg, server.major),
                                  f"sweep-{server.name}")
        node.start()
        log(f"sweep: {server.name}: creating the table ({cfg['sweep_pages']} pages)")
        with node.connect() as conn:
            conn.execute("CREATE EXTENSION pg_prewarm")
            table = UniformUpdates(conn, cfg["sweep_pages"])
            conn.execute("CHECKPOINT")
            files = node.relation_files(conn, table.relation)
        log(f"sweep: {server.name}: {table.pages} pages, {table.rpp} rows per page")
        for mode, profile in self.plan.sweep_groups(server.major):
            rpc = self.calibrate(node, server, mode, profile, files)
            conf, env = self.set_profile(node, mode, profile, rpc)
            log(f"sweep: {server.name} {mode}/{profile}: {conf}, "
                f"read penalty {env['SLOWREAD_PENALTY_US']} us")
            node.restart()
            for frac in fracs:
                for rep in range(reps_of(cfg, frac)):
                    ids = table.choose(frac, rep)
                    for thr in shuffled(cfg["thresholds"], f"{frac}-{rep}"):
                        key = self.plan.sweep_key(server, mode, profile, frac, rep, thr)
                        if self.res.have(**key):
                            continue
                        t0 = time.monotonic()
                        note = table.prepare_point(node, ids)
                        ms, rep_, reads, pen = cold_vacuum(node, self.slow, mode, files,
                                                           table.relation, thr)
                        self.res.add(ms=ms, scanned=rep_.scanned, rel_pages=rep_.rel_pages,
                                     reads=reads, penalised=pen, major=server.major,
                                     note=f"{note}; skip thresholds {used_thresholds(rep_)}",
                                     **key)
                        self.progress.step("sweep", f"{server.name} {mode}/{profile} frac={frac:g} "
                                           f"rep={rep} threshold={thr}: {ms:.1f} ms, "
                                           f"{rep_.scanned} pages", time.monotonic() - t0)
        return node

    def phase_pgbench(self, server, node):
        cfg = self.cfg
        scale = cfg["pgbench_scale"]
        pending = self.plan.pgbench_pending(server)
        if not pending:
            return
        self.set_profile(node, "buffered", PLAIN_PROFILE)
        node.restart()
        bench = PgbenchTpcb(node, scale)
        with node.connect() as conn:
            files = node.relation_files(conn, bench.relation)
        mode = "buffered"
        for profile, rep, frac, thr in pending:
            rpc = self.plan.calibrated_rpc(server, mode, profile)
            if rpc is None:   # run() refuses a pgbench phase that would get here
                raise RuntimeError(f"pgbench: no calibration of {profile}")
            self.set_profile(node, mode, profile, rpc)
            t0 = time.monotonic()
            note = bench.prepare_point(node, bench.choose(frac, rep))
            ms, rep_, reads, pen = cold_vacuum(node, self.slow, mode, files, bench.relation,
                                               thr)
            self.res.add(phase="pgbench", server=server.name, major=server.major, mode=mode,
                         profile=profile, pages=scale, frac=frac, rep=rep, threshold=thr, ms=ms,
                         scanned=rep_.scanned, rel_pages=rep_.rel_pages, reads=reads,
                         penalised=pen, note=note)
            self.progress.step("pgbench", f"{server.name} {profile} frac={frac:g} rep={rep} "
                               f"threshold={thr}: "
                               f"{ms:.1f} ms, {rep_.scanned} of {rep_.rel_pages} pages",
                               time.monotonic() - t0)

    def phase_cached(self):
        """The cached all-frozen VACUUM test: bench/cached_vacuum.py's
        table on every server, plain VACUUMs alternating between them."""
        cfg = self.cfg
        pages = cfg["cached_pages"]
        todo = self.plan.cached_pending()
        if not todo:
            return
        nodes = []
        for s in todo:
            node = self.start_cluster(s, {}, f"cached-{s.name}")
            # the table and its map in shared buffers, with room to spare
            mb = pages * node.block_size / 1024 / 1024
            node.append_conf({"shared_buffers": f"'{int(mb * 1.2) + 64}MB'"})
            node.start()
            nodes.append(node)
            log(f"cached: {s.name}: creating an all-frozen table of {pages} pages")
            cached_vacuum.setup(node, pages)
        conns = [n.connect() for n in nodes]
        try:
            for c in conns:
                c.execute("SELECT pg_prewarm('t')")
                c.execute("SELECT pg_prewarm('t', 'buffer', 'vm')")
                timed_vacuum(c, "t")      # warm-up, discarded
            for rep in range(cfg["cached_reps"]):
                for s, c in zip(todo, conns):
                    ms = timed_vacuum(c, "t")
                    one = timed_vacuum(c, "one")
                    self.res.add(phase="cached", server=s.name, major=s.major, mode="cached",
                                 profile="", pages=pages, frac="", rep=rep, threshold="",
                                 ms=ms, note=f"1-page table: {one:.3f} ms")
                    self.progress.step("cached", f"{s.name} rep {rep}: {ms:.2f} ms", ms / 1000.0)
        finally:
            for c in conns:
                c.close()
            for n in nodes:
                n.stop()

    def run(self, phases):
        self.progress = Progress(self.plan.count_points(phases))
        log(f"plan: {self.progress.left} points still to measure")
        if not self.progress.total:
            return
        missing = pgbench_uncalibrated(
            self.res.rows, self.cfg, phases,
            [s.name for s in self.plan.patched() if self.plan.pgbench_pending(s)])
        if missing:
            raise SystemExit(
                f"pgbench: {'profiles' if len(missing) > 1 else 'profile'} "
                f"{', '.join(missing)} {'have' if len(missing) > 1 else 'has'} no "
                "random_page_cost calibration here, and the auto column would run at "
                "PostgreSQL's default costs; the "
                "calibration is part of the sweep: add the sweep phase (e.g. --phases "
                "sweep,pgbench --fracs 1e-2), or use a result directory whose sweep has it")
        self.install()
        passes = self.plan.sweep_passes() if "sweep" in phases else []
        # The cheap, telling rows first, then pgbench and the cached test,
        # then the heavy rows (hours at full size).
        if passes:
            self.sweep_pass(passes[0])
        if "pgbench" in phases:
            for s in self.plan.patched():
                if self.plan.pgbench_pending(s):
                    node = self.start_cluster(s, pgbench_settings(self.cfg), f"pgb-{s.name}")
                    node.start()
                    self.phase_pgbench(s, node)
                    self.drop_cluster(node)
        if "cached" in phases:
            self.phase_cached()
        for fracs in passes[1:]:
            self.sweep_pass(fracs)

    def sweep_pass(self, fracs):
        for s in self.plan.patched():
            if self.plan.sweep_left(s, fracs):
                self.drop_cluster(self.phase_sweep(s, fracs))

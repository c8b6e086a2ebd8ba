"""The measuring phases: the sweep (per patched server one cluster with
every workload's table; per group of I/O mode and storage profile a
restart with its settings and environment, the settings path's threshold,
vacskip.calibrate(), then every row's repetitions, more where the paired
verdicts are undecided) and the cached test.  Each appends its points to
runs.csv as it measures them and skips the points runs.csv has."""

import sys
import time
from pathlib import Path

from pgkit import TOP
from pgkit.proc import make_workdir, remove_tree, run
from pgkit.server import install_extension, private_copy
from pgkit.vacuum import timed_vacuum

from bench import cached_vacuum
from bench.vacbench import harness, plan, stats, workloads
from bench.vacbench.harness import BenchCluster, SlowDevice, SlowRead, Throttle
from bench.vacbench.profiles import PROFILES, emulation, profile_settings, throttle_limits
from bench.vacbench.progress import Progress, log
from bench.vacbench.store import Results


def sweep_settings(cfg, major):
    """postgresql.conf of a sweep's cluster."""
    settings = {"shared_buffers": f"'{cfg['shared_buffers']}'",
                "shared_preload_libraries": "'vacskip'",
                "max_wal_size": "'8GB'", "checkpoint_timeout": "'1h'"}
    if major >= 18:
        settings.update(io_method="'worker'", io_combine_limit="'128kB'")
    return settings


def column_threshold(column, settings_thr):
    """vacskip.threshold of a column: -1 for auto, the settings path's
    threshold for auto-settings, else the fixed value."""
    if column == stats.AUTO:
        return -1
    if column == stats.AUTO_SETTINGS:
        return settings_thr
    return int(column)


class Bench:
    def __init__(self, args, cfg, servers, out):
        self.args = args
        self.cfg = cfg
        self.out = out
        self.res = Results(out / "runs.csv")
        self.plan = plan.Plan(cfg, self.res, servers)
        self.work = make_workdir("vacskip-bench-")
        self.slow = SlowRead(self.work)
        self.throttle = (Throttle(self.work) if any(PROFILES[p].kernel_throttle
                                                    for p in cfg["profiles"]) else None)
        # a profile whose storage holds the clusters runs alone (plan.py)
        own = [p for p in cfg["profiles"] if PROFILES[p].block_device]
        self.device = None
        if own:
            params = emulation(own[0], cfg)
            try:
                self.device = SlowDevice(self.work, self.slow.state, params["latency_us"],
                                         params["mbps"])
            except BaseException:
                remove_tree(self.work)
                raise
            log(f"{own[0]}: the clusters on {self.device.loop} (read_ahead_kb "
                f"{self.device.read_ahead_kb()}), mounted at {self.device.mount}")
        self.cluster_root = self.device.mount if self.device else self.work
        self.nodes = []
        self.progress = None

    def start_cluster(self, server, settings, name):
        node = BenchCluster(server, self.cluster_root, settings, name)
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
            except (OSError, RuntimeError) as e:
                print(e, file=sys.stderr)
        try:
            if self.throttle:
                log(f"blk-throttle counted {self.throttle.serviced()} read requests of the "
                    "throttled profile's servers")
                self.throttle.close()
        finally:
            if self.device:
                self.device.close()      # says on stderr what it leaves
            self.res.close()
            remove_tree(self.work)

    def install(self):
        """Private copies of the servers; vacskip built once per major
        (against the patched server) and installed into the patched copy
        (--installed: the given patched servers have it already), and the
        benchmark's eviction module (bench/modules/vacbench_evict) into the
        patched copies."""
        copies = []
        for s in self.plan.servers:
            copies.append(private_copy(s, self.work / "servers" / s.name))
        for s in copies:
            if not s.patched:
                continue
            if self.args.installed:
                lib = Path(run([s.pg_config, "--pkglibdir"]).strip()) / "vacskip.so"
                if not lib.exists():
                    raise SystemExit(f"--installed, but {s.name} has no {lib}")
            else:
                install_extension(TOP, self.work / f"ext-{s.name}", s.pg_config, [s.pg_config])
            install_extension(harness.EVICT_MODULE, self.work / f"evict-{s.name}",
                              s.pg_config, [s.pg_config])
        self.plan.servers = copies

    # -- the sweep
    def group_has_work(self, server, mode, profile):
        """Base points missing, or a row that wants more repetitions."""
        if self.plan.pending(server, (mode, profile)):
            return True
        return any(self.row_wants_more(server, mode, profile, w, f)
                   for w, f in plan.group_rows(self.cfg, server.major, mode, profile))

    def row_data(self, server, mode, profile, w, f):
        """The row's runs.csv rows: (medians, per repetition, complete
        repetitions, the first repetition not complete)."""
        rows = [r for r in self.res.rows if r["phase"] == "sweep" and
                (r["server"], r["mode"], r["profile"], r["workload"]) ==
                (server.name, mode, profile, w) and float(r["frac"]) == f]
        done, first = plan.rep_progress(rows, self.cfg["thresholds"])
        return stats.medians(rows), stats.per_rep(rows), done, first

    def row_wants_more(self, server, mode, profile, w, f):
        med, reps, done, _ = self.row_data(server, mode, profile, w, f)
        return stats.wants_more(med, reps, (server.name, mode, profile, w, f), done, self.cfg)

    def phase_sweep(self, server):
        cfg = self.cfg
        groups = [g for g in plan.groups_of(cfg, server.major) if self.group_has_work(server, *g)]
        if not groups:
            return
        names = sorted({w for m, p in groups for w, _ in plan.group_rows(cfg, server.major, m, p)},
                       key=list(workloads.WORKLOADS).index)
        node = self.start_cluster(server, sweep_settings(cfg, server.major),
                                  f"sweep-{server.name}")
        node.start()
        tables, files = {}, {}
        with node.connect() as conn:
            conn.execute("CREATE EXTENSION vacskip")
            conn.execute("CREATE EXTENSION pg_visibility")
            conn.execute(harness.EVICT_SQL)
            for w in names:
                t0 = time.monotonic()
                tables[w] = workloads.create(w, node, conn, cfg)
                files[w] = node.relation_files(conn, tables[w].relation)
                log(f"sweep: {server.name}: {w}: {tables[w].pages} pages of "
                    f"{tables[w].relation} in {time.monotonic() - t0:.1f} s")
            conn.execute("CHECKPOINT")
        for mode, profile in groups:
            self.sweep_group(server, node, tables, files, mode, profile)
        self.drop_cluster(node)

    def start_group(self, server, node, tables, mode, profile):
        """Restart under the group's settings and environment; the settings
        path's thresholds, then vacskip.calibrate(), recorded; returns
        (connection, {workload: settings threshold})."""
        cfg = self.cfg
        conf = profile_settings(server.major, mode, profile, cfg)
        limits = throttle_limits(profile, cfg)
        if limits:
            self.throttle.limits = limits
        self.slow.throttle = self.throttle if limits else None
        node.set_profile(conf, self.slow.env(profile, cfg), self.slow.throttle)
        node.restart()
        log(f"sweep: {server.name} {mode}/{profile}: {conf}, {self.slow.env(profile, cfg)}")
        conn = node.connect()
        for t in tables.values():
            harness.warm_up(conn, t.relation)
        conn.execute("SELECT vacskip.forget_calibration('pg_default')")
        settings = {w: harness.settings_threshold(conn, t.relation) for w, t in tables.items()}
        cal, ms, c = harness.calibrate(conn, self.slow, cfg["calib_seconds"],
                                       follow_advice=cfg["calib_advice"])
        explained = {w: harness.autotuned(conn, t.relation) for w, t in tables.items()}
        for w, e in explained.items():
            if e["cost_source"] != "calibration":
                raise RuntimeError(f"after vacskip.calibrate(), explain_threshold of {w}'s "
                                   f"table says cost_source {e['cost_source']}: {e}")
        n = len(self.plan.calibrations(server, mode, profile))
        self.res.add(**self.plan.calib_key(server, mode, profile, n), major=server.major,
                     ms=ms, **c, note=harness.calibration_note(
                         cal, settings, explained, harness.cost_delay_settings(conn)))
        self.progress.step("sweep", f"{server.name} {mode}/{profile}: calibrate(): "
                           + harness.calibration_text(cal)
                           + "; thresholds from the settings "
                           + ", ".join(f"{w} {s[0]}" for w, s in settings.items())
                           + ", calibrated " + ", ".join(
                               f"{w} {e['all_frozen_threshold']}" for w, e in explained.items()),
                           ms / 1000.0)
        return conn, {w: s[0] for w, s in settings.items()}

    def sweep_group(self, server, node, tables, files, mode, profile):
        cfg = self.cfg
        conn, settings = self.start_group(server, node, tables, mode, profile)
        rows = plan.group_rows(cfg, server.major, mode, profile)
        ctx = (server, node, conn, tables, files, mode, profile, settings)
        try:
            for rep in range(cfg["reps"]):
                for w, f in rows:
                    self.measure_rep(ctx, w, f, rep)
            # more repetitions for the rows the ones so far leave undecided,
            # one round at a time
            while True:
                more = [row for row in rows if self.row_wants_more(server, mode, profile, *row)]
                if not more:
                    break
                for w, f in more:
                    _, _, done, rep = self.row_data(server, mode, profile, w, f)
                    self.progress.add("sweep", sum(
                        not self.res.have(**self.plan.key(server, mode, profile, w, f, rep, t))
                        for t in cfg["thresholds"]))
                    log(f"sweep: {server.name} {mode}/{profile} {w} frac={f:g}: undecided "
                        f"after {done} repetitions, one more")
                    self.measure_rep(ctx, w, f, rep)
        finally:
            conn.close()

    def measure_rep(self, ctx, w, f, rep):
        """Every threshold column of one repetition of a row that runs.csv
        lacks, in the repetition's shuffled order."""
        server, node, conn, tables, files, mode, profile, settings = ctx
        table = tables[w]
        todo = [t for t in plan.shuffled(self.cfg["thresholds"], f"{w}-{f}-{rep}")
                if not self.res.have(**self.plan.key(server, mode, profile, w, f, rep, t))]
        if not todo:
            return
        change = table.choose(f, rep)
        for col in todo:
            t0 = time.monotonic()
            note, modified = table.prepare_point(node, conn, change)
            vm = workloads.kept_map(conn, table.relation)
            thr = column_threshold(col, settings[w])
            # what the autotuner would choose now, before every column alike
            e = harness.autotuned(conn, table.relation)
            if e["cost_source"] != "calibration":
                raise RuntimeError(f"{w}: the autotuner's cost_source is {e['cost_source']}, "
                                   f"not calibration: {e}")
            note += f"; calibrated threshold {e['all_frozen_threshold']}"
            if col == stats.AUTO_SETTINGS:
                note += f"; settings threshold {thr}"
            ms, report, c = harness.cold_vacuum(conn, self.slow, mode, files[w], table.relation,
                                                thr, node.block_size)
            self.res.add(**self.plan.key(server, mode, profile, w, f, rep, col),
                         major=server.major, ms=ms, scanned=report.scanned,
                         rel_pages=report.rel_pages, modified=modified, map=vm, **c,
                         note=f"{note}; skip thresholds {harness.used_thresholds(report)}")
            self.progress.step("sweep", f"{server.name} {mode}/{profile} {w} frac={f:g} "
                               f"rep={rep} {col}: {ms:.1f} ms, {report.scanned} pages",
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
                                 profile="", workload="", pages=pages, frac="", rep=rep,
                                 threshold="", ms=ms, note=f"1-page table: {one:.3f} ms")
                    self.progress.step("cached", f"{s.name} rep {rep}: {ms:.2f} ms", ms / 1000.0)
        finally:
            for c in conns:
                c.close()
            for n in nodes:
                n.stop()

    def run(self, phases):
        with_work = 0
        if "sweep" in phases:
            with_work = sum(self.group_has_work(s, *g) for s in self.plan.patched()
                            for g in plan.groups_of(self.cfg, s.major))
        self.progress = Progress(self.plan.count_points(phases, with_work))
        log(f"plan: {self.progress.total} points still to measure (more where a row's "
            "repetitions leave its verdicts undecided)")
        if not self.progress.total and not with_work:
            return
        self.install()
        if "sweep" in phases:
            for s in self.plan.patched():
                self.phase_sweep(s)
        if "cached" in phases:
            self.phase_cached()

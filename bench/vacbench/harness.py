"""The clusters a benchmark measures on: storage profiles applied at
restart (settings and the server's environment), bench/slowread.c with its
switch and counters, cold reads without a restart (bench/modules/
vacbench_evict plus posix_fadvise), the timed cold VACUUM and
vacskip.calibrate()."""

import json
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path

from pgkit import TOP
from pgkit.cluster import Cluster
from pgkit.proc import as_build_user, give_to_build_user, run
from pgkit.vacuum import set_threshold, timed_vacuum_verbose

from bench.vacbench.machine import disk_devno, read_ahead_kb
from bench.vacbench.profiles import profile_env
from bench.vacbench.progress import log

# bench/slowread.c's shared state file: a lock word, the switch (uint32 at
# offset 4), then its counters, little-endian 64-bit words from offset 8
# (COUNTERS, in this order), the token bucket's clock, its table of recent
# reads.
STATE_SIZE = 1 << 20
SWITCH_OFFSET = 4
COUNTERS_OFFSET = 8
COUNTERS = ("reads", "penalised", "bytes", "uncached", "uncached_bytes", "delay_us",
            "probe_unsupported")
# reset() zeroes the counters and the token bucket's clock
RESET_BYTES = 8 * (len(COUNTERS) + 1)

EVICT_MODULE = TOP / "bench" / "modules" / "vacbench_evict"
EVICT_SQL = ("CREATE OR REPLACE FUNCTION vacbench_evict(regclass) RETURNS int "
             "AS '$libdir/vacbench_evict' LANGUAGE C STRICT")


BLKIO = Path("/sys/fs/cgroup/blkio")


class Throttle:
    """The kernel's block-layer limits (cgroup v1 blkio, blk-throttle) on
    the reads that processes started in a cgroup of the benchmark's own make
    from the disk holding `work`: real throttling, of readahead too, where
    bench/slowread.c emulates.  The limits hold only while switched on."""

    def __init__(self, work):
        knob = BLKIO / "blkio.throttle.read_iops_device"
        if os.geteuid() != 0 or not knob.exists():
            raise SystemExit(f"the throttled profile needs root and {knob} (cgroup v1's "
                             "blkio controller with blk-throttle); this machine has "
                             f"{'not root' if os.geteuid() else 'no such file'}")
        self.devno = disk_devno(work)
        if self.devno is None:
            raise SystemExit(f"the throttled profile: {work} is on no block device")
        self.dir = BLKIO / f"vacbench-{os.getpid()}"
        self.dir.mkdir()
        self.limits = None

    def start_command(self, cmd):
        """cmd run in the cgroup (so are the processes it starts)."""
        return ["sh", "-c", f'echo $$ > {self.dir / "cgroup.procs"} && exec "$@"', "sh",
                *map(str, cmd)]

    def switch(self, on):
        iops, bps = self.limits if on and self.limits else (0, 0)
        (self.dir / "blkio.throttle.read_iops_device").write_text(f"{self.devno} {iops}\n")
        (self.dir / "blkio.throttle.read_bps_device").write_text(f"{self.devno} {bps}\n")

    def serviced(self):
        """Read requests of the cgroup's processes on the disk so far, as
        blk-throttle counted them."""
        for line in (self.dir / "blkio.throttle.io_serviced").read_text().splitlines():
            f = line.split()
            if len(f) == 3 and f[0] == self.devno and f[1] == "Read":
                return int(f[2])
        return 0

    def close(self):
        """Lift the limits and drop the cgroup (left, with a warning, while
        processes remain in it)."""
        self.switch(False)
        try:
            self.dir.rmdir()
        except OSError as e:
            print(f"cannot remove {self.dir}: {e.strerror}", file=sys.stderr)


class SlowDevice:
    """The block-latency profile's storage: bench/slowdev.c's FUSE file,
    whose reads sleep while slowread's switch is on, under a loop device
    (direct I/O: no page cache between the two) with an ext4 file system
    mounted at `mount`, where the run's clusters live.  The loop device
    reads ahead as far as the disk holding `work` does (its read_ahead_kb,
    set on the loop device), the disk the other profiles' clusters lie
    on."""

    SIZE = 16 << 30        # sparse: the clusters of a run, WAL included
    WAIT_S = 10            # for the FUSE mount to appear, the loop device to let go

    def __init__(self, work, state, latency_us, mbps):
        ra = read_ahead_kb(work)
        if os.geteuid() != 0 or not Path("/dev/fuse").exists() or not ra.isdigit():
            raise SystemExit("the block-latency profile needs root, /dev/fuse (a FUSE file "
                             f"under a loop device) and {work} on a block device, whose "
                             "read_ahead_kb the loop device takes; this machine has " +
                             ("not root" if os.geteuid() else "no /dev/fuse"
                              if not Path("/dev/fuse").exists() else f"{work} on none"))
        self.dir = work / "slowdev"
        self.fuse = self.dir / "fuse"
        self.mount = self.dir / "fs"
        self.image = self.dir / "backing.img"
        self.daemon = None
        self.loop = None
        self.ra_before = None    # the loop device's read_ahead_kb, restored
        for d in (self.fuse, self.mount):
            d.mkdir(parents=True)
        prog = self.dir / "slowdev"
        flags = run(["pkg-config", "--cflags", "--libs", "fuse3"]).split()
        run(["cc", "-O2", "-Wall", "-o", prog, TOP / "bench" / "slowdev.c", *flags])
        with open(self.image, "wb") as f:
            f.truncate(self.SIZE)
        try:
            # in the foreground (-f), so that close() can wait for it
            log_file = self.dir / "slowdev.log"
            with open(log_file, "w") as log_out:
                self.daemon = subprocess.Popen(
                    [prog, self.image, state, str(int(latency_us)), str(float(mbps)),
                     self.fuse, "-f", "-o", "max_threads=64"], stdout=log_out, stderr=log_out)
            deadline = time.monotonic() + self.WAIT_S
            while not os.path.ismount(self.fuse):
                if self.daemon.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"bench/slowdev.c did not mount {self.fuse}: "
                                       f"{log_file.read_text().strip() or 'no message'}")
                time.sleep(0.05)
            self.loop = run(["losetup", "--direct-io=on", "--sector-size", "4096", "--find",
                             "--show", self.fuse / "volume"]).strip()
            dio = Path("/sys/block") / Path(self.loop).name / "loop" / "dio"
            if dio.read_text().strip() != "1":
                raise RuntimeError(f"{self.loop} reads its file through the page cache "
                                   "(losetup could not switch it to direct I/O)")
            # inode tables written now, not by ext4's lazy init while measuring
            run(["mkfs.ext4", "-q", "-F", "-N", "65536", "-E",
                 "lazy_itable_init=0,lazy_journal_init=0,nodiscard", self.loop])
            run(["mount", self.loop, self.mount])
            self.ra_before = self.read_ahead_kb()
            self.ra_file().write_text(f"{ra}\n")
            give_to_build_user(self.mount)
        except BaseException:
            self.close()
            raise

    def ra_file(self):
        return Path("/sys/block") / Path(self.loop).name / "queue" / "read_ahead_kb"

    def read_ahead_kb(self):
        return self.ra_file().read_text().strip()

    def close(self):
        """Unmount, detach (the loop device reading ahead as before), stop
        the daemon; the backing file goes.  Each step only once the one
        before it is done: what is left says so on stderr."""
        try:
            if self.ra_before is not None:
                self.ra_file().write_text(f"{self.ra_before}\n")
                self.ra_before = None
            if os.path.ismount(self.mount):
                run(["umount", self.mount])
            if self.loop:
                run(["losetup", "--detach", self.loop])
                # a loop device held open (a udev probe) lets go of its file
                # only when closed
                held = Path("/sys/block") / Path(self.loop).name / "loop" / "backing_file"
                deadline = time.monotonic() + self.WAIT_S
                while held.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                if held.exists():
                    raise RuntimeError(f"{self.loop} still holds {self.fuse / 'volume'}")
                self.loop = None
            if self.daemon:
                if os.path.ismount(self.fuse):
                    run(["fusermount3", "-u", self.fuse])
                elif self.daemon.poll() is None:
                    self.daemon.terminate()       # it never mounted
                self.daemon.wait(self.WAIT_S)
                self.daemon = None
            self.image.unlink(missing_ok=True)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"the block-latency device is left (mounted at {self.mount}, loop device "
                  f"{self.loop}, daemon {self.daemon and self.daemon.pid}): {e}",
                  file=sys.stderr)


class SlowRead:
    """bench/slowread.c, built into the work directory, and its shared state;
    the kernel's throttle (a Throttle whose limits are set) switched with it."""

    throttle = None

    def __init__(self, work):
        self.lib = work / "slowread.so"
        run(["cc", "-O2", "-Wall", "-shared", "-fPIC", "-o", self.lib,
             TOP / "bench" / "slowread.c", "-ldl"])
        self.state = work / "slowread.state"
        with open(self.state, "wb") as f:
            f.truncate(STATE_SIZE)
        self.state.chmod(0o666)
        give_to_build_user(self.state)

    def env(self, profile, cfg):
        """The server's environment under a storage profile."""
        return {"LD_PRELOAD": str(self.lib), "SLOWREAD_STATE": str(self.state),
                **profile_env(profile, cfg)}

    def switch(self, on):
        """Emulate and count (on) or pass every read through (off)."""
        with open(self.state, "r+b") as f:
            f.seek(SWITCH_OFFSET)
            f.write(struct.pack("<I", 1 if on else 0))
        if self.throttle:
            self.throttle.switch(on)

    def reset(self):
        with open(self.state, "r+b") as f:
            f.seek(COUNTERS_OFFSET)
            f.write(bytes(RESET_BYTES))

    def counters(self):
        """{counter: value} since reset(), COUNTERS' names."""
        with open(self.state, "rb") as f:
            data = f.read(COUNTERS_OFFSET + 8 * len(COUNTERS))
        return dict(zip(COUNTERS, struct.unpack_from(f"<{len(COUNTERS)}Q", data,
                                                     COUNTERS_OFFSET)))

    def measure(self, fn):
        """fn() with the emulation on, counters from zero: (its result,
        counters)."""
        self.reset()
        self.switch(True)
        try:
            result = fn()
        finally:
            self.switch(False)
        return result, self.counters()


class BenchCluster(Cluster):
    """A Cluster whose storage profile (settings in bench_profile.conf, and
    the server's environment, for LD_PRELOAD) can change between restarts."""

    def __init__(self, server, work, settings, name):
        super().__init__(server, work, settings, name=name)
        self.append_conf({"include_if_exists": "'bench_profile.conf'"})
        self.start_env = {}
        self.throttle = None

    def set_profile(self, settings, env, throttle=None):
        """Settings and environment of the next start; throttle: a Throttle
        whose cgroup the server is to start in (None: the caller's)."""
        path = self.datadir / "bench_profile.conf"
        path.write_text("".join(f"{k} = {v}\n" for k, v in settings.items()))
        give_to_build_user(path)
        self.start_env = dict(env)
        self.throttle = throttle

    def pg_ctl(self, *args):
        envs = [f"{k}={v}" for k, v in self.start_env.items()]
        cmd = as_build_user(["env", *envs, self.server.bindir / "pg_ctl",
                             "-D", self.datadir, "-l", self.logfile, "-w", *args])
        return run(self.throttle.start_command(cmd) if self.throttle else cmd)

    def restart(self):
        self.stop()
        self.start()

    def relation_files(self, conn, rel):
        """The files of every fork of rel, all segments."""
        relpath = conn.execute("SELECT pg_relation_filepath(%s)", (rel,)).fetchone()[0]
        path = self.datadir / relpath
        pat = re.compile(rf"^{path.name}(_fsm|_vm)?(\.\d+)?$")
        return [p for p in path.parent.iterdir() if pat.match(p.name)]


def evict_files(files):
    """Write back, then drop the files' pages from the OS page cache."""
    for p in files:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def make_cold(conn, mode, files, rel):
    """rel in neither cache, the server running: its dirty buffers written
    and all of its buffers dropped (vacbench_evict), then for buffered reads
    its files written back and dropped from the OS page cache."""
    conn.execute("SELECT vacbench_evict(%s::regclass)", (rel,))
    if mode == "buffered":
        evict_files(files)


def freeze(conn, rel):
    """Make every page all-frozen again; threshold 1 reads only the pages
    that are not (an aggressive VACUUM may skip only all-frozen ones).  The
    point's CHECKPOINT, after its change, writes what this dirtied."""
    set_threshold(conn, 1)
    conn.execute(f"VACUUM (FREEZE) {rel}")


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


def backend_cpu_ms(pid):
    """The time process pid has spent on a CPU so far, ms (the first
    field of /proc/PID/schedstat, in ns)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0]) / 1e6


def cold_vacuum(conn, slow, mode, files, rel, threshold, block_size, backend_pid=None):
    """Make rel cold, then time VACUUM (VERBOSE) rel at `threshold` (a
    number, or -1) with the storage emulation on: (ms, report, counters).
    block_size: the server's page size in bytes.  With backend_pid
    (conn's backend's), counters["cpu_ms"] is the time that backend spent
    on a CPU during the VACUUM: the rest of `ms` it waited (for reads, the
    delay's sleeps, locks) or was not scheduled.
    Raises when the VACUUM did not read cold: every page it scanned must
    have come through a read call (none from shared buffers) and, when it
    scanned any, at least one read must have gone to the device."""
    make_cold(conn, mode, files, rel)
    set_threshold(conn, threshold)

    def vacuum():
        cpu = backend_cpu_ms(backend_pid) if backend_pid else None
        out = timed_vacuum_verbose(conn, rel)
        return out, backend_cpu_ms(backend_pid) - cpu if backend_pid else None

    ((ms, report), cpu_ms), c = slow.measure(vacuum)
    if backend_pid:
        c["cpu_ms"] = cpu_ms
    if c["bytes"] < report.scanned * block_size or (report.scanned and not c["uncached"]):
        raise RuntimeError(f"VACUUM of {rel} did not read cold: {report.scanned} pages "
                           f"scanned, read calls {c}")
    return ms, report, c


def settings_threshold(conn, rel):
    """The autotuner's all-frozen threshold for rel from the settings alone,
    before any calibration: (threshold, all-visible threshold)."""
    set_threshold(conn, "auto")
    src, af, av = conn.execute(
        "SELECT cost_source, all_frozen_threshold, all_visible_threshold "
        "FROM vacskip.explain_threshold(%s)", (rel,)).fetchone()
    if src != "settings":
        raise RuntimeError(f"explain_threshold({rel}): cost_source {src}, not settings")
    return af, av


def record(cur):
    """A cursor's single row as {column: value}, values JSON can hold
    (timestamps as text)."""
    row = cur.fetchone()
    return {d.name: (v if v is None or isinstance(v, (bool, int, float, str, list)) else str(v))
            for d, v in zip(cur.description, row)}


# explain_threshold()'s columns a calibration's note keeps beyond its costs
# (every column named *_cost or *_costs).
EXPLAIN_KEPT = ("cost_source", "cost_unit", "all_frozen_threshold", "all_visible_threshold",
                "concurrency_used", "tuples_per_page", "cost_delay_per_page", "map_density",
                "map_runs", "costs", "calibration", "reason")


def autotuned(conn, rel):
    """explain_threshold(rel) under vacskip.threshold = -1: the autotuner's
    decision for the next VACUUM of rel, {column: value}."""
    set_threshold(conn, "auto")
    return record(conn.execute("SELECT * FROM vacskip.explain_threshold(%s)", (rel,)))


ADVISED_SECONDS = re.compile(r"Calibrate for (\d+) seconds or more")


def calibrate(conn, slow, seconds, tablespace="pg_default", follow_advice=False):
    """vacskip.calibrate() with the storage emulation on: ({column: value},
    wall ms, counters).  With `follow_advice`, where it read its patterns
    fewer than three times and its WARNING's hint advises more seconds, it
    runs once more for those, as a DBA who follows the advice would, and
    that second call is returned."""
    hints = []

    def call(secs):
        t0 = time.perf_counter()
        row = record(conn.execute("SELECT * FROM vacskip.calibrate(%s, %s)",
                                  (tablespace, secs)))
        return row, (time.perf_counter() - t0) * 1000.0

    def keep_hint(diag):
        m = ADVISED_SECONDS.search(diag.message_hint or "")
        if m:
            hints.append(int(m.group(1)))

    conn.add_notice_handler(keep_hint)
    try:
        (cal, ms), c = slow.measure(lambda: call(seconds))
        if follow_advice and cal["rounds"] < 3 and hints and hints[-1] > seconds:
            log(f"calibrate(): {cal['rounds']} round(s) in {seconds} s; again for the "
                f"{hints[-1]} s it advises")
            (cal, ms), c = slow.measure(lambda: call(hints[-1]))
    finally:
        conn.remove_notice_handler(keep_hint)
    return cal, ms, c


# The settings of VACUUM's cost-based delay a calibration's note keeps.
COST_DELAY_SETTINGS = ("vacuum_cost_delay", "vacuum_cost_limit", "vacuum_cost_page_miss",
                       "vacuum_cost_page_hit", "vacuum_cost_page_dirty")


def cost_delay_settings(conn):
    """The cost-based delay's settings in the session (a manual VACUUM's),
    {name: number}, vacuum_cost_delay in ms."""
    return {n: float(v) for n, v in conn.execute(
        "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)",
        (list(COST_DELAY_SETTINGS),)).fetchall()}


def calibration_note(cal, settings, explained, cost_delay):
    """runs.csv's note of a calibration, JSON: calibrate()'s row, the
    cost-based delay's settings (cost_delay_settings()) and per workload
    the settings path's thresholds before it ({workload: (all-frozen,
    all-visible)}) and the autotuner's decision after it ({workload:
    autotuned()}: the thresholds, the costs, the inputs)."""
    def kept(e):
        return {k: v for k, v in e.items()
                if k in EXPLAIN_KEPT or k.endswith("_cost") or k.endswith("_costs")}
    return json.dumps({
        "calibrate": cal,
        "cost_delay": cost_delay,
        "workloads": {w: {"settings_threshold": settings[w][0],
                          "settings_all_visible": settings[w][1],
                          "calibrated_threshold": e["all_frozen_threshold"],
                          "calibrated_all_visible": e["all_visible_threshold"],
                          **kept(e)}
                      for w, e in explained.items()}}, sort_keys=True)


def numbers_text(v):
    """A number or (nested) list of numbers, short: 123, 4.5, [1/2/3]."""
    if isinstance(v, list):
        return "[" + "/".join(numbers_text(x) for x in v) + "]"
    if isinstance(v, (int, float)):
        return f"{v:.0f}" if abs(v) >= 10 else f"{v:.2g}"
    return str(v)


def calibration_text(cal):
    """calibrate()'s figures in one line: every array column (µs per page
    read, and what they are measured at) but each round's figures, and the
    CPU costs."""
    arrays = [f"{k} {numbers_text(v)}" for k, v in cal.items()
              if isinstance(v, list) and not k.startswith("round_")]
    return "; ".join(arrays + [f"cpu {cal.get('cpu_page_us', 0):.2f} us/page + "
                               f"{cal.get('cpu_tuple_us', 0):.3f} us/tuple"])

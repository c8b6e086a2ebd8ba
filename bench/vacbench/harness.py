"""The clusters a benchmark measures on: storage profiles applied at
restart (settings and the server's environment), bench/slowread.c and its
counters, cold restarts, and the timed cold VACUUM."""

import os
import re
import struct
import time

from pgkit import TOP
from pgkit.cluster import Cluster
from pgkit.proc import as_build_user, give_to_build_user, run
from pgkit.vacuum import set_threshold, timed_vacuum_verbose

from bench.vacbench.profiles import penalty_us

# bench/slowread.c's shared state file: a header, then its table of recent
# reads; the counters are three little-endian 64-bit words from offset 8.
STATE_SIZE = 1 << 20
COUNTERS_OFFSET = 8


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

    def env(self, penalty):
        """The server's environment: preload slowread, delay by `penalty` µs."""
        return {"LD_PRELOAD": str(self.lib), "SLOWREAD_STATE": str(self.state),
                "SLOWREAD_PENALTY_US": str(penalty)}

    def profile_env(self, profile, cfg):
        return self.env(penalty_us(profile, cfg))

    def reset(self):
        with open(self.state, "r+b") as f:
            f.seek(COUNTERS_OFFSET)
            f.write(bytes(24))

    def counters(self):
        """(read calls, reads penalised, bytes read) since reset()."""
        with open(self.state, "rb") as f:
            reads, penalised, nbytes = struct.unpack_from("<QQQ", f.read(32), COUNTERS_OFFSET)
        return reads, penalised, nbytes


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

    def restart(self):
        self.stop()
        self.start()

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


def cold_vacuum(node, slow, mode, files, rel, threshold):
    """Restart with `rel`'s files out of the OS cache (or direct I/O),
    then time VACUUM (VERBOSE) rel: (ms, report, read calls, penalised)."""
    cold_restart(node, mode, files)
    with node.connect() as conn:
        warm_up(conn, rel)
        slow.reset()
        set_threshold(conn, threshold)
        ms, report = timed_vacuum_verbose(conn, rel)
        reads, pen, _ = slow.counters()
    return ms, report, reads, pen


def timed_read(node, slow, mode, files, rel, blocks):
    """Restart cold, then time a TID scan of tuple 1 of each of rel's pages
    `blocks` (one page read at a time): (ms, read calls, penalised)."""
    cold_restart(node, mode, files)
    with node.connect() as conn:
        warm_up(conn, rel)
        slow.reset()
        t0 = time.perf_counter()
        conn.execute(f"SELECT count(*) FROM {rel} WHERE ctid = ANY(%s::tid[])",
                     ([f"({b},1)" for b in blocks],))
        ms = (time.perf_counter() - t0) * 1000.0
        reads, pen, _ = slow.counters()
    return ms, reads, pen

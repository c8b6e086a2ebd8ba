"""One cluster, one table: the setup the smaller benchmarks share.

A private copy of a patched server with vacskip and the benchmark's
eviction module installed, one BenchCluster started under a storage
profile and I/O mode of bench/vacbench, and the default size's table of
the uniform workload in it, all-frozen and checkpointed.  Under a
profile whose storage holds the cluster (block-latency) the cluster lies
on that storage (harness.SlowDevice).
"""

from pgkit import TOP
from pgkit.server import install_extension, private_copy
from bench.vacbench import harness, workloads
from bench.vacbench.phases import sweep_settings
from bench.vacbench.plan import SIZES
from bench.vacbench.profiles import PROFILES, emulation, profile_settings


class OneTable:
    """.node (started), .slow (the emulation), .device (the storage
    the cluster lies on, or None), .table, .files (its files), .cfg (the
    default size's), .profile_conf (the profile's and mode's settings,
    for set_profile() with more of them) and .env.  close() when done."""

    def __init__(self, server, work, name, mode, profile, settings=None, emulated=None,
                 dba=None):
        """emulated: {parameter: value} of the profile's in place of its
        own (as make bench's --emulation); dba: {setting: value} of the
        profile's DBA in place of its own (as make bench's --settings)."""
        self.cfg = dict(SIZES["default"])
        if emulated:
            self.cfg["emulation_of"] = {profile: dict(emulated)}
        if dba:
            self.cfg["settings_of"] = {profile: dict(dba)}
        s = private_copy(server, work / "servers" / server.name)
        install_extension(TOP, work / f"ext-{s.name}", s.pg_config, [s.pg_config])
        install_extension(harness.EVICT_MODULE, work / f"evict-{s.name}", s.pg_config,
                          [s.pg_config])
        self.major = s.major
        self.slow = harness.SlowRead(work)
        self.env = self.slow.env(profile, self.cfg)
        self.profile_conf = profile_settings(s.major, mode, profile, self.cfg)
        self.device = None
        if PROFILES[profile].block_device:
            params = emulation(profile, self.cfg)
            self.device = harness.SlowDevice(work, self.slow.state, params["latency_us"],
                                             params["mbps"])
        self.node = None
        try:
            root = self.device.mount if self.device else work
            self.node = harness.BenchCluster(s, root, {**sweep_settings(self.cfg, s.major),
                                                       **(settings or {})}, name)
            self.node.set_profile(self.profile_conf, self.env)
            self.node.start()
            with self.node.connect() as conn:
                conn.execute("CREATE EXTENSION vacskip")
                conn.execute("CREATE EXTENSION pg_visibility")
                conn.execute(harness.EVICT_SQL)
                self.table = workloads.create("uniform", self.node, conn, self.cfg)
                self.files = self.node.relation_files(conn, self.table.relation)
                conn.execute("CHECKPOINT")
        except BaseException:
            self.close()
            raise

    def close(self):
        """Stop the cluster; then the storage it lay on goes."""
        try:
            if self.node:
                self.node.stop()
        finally:
            if self.device:
                self.device.close()

    def calibrate(self, conn, seconds):
        """A new calibration of pg_default, the table's pages warmed up
        first as the benchmark does: harness.calibrate()'s result."""
        harness.warm_up(conn, self.table.relation)
        conn.execute("SELECT vacskip.forget_calibration('pg_default')")
        return harness.calibrate(conn, self.slow, seconds)

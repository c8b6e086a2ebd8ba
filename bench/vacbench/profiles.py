"""Storage profiles: how the clusters' storage behaves while a VACUUM is
timed (bench/slowread.c, preloaded into the server), and the settings
(postgresql.conf) its DBA would give the server.

A profile is one entry of PROFILES; the harness, the plan and the report
read everything they need about it from there.  A --size lists which
profiles it runs (plan.SIZES).  Every profile is measured twice per row:
under its DBA's settings alone (the autotuner's settings path: column
"auto-settings") and after vacskip.calibrate() of the table's tablespace
(column "auto").
"""

import re
from dataclasses import dataclass, field, replace

# What a DBA sets for flash or network storage: the planner's cost of a
# random page close to a sequential one, and many prefetch requests.
FLASH_SETTINGS = {"random_page_cost": "1.1", "effective_io_concurrency": "200"}
CLOUD_REASON = ("what a DBA sets for cloud block storage: random_page_cost 1.1, "
                "effective_io_concurrency 200")


@dataclass(frozen=True)
class StorageProfile:
    name: str
    # bench/slowread.c's SLOWREAD_MODE: count, seek, latency or iops
    mode: str
    # its parameters: SLOWREAD_<KEY> = value (see bench/slowread.c)
    emulation: dict
    # what its DBA sets (postgresql.conf, beyond the benchmark's common
    # settings); the server's defaults for everything else
    settings: dict
    # why a DBA would set that
    settings_reason: str
    # the report's description of the storage; {key} are emulation's
    description: str
    # the majors it applies to (a setting 15's VACUUM ignores: 18 only)
    majors: tuple = (15, 18)
    # the names the report uses for emulation's parameters
    units: dict = field(default_factory=dict)
    # emulation's parameters are the kernel's block-layer limits of the
    # server's reads (harness.Throttle), not slowread's, which only counts
    kernel_throttle: bool = False
    # emulation's parameters are bench/slowdev.c's, below the page cache,
    # on whose device the run's clusters live (harness.SlowDevice)
    block_device: bool = False
    # run only where --profiles names it, not in a size's profiles
    opt_in: bool = False


LATENCY = StorageProfile(
    name="latency", mode="latency", emulation={"latency_us": 500, "mbps": 250},
    settings=FLASH_SETTINGS,
    settings_reason=CLOUD_REASON,
    description="a latency-bound network volume (cloud block storage): every read that "
    "goes to the device (direct I/O: every read; buffered: one the page cache cannot "
    "serve in full, as cachestat() tells) sleeps {latency_us} µs plus its uncached bytes "
    "at {mbps} MB/s in the reading process, so that concurrent requests (18's I/O "
    "workers) overlap.",
    units={"latency_us": "µs per request", "mbps": "MB/s (10^6 bytes)"})

PROFILES = {p.name: p for p in (
    StorageProfile(
        name="disk", mode="count", emulation={},
        settings=FLASH_SETTINGS,
        settings_reason="a DBA's settings for flash: random_page_cost 1.1, "
        "effective_io_concurrency 200, maintenance_io_concurrency left at the server's "
        "default",
        description="this machine's disk as it is; slowread only counts the reads (and, "
        "asking cachestat() first, which buffered reads the page cache could not serve); "
        "the Machine section says which disk it was."),
    StorageProfile(
        name="seek", mode="seek", emulation={"penalty_us": 200},
        settings={},
        settings_reason="PostgreSQL's defaults: a DBA with spinning disks leaves "
        "random_page_cost at 4",
        description="a disk whose seeks are slow: a read whose offset does not continue one "
        "of the last 8 reads of the same file (device and inode, shared by all server "
        "processes) first sleeps {penalty_us} µs, cached or not (the benchmark's 'slow' "
        "profile until December 2026).",
        units={"penalty_us": "µs per read that breaks a stream"}),
    LATENCY,
    replace(
        LATENCY, name="latency-serial",
        settings={**FLASH_SETTINGS, "maintenance_io_concurrency": "1"},
        settings_reason="the latency profile's settings with maintenance_io_concurrency 1: "
        "VACUUM's read stream keeps one read in flight, so that no request overlaps "
        "another (18 only: 15's VACUUM reads one page at a time anyway)",
        description="the latency profile's volume, read one request at a time.",
        majors=(18,)),
    replace(
        LATENCY, name="iops", mode="iops", emulation={"iops": 3000, "io_unit_kb": 256},
        description="an IOPS-limited volume: every read that goes to the device (as under "
        "latency) waits for a token bucket shared by all server processes through "
        "slowread's state file: {iops} requests a second, a request of up to {io_unit_kb} "
        "kB counting as one, no burst beyond one request; no other delay, so an isolated "
        "request is free and concurrency does not help.",
        units={"iops": "requests per second", "io_unit_kb": "kB counted as one request"}),
    StorageProfile(
        name="throttled", mode="count", emulation={"iops": 3000, "mibps": 125},
        settings=FLASH_SETTINGS,
        settings_reason=CLOUD_REASON,
        description="this machine's disk behind the kernel's own I/O limits (cgroup v1 "
        "blkio, blk-throttle): the server's processes, started in a cgroup of their own, "
        "may read from it {iops} requests and {mibps} MiB a second, as a general-purpose "
        "cloud SSD volume's baseline allows; the limits apply to what reaches the block "
        "layer, readahead included (a request is a bio, up to the disk's max_sectors_kb), "
        "and concurrent requests overlap within them; slowread only counts. Not in any "
        "size's profiles: `--profiles throttled` (root, cgroup v1's blkio controller).",
        units={"iops": "read requests per second", "mibps": "MiB read per second"},
        kernel_throttle=True, opt_in=True),
    replace(
        LATENCY, name="block-latency", mode="count",
        description="the latency profile's volume below the page cache: the clusters' "
        "file system lies on a loop device (direct I/O) whose file bench/slowdev.c serves "
        "through FUSE, each read request that reaches it sleeping {latency_us} µs plus its "
        "bytes at {mbps} MB/s in a thread of its own, so that concurrent requests overlap; "
        "the kernel's readahead pays as VACUUM's own reads do, where under latency it is "
        "free. On top comes what a request's way through the loop device and FUSE costs on "
        "this machine, which calibrate() measures with the rest; the loop device reads "
        "ahead as far as the disk under the other profiles (read_ahead_kb: in the header); "
        "writes are not delayed; "
        "slowread only counts. Not in any size's profiles, and alone in a run: `--profiles "
        "block-latency` (root, /dev/fuse).",
        block_device=True, opt_in=True),
)}

# the profiles a size runs (plan.SIZES); --profiles may add the opt-in ones
SIZE_PROFILES = tuple(name for name, p in PROFILES.items() if not p.opt_in)


def applies(profile, major):
    return major in PROFILES[profile].majors


def emulation(profile, cfg):
    """slowread's parameters under a profile: the profile's, with the
    size's --penalty-us for the seek profile and a run's --emulation."""
    params = dict(PROFILES[profile].emulation)
    if "penalty_us" in params and cfg.get("penalty_us") is not None:
        params["penalty_us"] = cfg["penalty_us"]
    params.update(cfg.get("emulation_of", {}).get(profile, {}))
    return params


def emulation_text(profile, cfg):
    """The report's line of a profile's emulation parameters."""
    prof = PROFILES[profile]
    params = emulation(profile, cfg)
    return ", ".join(f"{k} = {v} ({prof.units.get(k, '')})" for k, v in params.items()) \
        or "none (counts only)"


def profile_env(profile, cfg):
    """The SLOWREAD_* environment of a profile (the state file aside)."""
    env = {"SLOWREAD_MODE": PROFILES[profile].mode}
    if not (PROFILES[profile].kernel_throttle or PROFILES[profile].block_device):
        env.update({f"SLOWREAD_{k.upper()}": str(v)
                    for k, v in emulation(profile, cfg).items()})
    return env


def throttle_limits(profile, cfg):
    """(read requests a second, read bytes a second) of a kernel-throttled
    profile, or None."""
    if not PROFILES[profile].kernel_throttle:
        return None
    params = emulation(profile, cfg)
    return int(float(params["iops"])), int(float(params["mibps"]) * 1024 * 1024)


def dba_settings(profile, cfg):
    """What the profile's DBA sets, with a run's --settings."""
    return {**PROFILES[profile].settings, **cfg.get("settings_of", {}).get(profile, {})}


def profile_settings(major, mode, profile, cfg):
    """postgresql.conf settings of an I/O mode and storage profile."""
    conf = {}
    if mode == "direct":
        conf["debug_io_direct"] = "'data'"
    conf.update(dba_settings(profile, cfg))
    return conf


# a run's --emulation and --settings: PROFILE.KEY=VALUE, comma-separated
_ENTRY = re.compile(r"([a-z-]+)\.([a-z_]+)=([0-9A-Za-z_.]+)")


def parse_overrides(option, value, profiles, allowed_keys):
    """{profile: {key: value}} of a --emulation or --settings value: each
    PROFILE among `profiles`, each key among allowed_keys(profile) (None:
    any name), each value a positive number (emulation) or a word."""
    out = {}
    for entry in [x.strip() for x in value.split(",") if x.strip()] or [""]:
        m = _ENTRY.fullmatch(entry)
        if not m or m[1] not in profiles:
            raise ValueError(f"--{option}: {entry!r}: want PROFILE.KEY=VALUE, PROFILE among "
                             f"{', '.join(profiles)}")
        keys = allowed_keys(m[1])
        if keys is not None:
            try:
                number = float(m[3])
            except ValueError:
                number = -1.0
            if m[2] not in keys or not 0 < number < float("inf"):
                raise ValueError(f"--{option}: {entry!r}: profile {m[1]}'s parameters are "
                                 f"{', '.join(keys) or 'none'}, each a positive number")
        out.setdefault(m[1], {})[m[2]] = m[3]
    return out


def describe(profile, cfg):
    return PROFILES[profile].description.format(**emulation(profile, cfg))

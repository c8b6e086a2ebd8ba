"""Storage profiles: how the clusters' storage behaves during a sweep, and
the settings (postgresql.conf) that describe it to the autotuner.

A profile is one entry of PROFILES; the harness, the plan and the report
read everything they need about it from there.  A --size lists which
profiles it runs (plan.SIZES).
"""

from dataclasses import dataclass

# fio 3.33 on this disk (O_DIRECT, libaio, 4 GB file, 2026-11-30): 8 kB
# random reads 16.5k IOPS at queue depth 1, 66.8k at 16.
FIO_THIS_DISK = ("fio 3.33 on this disk, O_DIRECT, libaio, 4 GB file, 2026-11-30: 8 kB "
                 "random reads 16.5k IOPS at queue depth 1, 66.8k at 16, 4× more")


@dataclass(frozen=True)
class StorageProfile:
    name: str
    # effective_io_concurrency and maintenance_io_concurrency
    io_concurrency: int
    # why that concurrency (the report's words)
    io_concurrency_reason: str
    # the report's description; {penalty_us} is the size's slowread penalty
    description: str
    # bench/slowread.c delays the reads that do not continue a recent one of
    # the same file by the size's penalty_us (else it only counts reads)
    slowread: bool = False


PROFILES = {p.name: p for p in (
    StorageProfile(
        name="asis", io_concurrency=16,
        io_concurrency_reason=FIO_THIS_DISK,
        description="this disk as it is."),
    StorageProfile(
        name="slow", io_concurrency=1, slowread=True,
        io_concurrency_reason="the penalty is a sleep in the reading process: one random "
        "read at a time",
        description="`bench/slowread.c` preloaded into the server (LD_PRELOAD at `pg_ctl "
        "start`, so also into 18's I/O workers): a read whose offset does not continue one "
        "of the last 8 reads of the same file (device and inode, shared by all server "
        "processes) first sleeps {penalty_us} µs."),
)}


# The profile a pgbench cluster is built under (pgbench -i), before each
# point sets its own.
PLAIN_PROFILE = "asis"


def penalty_us(profile, cfg):
    """slowread's penalty under a profile (0: it only counts the reads)."""
    return cfg["penalty_us"] if PROFILES[profile].slowread else 0


def profile_settings(major, mode, profile, random_page_cost=None):
    """postgresql.conf settings of an I/O mode and storage profile; with
    random_page_cost (the profile's calibration) also the costs."""
    conf = {}
    if mode == "direct":
        conf["debug_io_direct"] = "'data'"
    conc = PROFILES[profile].io_concurrency
    conf["effective_io_concurrency"] = str(conc)
    conf["maintenance_io_concurrency"] = str(conc)
    if random_page_cost is not None:
        conf["random_page_cost"] = f"{random_page_cost:g}"
        conf["seq_page_cost"] = "1"
    return conf

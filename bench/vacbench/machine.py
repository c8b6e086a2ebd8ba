"""Facts about the machine: for the report, for the result directory's
name, and the load during a run (OUT/load.txt, sampled when a measuring
session starts and ends)."""

import datetime
import os
import platform
import re
import socket
import subprocess
import tempfile
from pathlib import Path

LOAD_FILE = "load.txt"


def _read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def load_average():
    """The 1, 5 and 15 minute load averages, as /proc/loadavg gives them."""
    return " ".join(_read("/proc/loadavg").split()[:3])


def disk_sysfs(path=None):
    """The sysfs directory of the disk holding path (by default the
    temporary directory, where the clusters live; a partition's disk), or
    None (no block device: tmpfs, overlay)."""
    st = os.stat(path or tempfile.gettempdir())
    dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    for cand in (dev, dev / ".."):
        if (cand / "queue").is_dir():
            return cand.resolve()
    return None


def disk_devno(path=None):
    """'MAJOR:MINOR' of the disk holding path, or None."""
    d = disk_sysfs(path)
    return _read(d / "dev").strip() if d else None


def read_ahead_file(path=None):
    """The sysfs file of the kernel's readahead (read_ahead_kb) of the disk
    holding path, or None."""
    d = disk_sysfs(path)
    return d / "queue" / "read_ahead_kb" if d else None


def read_ahead_kb(path=None):
    """read_ahead_kb of the device holding path, or '?': buffered reads'
    readahead decides what a miss brings in."""
    f = read_ahead_file(path)
    return _read(f).strip() if f else "?"


def set_read_ahead_kb(kb, path=None):
    """Set read_ahead_kb of the device holding path; returns the value it
    had.  Needs root; SystemExit with the reason when it cannot."""
    f = read_ahead_file(path)
    if f is None:
        raise SystemExit("--read-ahead-kb: no block device's read_ahead_kb found for "
                         f"{path or tempfile.gettempdir()}")
    old = _read(f).strip()
    try:
        f.write_text(f"{kb}\n")
    except OSError as e:
        raise SystemExit(f"--read-ahead-kb: cannot write {f} ({e.strerror}; it needs root)")
    return old


def machine_facts():
    mem = re.search(r"MemTotal:\s+(\d+)", _read("/proc/meminfo"))
    cpu = re.search(r"model name\s*:\s*(.*)", _read("/proc/cpuinfo"))
    disk = subprocess.run(["findmnt", "-no", "SOURCE,FSTYPE,OPTIONS", "-T",
                           tempfile.gettempdir()],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    debian = _read("/etc/debian_version").strip()
    return {
        "cores": os.cpu_count(),
        "cpu": cpu.group(1) if cpu else "?",
        "memory": f"{int(mem.group(1)) / 1024 / 1024:.1f} GiB" if mem else "?",
        "kernel": platform.release(),
        "os": debian and f"Debian {debian}",
        "filesystem of the clusters": disk,
        "read_ahead_kb of its device when the report was written": read_ahead_kb(),
        "load average when the report was written": load_average(),
    }


def machine_tag():
    mem = re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())
    gb = round(int(mem.group(1)) / 1024 / 1024) if mem else 0
    host = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname().split(".")[0])[:10] or "host"
    return f"{host}-{os.cpu_count()}c{gb}g"


def record_load(out, event, clusters=None):
    """Append to OUT/load.txt: event (start or end of a measuring session),
    UTC time, the three load averages, the number of cores, read_ahead_kb
    of the clusters' device (of the one holding `clusters`, by default the
    temporary directory's)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    with open(out / LOAD_FILE, "a") as f:
        f.write(f"{event} {now:%Y-%m-%dT%H:%M:%S}Z {load_average()} {os.cpu_count()} "
                f"{read_ahead_kb(clusters)}\n")


def read_load(out):
    """OUT/load.txt as [(event, time, 'l1 l5 l15', cores, read_ahead_kb)]
    (read_ahead_kb None where a run did not record it); [] when the run
    recorded nothing."""
    path = out / LOAD_FILE
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) in (6, 7):
            rows.append((f[0], f[1], " ".join(f[2:5]), int(f[5]), f[6] if len(f) == 7 else None))
    return rows

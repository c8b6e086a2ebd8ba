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


def read_ahead_kb(path=None):
    """The kernel's readahead (read_ahead_kb) of the block device holding
    path (by default the temporary directory, where the clusters live), or
    '?': buffered reads' readahead decides what a miss brings in."""
    st = os.stat(path or tempfile.gettempdir())
    dev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    for cand in (dev / "queue" / "read_ahead_kb", dev / ".." / "queue" / "read_ahead_kb"):
        if cand.exists():
            return _read(cand).strip()
    return "?"


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
        "read_ahead_kb of its device": read_ahead_kb(),
        "load average when the report was written": load_average(),
    }


def machine_tag():
    mem = re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())
    gb = round(int(mem.group(1)) / 1024 / 1024) if mem else 0
    host = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname().split(".")[0])[:10] or "host"
    return f"{host}-{os.cpu_count()}c{gb}g"


def record_load(out, event):
    """Append to OUT/load.txt: event (start or end of a measuring session),
    UTC time, the three load averages, the number of cores."""
    now = datetime.datetime.now(datetime.timezone.utc)
    with open(out / LOAD_FILE, "a") as f:
        f.write(f"{event} {now:%Y-%m-%dT%H:%M:%S}Z {load_average()} {os.cpu_count()}\n")


def read_load(out):
    """OUT/load.txt as [(event, time, 'l1 l5 l15', cores)]; [] when the run
    did not record it."""
    path = out / LOAD_FILE
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 6:
            rows.append((f[0], f[1], " ".join(f[2:5]), int(f[5])))
    return rows

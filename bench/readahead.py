"""How the kernel's readahead serves VACUUM-like reads of a file just opened.

VACUUM with buffered reads before 18 reads one 8 kB block at a time: the
pages that must be read and, between two of them, every run of skippable
pages shorter than the threshold.  This reads such sequences from a scratch
file of 16,384 blocks (128 MB, the size of calibrate()'s I/O table), cold
(fdatasync, posix_fadvise(DONTNEED), a new descriptor), on pseudo-random
maps at the densities calibrate() measures, and asks cachestat() (Linux
6.5) before every read whether the page cache already holds the block.
It prints, per map and threshold, how many reads went to the device within
the file's first START blocks and after them, and the block of the last
one: whether and where the kernel's readahead settled on the file (served
every later read) (src/core/model.hpp, kStartPages).

Usage: python3 -m bench.readahead DIR [--seeds N]
  DIR: a directory on the storage to probe (the scratch file is removed)
"""

import argparse
import ctypes
import os
import random
import sys

BLOCK = 8192
BLOCKS = 16384
DENSITIES = (1 / 33, 1 / 17, 1 / 9, 1 / 5, 1 / 3, 1 / 2)
GAPS = (1, 2, 4, 8, 16, 32)
START = 2048             # model.hpp's kStartPages
NR_CACHESTAT = 451

_libc = ctypes.CDLL(None, use_errno=True)


class _Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]


class _Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("nr_cache", "nr_dirty", "nr_writeback", "nr_evicted", "nr_recently_evicted")]


def cached_pages(fd, off, length):
    """Pages of [off, off + length) the page cache holds (cachestat())."""
    r, s = _Range(off, length), _Stat()
    if _libc.syscall(NR_CACHESTAT, fd, ctypes.byref(r), ctypes.byref(s), 0) != 0:
        raise OSError(ctypes.get_errno(), "cachestat() (Linux 6.5 or later)")
    return s.nr_cache


def reads(needed, threshold):
    """The blocks VACUUM reads, in order: every needed block and each run
    between two of them shorter than the threshold."""
    out, prev = [], None
    for b in needed:
        if prev is not None and b - prev - 1 < threshold:
            out.extend(range(prev + 1, b))
        out.append(b)
        prev = b
    return out


def cold_read(path, blocks):
    """(reads that went to the device within the first START blocks, after
    them, the block of the last one or -1)."""
    fd = os.open(path, os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    page = os.sysconf("SC_PAGESIZE")
    first = after = 0
    last = -1
    try:
        for b in blocks:
            if cached_pages(fd, b * BLOCK, BLOCK) < BLOCK // page:
                if b < START:
                    first += 1
                else:
                    after += 1
                last = b
            os.pread(fd, BLOCK, b * BLOCK)
    finally:
        os.close(fd)
    return first, after, last


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--seeds", type=int, default=2, help="maps per density (default 2)")
    args = ap.parse_args(argv)
    path = os.path.join(args.dir, f"vacskip-readahead-{os.getpid()}.dat")
    try:
        with open(path, "wb") as f:
            for _ in range(BLOCKS // 128):
                f.write(os.urandom(BLOCK * 128))
            f.flush()
            os.fsync(f.fileno())
        print(f"Reads that went to the device within the first {START} blocks + after "
              "them, and the block of the last one; the map's pages to read within the "
              f"first {START} blocks + after them; {BLOCKS} blocks read cold:\n")
        print("| map | seed | " + " | ".join(f"T = {t}" for t in GAPS) + " |")
        print("|---" * (len(GAPS) + 2) + "|")
        for d in DENSITIES:
            for seed in range(args.seeds):
                rng = random.Random(seed)
                needed = [b for b in range(BLOCKS) if rng.random() < d]
                early = sum(b < START for b in needed)
                cells = []
                for t in GAPS:
                    first, after, last = cold_read(path, reads(needed, t))
                    cells.append(f"{first} + {after}, last {last}")
                print(f"| 1/{round(1 / d)} ({early} + {len(needed) - early}) | {seed} | " +
                      " | ".join(cells) + " |")
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

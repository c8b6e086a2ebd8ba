"""The cost-based delay's parts as a `make bench` run's notes keep them,
for bench/replay.py: what VACUUM sleeps per page, and where its reads go
on while it sleeps, how it naps (revision 27) or whether two or more
reads were in flight (revisions 25 and 26), and the reading's share on a
CPU, which no nap hides (revision 29, cpu_share())."""

import re


def delay_parts(note, explained):
    """The cost-based delay's sleep, µs: (a page read in, its
    vacuum_cost_page_miss points; the free space map's page, its
    vacuum_cost_page_hit points; a page dirtied, vacuum_cost_page_dirty's;
    whether the reads go on while VACUUM sleeps, two or more in flight,
    explain_threshold()'s concurrency_used, as revisions 25 and 26 took
    it; and where they go on, from 18 on with io_method worker or io_uring
    (the calibration as explain_threshold() names it), VACUUM's naps:
    (a nap's length in µs, vacuum_cost_delay; the reads issued ahead,
    maintenance_io_concurrency; the pages a read holds at most,
    io_combine_limit), None elsewhere or where the note keeps no
    settings).  From the settings the note
    keeps (cost_delay, a manual VACUUM's in the session) where it has them,
    vacuum_cost_page_dirty at PostgreSQL's default where it does not (the
    notes of runs from before 2026-12-06 21:41 UTC; the benchmark sets
    none); else from explain_threshold()'s cost_delay_per_page, which
    revision 23 priced with the miss alone, the others at PostgreSQL's
    defaults (hit half the miss, dirty ten times); no sleep where the note
    has neither (runs from before revision 23, which slept none)."""
    ahead = (explained.get("concurrency_used") or 1) >= 2
    s = note.get("cost_delay")
    if s is not None:
        if not (s["vacuum_cost_delay"] > 0 and s["vacuum_cost_limit"] > 0):
            return 0.0, 0.0, 0.0, ahead, None
        point = 1000.0 * s["vacuum_cost_delay"] / s["vacuum_cost_limit"]
        said = explained.get("calibration") or ""
        issued = re.search(r"maintenance_io_concurrency (\d+)", said)
        combine = re.search(r"io_combine_limit (\d+)", said)
        naps = ((1000.0 * s["vacuum_cost_delay"], max(int(issued.group(1)), 1),
                 max(int(combine.group(1)), 1))
                if re.search(r"io_method (worker|io_uring)", said) and issued and combine
                else None)
        return (point * s["vacuum_cost_page_miss"], point * s["vacuum_cost_page_hit"],
                point * s.get("vacuum_cost_page_dirty", 20), ahead, naps)
    miss = explained.get("cost_delay_per_page") or 0.0
    return miss, miss / 2.0, miss * 10.0, ahead, None


def overlapping(delay):
    """Revision 25's sleep per page to read where the reads go on while
    VACUUM sleeps (a delay_parts() tuple), None elsewhere."""
    return sum(delay[:3]) if delay[3] and sum(delay[:2]) > 0 else None


def hiding(delay):
    """Revision 27's overlap (cost_current()) where the reads go on while
    VACUUM sleeps and the note says how it naps (a delay_parts() tuple),
    None elsewhere."""
    if delay[4] is None or not sum(delay[:2]) > 0:
        return None
    return (sum(delay[:3]), *delay[4])


def current_overlap(delay):
    """The current model's overlap: revision 27's where the note says how
    VACUUM naps, revision 26's elsewhere."""
    return hiding(delay) or overlapping(delay)


def unhidden(x, sleep, nap, ahead, ios, cpu=0.0):
    """Of a reading of x µs in `ios` reads at most, what naps of `nap` µs,
    `sleep` µs in all, do not hide, each the `ahead` reads issued before it
    at the waiting's time per read, the waiting the reading less its share
    `cpu` on a CPU, which no nap hides (model.cpp's hidden_by_sleep())."""
    wait = x * (1.0 - min(max(cpu, 0.0), 1.0))
    if not (x > 0 and sleep > 0 and ios > 0):
        return x
    return x - min(sleep, wait, sleep / nap * ahead * wait / ios)


def cpu_share(cal, d, t):
    """model.cpp's measured_cpu_share(): the share of the reading on a CPU
    at density d and threshold t, linear between the calibrated ones in the
    logarithms of both (calibrate()'s read_cpu_share, revision 29); 0 where
    the calibration did not measure it."""
    from bench.replay import GAPS, locate
    s = cal.get("read_cpu_share")
    if not s:
        return 0.0
    di, dw = locate(cal["densities"], d)
    ti, tw = locate([float(g) for g in GAPS], float(t))

    def at(i):
        return s[i][ti] * (1 - tw) + s[i][ti + 1] * tw
    return at(di) * (1 - dw) + at(di + 1) * dw


def reading_share(read, sleep, nap, ahead, ios, sigma, cpu=0.0):
    """How much of an error of the reading passes into a cost, per µs
    (model.cpp's reading_share(), revision 28): the larger of the cost's
    moves with the reading sigma µs (its noise) dearer or cheaper; where
    sigma is 0, the share not hidden (revision 27's rule)."""
    def left(x):
        return unhidden(x, sleep, nap, ahead, ios, cpu)
    if not sigma > 0:
        return left(read) / read if read > 0 else 0.0
    return max(left(read + sigma) - left(read),
               left(read) - left(max(read - sigma, 0.0))) / sigma

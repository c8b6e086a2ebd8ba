"""What a run measures: the sizes (--size), their restriction or change by
scope (--profiles, --workloads, --fracs, --reps, --emulation, --settings,
kept in OUT/scope.txt), the
points every row gets, the order of the thresholds, and what runs.csv does
not have yet.  A row whose paired comparisons its repetitions leave
undecided gets more (stats.wants_more()); those are not planned ahead."""

import random

from bench.vacbench.profiles import PROFILES, SIZE_PROFILES, applies, parse_overrides
from bench.vacbench.stats import AUTO, AUTO_SETTINGS, max_reps
from bench.vacbench.workloads import WORKLOADS

THRESHOLDS = ("1", "2", "4", "8", "16", "32", AUTO_SETTINGS, AUTO)
IO_MODES = {18: ("direct", "buffered"), 15: ("buffered",)}

# Fractions per workload, chosen so that the share of pages a point
# modifies spans about 0.5 % to 40 % (uniform: ~96 rows per page, so about
# 96 x frac; wide: 4 rows per page, 4 x frac; clustered: the share itself;
# pgbench: ~61 accounts per page).
FULL_FRACS = {"uniform": (5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3),
              "clustered": (0.01, 0.03, 0.1, 0.2, 0.4),
              "wide": (1.25e-3, 5e-3, 0.02, 0.05, 0.12),
              "pgbench": (1e-4, 5e-4, 2e-3)}

# What each --size runs.  sweep_pages: heap pages of the uniform, clustered
# and wide tables; pgbench_scale: pgbench -i -s; workloads: those run unless
# --workloads names others of `fracs`; workload_profiles: workloads run under
# some profiles only; reps: repetitions every row gets, max_reps: the most
# an undecided row gets; calib_seconds: vacskip.calibrate()'s `seconds`
# (default and full: calibrate()'s own default, what a DBA runs; at 3 s the
# emulated profiles got one to five rounds, and at 10 s one to three once
# calibrate() timed a file's first pages apart); calib_advice: where a
# calibration read its patterns fewer than three times, call it again for
# the seconds its WARNING advises, as a DBA would (not at the smoke size,
# which is for speed); penalty_us: the seek profile's penalty; cached_*:
# the cached all-frozen VACUUM test.
SIZES = {
    "smoke": dict(sweep_pages=300, pgbench_scale=1, shared_buffers="128MB",
                  workloads=("uniform", "clustered", "wide", "pgbench"),
                  workload_profiles={"clustered": ("disk",), "wide": ("disk",),
                                     "pgbench": ("disk",)},
                  fracs={"uniform": (1e-3,), "clustered": (0.1,), "wide": (0.05,),
                         "pgbench": (5e-4,)},
                  thresholds=("1", "32", AUTO_SETTINGS, AUTO), reps=2, max_reps=3,
                  io_modes=IO_MODES, profiles=SIZE_PROFILES, calib_seconds=0.5,
                  calib_advice=False, penalty_us=200, cached_pages=2000, cached_reps=3),
    "default": dict(sweep_pages=12000, pgbench_scale=10, shared_buffers="128MB",
                    workloads=("uniform", "clustered"),
                    fracs={"uniform": (2.5e-4, 1e-3), "clustered": (0.05, 0.2),
                           "wide": (5e-3, 0.05), "pgbench": (5e-4, 2e-3)},
                    thresholds=THRESHOLDS, reps=3, max_reps=9,
                    io_modes=IO_MODES, profiles=SIZE_PROFILES, calib_seconds=20,
                    calib_advice=True, penalty_us=200, cached_pages=60000, cached_reps=51),
    "full": dict(sweep_pages=100000, pgbench_scale=20, shared_buffers="256MB",
                 workloads=("uniform", "clustered", "wide", "pgbench"), fracs=FULL_FRACS,
                 thresholds=THRESHOLDS, reps=5, max_reps=15,
                 io_modes=IO_MODES, profiles=SIZE_PROFILES, calib_seconds=20,
                 calib_advice=True, penalty_us=200, cached_pages=230000, cached_reps=101),
}


def reps_text(cfg):
    return (f"{cfg['reps']} repetitions per row, up to {max_reps(cfg)} where the paired "
            "verdicts are undecided")


def shuffled(thresholds, seed):
    """The thresholds in an order of their own for each row and
    repetition (seeded): no threshold always runs after the same one."""
    order = list(thresholds)
    random.Random(f"order-{seed}").shuffle(order)
    return order


def workloads_of(cfg, profile):
    """The workloads run under a profile."""
    only = cfg.get("workload_profiles", {})
    return [w for w in cfg["workloads"] if profile in only.get(w, (profile,))]


def _split(text):
    return [x.strip() for x in text.split(",") if x.strip()]


def _scope_subset(cfg, option, allowed, value):
    """cfg[option] restricted to the names listed in value, each among
    `allowed` (kept in allowed's order)."""
    want = _split(value)
    bad = [x for x in want if x not in allowed]
    if bad or not want:
        raise ValueError(f"--{option}: {', '.join(bad) or 'none given'}: not among the "
                         f"{option} this size can run ({', '.join(allowed)})")
    cfg[option] = tuple(x for x in allowed if x in want)


def _scope_profiles(cfg, value):
    """The size's profiles or the opt-in ones; a profile whose storage holds
    the clusters (block_device) alone, as every profile of a run measures
    the same clusters."""
    _scope_subset(cfg, "profiles", tuple(PROFILES), value)
    own = [p for p in cfg["profiles"] if PROFILES[p].block_device]
    if own and len(cfg["profiles"]) > 1:
        raise ValueError(f"--profiles: {own[0]} puts the clusters on storage of its own "
                         "and runs alone, not with " +
                         ", ".join(p for p in cfg["profiles"] if p != own[0]))


def _scope_workloads(cfg, value):
    """Any workload the size has fractions for, not only those it runs."""
    _scope_subset(cfg, "workloads", tuple(cfg["fracs"]), value)


def _scope_fracs(cfg, value):
    """Entries F (every workload of the run that has F) or WORKLOAD:F."""
    keep = {}
    for entry in _split(value) or [""]:
        w, _, f = entry.rpartition(":")
        try:
            f = float(f)
        except ValueError:
            raise ValueError(f"--fracs: {entry!r}: want F or WORKLOAD:F") from None
        hit = [x for x in cfg["workloads"] if (not w or x == w) and f in cfg["fracs"][x]]
        if not hit:
            raise ValueError(f"--fracs: {entry}: no workload of this run has fraction {f:g} ("
                             + "; ".join(f"{x}: {', '.join(f'{g:g}' for g in cfg['fracs'][x])}"
                                         for x in cfg["workloads"]) + ")")
        for x in hit:
            keep.setdefault(x, set()).add(f)
    cfg["fracs"] = {w: tuple(f for f in fs if f in keep.get(w, ())) for w, fs in cfg["fracs"].items()}
    cfg["workloads"] = tuple(w for w in cfg["workloads"] if cfg["fracs"][w])


def _scope_reps(cfg, value):
    try:
        n = [int(x) for x in value.split(",")]
    except ValueError:
        n = []
    if not 1 <= len(n) <= 2 or min(n) < 1 or (len(n) == 2 and n[1] < n[0]):
        raise ValueError(f"--reps: {value}: want N or N,M (M >= N), positive integers")
    cfg["reps"] = n[0]
    # N alone: the usual cap for N (stats.max_reps)
    if len(n) == 2:
        cfg["max_reps"] = n[1]
    else:
        cfg.pop("max_reps", None)


def _scope_emulation(cfg, value):
    """Other emulation parameters for some profiles (storage the size's
    profiles do not describe): PROFILE.KEY=VALUE, KEY one of the profile's."""
    cfg["emulation_of"] = parse_overrides("emulation", value, cfg["profiles"],
                                          lambda p: list(PROFILES[p].emulation))


def _scope_settings(cfg, value):
    """Other settings of some profiles' DBAs: PROFILE.NAME=VALUE."""
    cfg["settings_of"] = parse_overrides("settings", value, cfg["profiles"], lambda p: None)


SCOPES = (("profiles", _scope_profiles), ("workloads", _scope_workloads),
          ("fracs", _scope_fracs), ("reps", _scope_reps), ("emulation", _scope_emulation),
          ("settings", _scope_settings))


def apply_scope(cfg, out, profiles=None, fracs=None, reps=None, workloads=None,
                emulation=None, settings=None):
    """Restrict cfg to some storage profiles, workloads and fractions (a run
    that measures part of a size), change its repetitions: "N" (the cap
    MAX_REPS_FACTOR x N) or "N,M" (cap M), or its profiles' emulation
    parameters or settings (storage and DBAs the size does not describe).
    Options given are written to
    OUT/scope.txt; options not given are read from it, so a resumed run or
    --report-only plans and reports the same points.  Returns {option:
    value} in force."""
    kept = read_scope(out)
    given = {"profiles": profiles, "fracs": fracs, "reps": reps, "workloads": workloads,
             "emulation": emulation, "settings": settings}
    scope = {**kept, **{k: v for k, v in given.items() if v is not None}}
    cfg["fracs"] = dict(cfg["fracs"])
    for option, apply in SCOPES:
        if option in scope:
            apply(cfg, scope[option])
    if scope:
        (out / "scope.txt").write_text("".join(f"{k} {v}\n" for k, v in sorted(scope.items())))
    return scope


def read_scope(out):
    """{option: value} kept in OUT/scope.txt ({} where there is none)."""
    path = out / "scope.txt"
    kept = {}
    if path.exists():
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            kept[k] = v.strip()
    return kept


def read_planned(out):
    """The patched servers runs into `out` were given (servers.txt)."""
    path = out / "servers.txt"
    return path.read_text().split() if path.exists() else []


def major_of(name):
    return int(name.split("-")[0])


def group_rows(cfg, major, mode, profile):
    """(workload, frac) of every row of a group."""
    if mode not in cfg["io_modes"].get(major, ()) or not applies(profile, major):
        return []
    return [(w, f) for w in workloads_of(cfg, profile) for f in cfg["fracs"][w]]


def groups_of(cfg, major):
    """(I/O mode, storage profile) of every group of a server's major."""
    return [(m, p) for m in cfg["io_modes"].get(major, ()) for p in cfg["profiles"]
            if applies(p, major)]


def base_points(cfg, server_name):
    """Every point the size plans for one patched server: (mode, profile,
    workload, frac, rep, threshold), in the order the sweep measures them
    (group by group, repetition by repetition)."""
    major = major_of(server_name)
    pts = []
    for mode, profile in groups_of(cfg, major):
        rows = group_rows(cfg, major, mode, profile)
        for rep in range(cfg["reps"]):
            for w, f in rows:
                pts += [(mode, profile, w, f, rep, t)
                        for t in shuffled(cfg["thresholds"], f"{w}-{f}-{rep}")]
    return pts


def rep_progress(rows, thresholds):
    """Of one row's runs.csv rows: (repetitions with every threshold
    column, the first repetition without)."""
    by_rep = {}
    for r in rows:
        by_rep.setdefault(int(r["rep"]), set()).add(r["threshold"])
    complete = {k for k, ts in by_rep.items() if set(thresholds) <= ts}
    return len(complete), next(k for k in range(len(complete) + 1) if k not in complete)


def sweep_key(cfg, server, mode, profile, workload, frac, rep, threshold):
    return dict(phase="sweep", server=server, mode=mode, profile=profile, workload=workload,
                pages=cfg[WORKLOADS[workload].size_key], frac=frac, rep=rep,
                threshold=threshold)


def missing_sweep_points(rows, cfg, planned):
    """{'server mode/profile': base points planned by cfg but not in rows},
    for the patched servers `planned` and those with rows."""
    have = {(r["server"], r["mode"], r["profile"], r["workload"], float(r["frac"]), r["rep"],
             r["threshold"]) for r in rows if r["phase"] == "sweep"}
    servers = sorted({*planned, *(r["server"] for r in rows if r["phase"] == "sweep")},
                     key=lambda n: (-major_of(n), n))
    missing = {}
    for s in servers:
        for mode, profile, w, f, rep, t in base_points(cfg, s):
            if (s, mode, profile, w, f, str(rep), t) not in have:
                k = f"{s} {mode}/{profile}"
                missing[k] = missing.get(k, 0) + 1
    return missing


class Plan:
    """The points of a run that runs.csv (a store.Results) does not have yet."""

    def __init__(self, cfg, res, servers=()):
        self.cfg = cfg
        self.res = res
        self.servers = list(servers)

    def patched(self):
        return [s for s in self.servers if s.variant == "patched"]

    def key(self, server, mode, profile, workload, frac, rep, threshold):
        return sweep_key(self.cfg, server.name, mode, profile, workload, frac, rep, threshold)

    def pending(self, server, group=None):
        """Base points of a server (of one group) that runs.csv lacks."""
        return [p for p in base_points(self.cfg, server.name)
                if (group is None or p[:2] == group) and not self.res.have(**self.key(server, *p))]

    def calib_key(self, server, mode, profile, rep):
        return dict(phase="calib", server=server.name, mode=mode, profile=profile,
                    workload="", pages="", frac="", rep=rep, threshold="")

    def calibrations(self, server, mode, profile):
        """The calibration rows of a group in runs.csv."""
        return [r for r in self.res.rows if r["phase"] == "calib" and
                (r["server"], r["mode"], r["profile"]) == (server.name, mode, profile)]

    def cached_pending(self):
        cfg = self.cfg
        return [s for s in self.servers
                if not self.res.have(phase="cached", server=s.name, mode="cached", profile="",
                                     workload="", pages=cfg["cached_pages"], frac="",
                                     rep=cfg["cached_reps"] - 1, threshold="")]

    def count_points(self, phases, groups_with_work):
        """{phase: points still to measure}: base points, one calibration per
        group with work (groups_with_work), the cached test's runs."""
        left = {}
        if "sweep" in phases:
            left["sweep"] = sum(len(self.pending(s)) for s in self.patched()) + groups_with_work
        if "cached" in phases:
            left["cached"] = len(self.cached_pending()) * self.cfg["cached_reps"]
        return left

"""What a run measures: the sizes (--size), their restriction by scope
(--profiles, --fracs, --reps, kept in OUT/scope.txt), repetitions, the
order of the thresholds, and what runs.csv does not have yet."""

import random

from bench.vacbench.stats import calibrated_rpc

THRESHOLDS = (1, 2, 4, 8, 16, 32, "auto")
# The fractions of rows updated in the SKIP_PAGES_THRESHOLD benchmark
# (pgsql-hackers, "Maybe we should reduce SKIP_PAGES_THRESHOLD a bit?",
# December 2024).
SKIP_BENCH_FRACS = (1e-6, 1e-5, 2.5e-5, 5e-5, 7.5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 1e-2)

# What each --size runs.  sweep_pages: heap pages of the sweep table (~96
# rows of 48 bytes per page at fillfactor 90); shared_buffers is well below
# it.  penalty_us: the cost bench/slowread.c adds to a read that does not
# continue the previous one, under the storage profiles that use it
# (profiles.py).  cached_*: the cached all-frozen VACUUM test.
SIZES = {
    "smoke": dict(sweep_pages=300, shared_buffers="16MB", fracs=(1e-3, 1e-2),
                  thresholds=(1, 32, "auto"), reps=1, penalty_us=200,
                  io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                  profiles=("asis", "slow"), calib_pages=50, calib_reps=2,
                  cached_pages=2000, cached_reps=3,
                  pgbench_scale=1, pgbench_fracs=(1e-3,), pgbench_profiles=("asis",),
                  pgbench_reps=1),
    "default": dict(sweep_pages=8000, shared_buffers="16MB",
                    fracs=(1e-5, 1e-4, 5e-4, 1e-3, 1e-2),
                    thresholds=THRESHOLDS, reps=2, penalty_us=200,
                    io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                    profiles=("asis", "slow"), calib_pages=1000, calib_reps=3,
                    cached_pages=60000, cached_reps=51,
                    pgbench_scale=5, pgbench_fracs=(2e-4,), pgbench_profiles=("asis",),
                    pgbench_reps=1),
    "full": dict(sweep_pages=240000, shared_buffers="256MB", fracs=SKIP_BENCH_FRACS,
                 thresholds=THRESHOLDS, reps=3, cheap_reps=(1e-4, 7), penalty_us=200,
                 io_modes={18: ("direct", "buffered"), 15: ("buffered",)},
                 profiles=("asis", "slow"), calib_pages=4000, calib_reps=5,
                 cached_pages=230000, cached_reps=101,
                 pgbench_scale=100, pgbench_fracs=(1e-4, 1e-3),
                 pgbench_profiles=("asis", "slow"), pgbench_reps=5),
}

# Fractions above this modify most pages: each point rewrites the table.
HEAVY_FRAC = 1e-3


def reps_of(cfg, frac):
    """Repetitions of a fraction: cfg's cheap_reps = (f, n) gives fractions up
    to f n repetitions (their VACUUMs take milliseconds, so noise weighs
    most there and more runs cost little)."""
    cheap = cfg.get("cheap_reps")
    if cheap and frac <= cheap[0]:
        return max(cheap[1], cfg["reps"])
    return cfg["reps"]


def reps_text(cfg):
    cheap = cfg.get("cheap_reps")
    if cheap:
        return (f"{max(cheap[1], cfg['reps'])} runs up to fraction {cheap[0]:g}, "
                f"{cfg['reps']} above")
    return f"{cfg['reps']} run(s)"


def shuffled(thresholds, seed):
    """The thresholds in an order of their own for each fraction and
    repetition (seeded): no threshold always runs after the same one."""
    order = list(thresholds)
    random.Random(f"order-{seed}").shuffle(order)
    return order


def pgbench_order_seed(frac, rep):
    """shuffled()'s seed for one pgbench fraction and repetition (repetition
    0 keeps the order of the runs that had only one)."""
    return frac if rep == 0 else f"pgbench-{frac}-{rep}"


def _scope_list(scope, option, allowed, parse, show):
    """The values of a comma-separated scope option, each among `allowed`."""
    try:
        want = [parse(x) for x in scope[option].split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--{option}: not a list of numbers: {scope[option]}") from None
    bad = [x for x in want if x not in allowed]
    if bad or not want:
        raise ValueError(f"--{option}: {', '.join(map(str, bad)) or 'none given'}: not among "
                         f"this size's {'profiles' if option == 'profiles' else 'fractions'} "
                         f"({', '.join(map(show, allowed))})")
    return want


def apply_scope(cfg, out, profiles=None, fracs=None, reps=None):
    """Restrict cfg to some storage profiles and sweep fractions (a run that
    measures part of a size: a model revision that changes only some
    profiles' thresholds), or change its repetitions: "N" or "N,M" (M for
    the fractions the size repeats more often).  Options given are written to OUT/scope.txt;
    options not given are read from it, so a resumed run or --report-only
    plans and reports the same points.  Returns {option: value} in force."""
    path = out / "scope.txt"
    kept = {}
    if path.exists():
        for line in path.read_text().splitlines():
            k, _, v = line.partition(" ")
            kept[k] = v.strip()
    scope = {k: v for k, v in (("profiles", profiles), ("fracs", fracs), ("reps", reps))
             if v is not None}
    scope = {**kept, **scope}
    if "profiles" in scope:
        want = _scope_list(scope, "profiles", cfg["profiles"], str.strip, str)
        cfg["profiles"] = tuple(x for x in cfg["profiles"] if x in want)
        cfg["pgbench_profiles"] = tuple(x for x in cfg["pgbench_profiles"] if x in want)
    if "fracs" in scope:
        want = _scope_list(scope, "fracs", cfg["fracs"], float, lambda f: f"{f:g}")
        cfg["fracs"] = tuple(f for f in cfg["fracs"] if f in want)
    if "reps" in scope:
        try:
            n = [int(x) for x in scope["reps"].split(",")]
        except ValueError:
            n = []
        if not 1 <= len(n) <= 2 or min(n) < 1:
            raise ValueError(f"--reps: {scope['reps']}: want N or N,M, positive integers")
        if len(n) == 2 and not cfg.get("cheap_reps"):
            raise ValueError("--reps N,M: this size repeats every fraction alike; give N")
        cfg["reps"] = n[0]
        if cfg.get("cheap_reps"):
            cfg["cheap_reps"] = (cfg["cheap_reps"][0], n[-1])
    if scope:
        path.write_text("".join(f"{k} {v}\n" for k, v in sorted(scope.items())))
    return scope


def read_planned(out):
    """The patched servers runs into `out` were given (servers.txt)."""
    path = out / "servers.txt"
    return path.read_text().split() if path.exists() else []


def missing_sweep_points(rows, cfg, planned):
    """{'server mode/profile': points planned by cfg but not in rows}, for the
    patched servers `planned` and those with rows."""
    have = {(r["server"], r["mode"], r["profile"], float(r["frac"]), r["rep"], r["threshold"])
            for r in rows if r["phase"] == "sweep"}
    servers = sorted({*planned, *(r["server"] for r in rows if r["phase"] == "sweep")},
                     key=lambda n: (-int(n.split("-")[0]), n))
    missing = {}
    for s in servers:
        for mode in cfg["io_modes"].get(int(s.split("-")[0]), ()):
            for profile in cfg["profiles"]:
                n = sum((s, mode, profile, float(f), str(rep), str(t)) not in have
                        for f in cfg["fracs"] for rep in range(reps_of(cfg, f))
                        for t in cfg["thresholds"])
                if n:
                    missing[f"{s} {mode}/{profile}"] = n
    return missing


def pgbench_uncalibrated(rows, cfg, phases, servers):
    """The pgbench profiles whose random_page_cost the pgbench phase would
    not find for one of `servers` (names): not in rows (calibrated_rpc(), as
    the phase reads it), and no sweep of that profile in this run to
    measure it first (the calibration scans the sweep's table)."""
    if "pgbench" not in phases:
        return []
    swept = set(cfg["profiles"]) if "sweep" in phases else set()
    return [p for p in cfg["pgbench_profiles"] if p not in swept and
            any(calibrated_rpc(rows, s, "buffered", p) is None for s in servers)]


class Plan:
    """The points of a run that runs.csv (a store.Results) does not have yet,
    per phase, in the order the phases measure them."""

    def __init__(self, cfg, res, servers=()):
        self.cfg = cfg
        self.res = res
        self.servers = list(servers)

    def patched(self):
        return [s for s in self.servers if s.variant == "patched"]

    def sweep_groups(self, major):
        """(I/O mode, storage profile) of every sweep of a server's major."""
        for mode in self.cfg["io_modes"].get(major, ()):
            for profile in self.cfg["profiles"]:
                yield mode, profile

    def sweep_passes(self):
        """The fractions in two passes: those up to HEAVY_FRAC first, then the
        rest, whose points cost far more (every page modified, frozen and
        written again before each VACUUM): a run cut short keeps the rows
        that tell thresholds apart."""
        fracs = self.cfg["fracs"]
        light = tuple(f for f in fracs if f <= HEAVY_FRAC)
        heavy = tuple(f for f in fracs if f > HEAVY_FRAC)
        return [p for p in (light, heavy) if p]

    def sweep_key(self, server, mode, profile, frac, rep, threshold):
        return dict(phase="sweep", server=server.name, mode=mode, profile=profile,
                    pages=self.cfg["sweep_pages"], frac=frac, rep=rep, threshold=threshold)

    def sweep_left(self, s, fracs=None):
        cfg = self.cfg
        n = 0
        for mode, profile in self.sweep_groups(s.major):
            for frac in (cfg["fracs"] if fracs is None else fracs):
                for rep in range(reps_of(cfg, frac)):
                    for thr in cfg["thresholds"]:
                        n += not self.res.have(**self.sweep_key(s, mode, profile, frac, rep, thr))
        return n

    def calib_key(self, server, mode, profile, rep=0):
        return dict(phase="calib", server=server.name, mode=mode, profile=profile,
                    pages=self.cfg["sweep_pages"], frac="", rep=rep)

    def calibrated_rpc(self, server, mode, profile):
        """random_page_cost from the calibration in runs.csv, or None."""
        return calibrated_rpc(self.res.rows, server.name, mode, profile)

    def calib_left(self):
        """Calibration points still to measure: both kinds, calib_reps
        times, once per profile (the first server and I/O mode of a profile
        that has none measures it; the others reuse it)."""
        todo = set()
        for s in self.patched():
            for mode, profile in self.sweep_groups(s.major):
                if self.calibrated_rpc(s, mode, profile) is None:
                    todo.add(profile)
        return 2 * self.cfg.get("calib_reps", 1) * len(todo)

    def pgbench_pending(self, s):
        """(profile, rep, frac, threshold) still to measure, in the order
        the pgbench phase measures them."""
        cfg = self.cfg
        return [(profile, rep, frac, thr) for profile in sorted(cfg["pgbench_profiles"])
                for rep in range(cfg["pgbench_reps"])
                for frac in sorted(cfg["pgbench_fracs"])
                for thr in shuffled(cfg["thresholds"], pgbench_order_seed(frac, rep))
                if not self.res.have(phase="pgbench", server=s.name, mode="buffered",
                                     profile=profile, pages=cfg["pgbench_scale"], frac=frac,
                                     rep=rep, threshold=thr)]

    def cached_pending(self):
        cfg = self.cfg
        return [s for s in self.servers
                if not self.res.have(phase="cached", server=s.name, mode="cached", profile="",
                                     pages=cfg["cached_pages"], frac="",
                                     rep=cfg["cached_reps"] - 1, threshold="")]

    def count_points(self, phases):
        """{phase: points still to measure}, calibration counted as sweep."""
        left = {}
        for s in self.patched():
            if "sweep" in phases:
                left["sweep"] = left.get("sweep", 0) + self.sweep_left(s)
            if "pgbench" in phases:
                left["pgbench"] = left.get("pgbench", 0) + len(self.pgbench_pending(s))
        if "sweep" in phases:
            left["sweep"] = left.get("sweep", 0) + self.calib_left()
        if "cached" in phases:
            left["cached"] = len(self.cached_pending()) * self.cfg["cached_reps"]
        return left

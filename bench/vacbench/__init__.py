"""vacskip's benchmark (make bench): VACUUM time against the skip threshold.

Phases, each on throwaway clusters of the bench-flavour servers given with
--server NAME=PREFIX (tools/bench builds them):

  sweep    per patched server one cluster holding every workload's table
           (workloads.py: uniform, the SKIP_PAGES_THRESHOLD benchmark of
           pgsql-hackers, "Maybe we should reduce SKIP_PAGES_THRESHOLD a
           bit?", December 2024; clustered; wide; pgbench).  Per group of
           I/O mode (direct, buffered) and storage profile (profiles.py,
           emulated by bench/slowread.c, LD_PRELOADed): restart with the
           profile's settings and environment, read the autotuner's
           threshold from the settings alone, vacskip.calibrate(); then per
           row (one fraction of one workload) and repetition: freeze the
           table, make the row's change, make the table cold without a
           restart (bench/modules/vacbench_evict + posix_fadvise), time
           VACUUM (VERBOSE) at each fixed vacskip.threshold (1 ... 32), at
           the settings path's threshold ("auto-settings") and at -1 after
           the calibration ("auto"), in a shuffled order; every column of
           one repetition gets the same change, so the ratios are paired.
           Rows whose paired verdicts (stats.py) stay undecided get more
           repetitions, up to a cap.
  cached   the cached all-frozen VACUUM test (pgsql-hackers, "Confine vacuum
           skip logic to lazy_scan_skip", March 2024): plain VACUUM of an
           all-frozen table that is in shared buffers, stock against patched
           (bench/cached_vacuum.py).

Every measurement is appended to OUT/runs.csv as it is taken; a second run
with the same --out skips what the CSV already has (resume).  At the end
OUT/report.md and OUT/*.png are written from the CSV (--report-only redoes
just that).

Modules: plan (sizes, scope, the planned points), profiles (storage
profiles), workloads (the tables a row VACUUMs), harness (clusters,
slowread, cold VACUUMs, calibrate()), phases (the measuring phases), store
(runs.csv), machine (machine facts, load during the run), progress, stats
(pure statistics and the criteria), report, report_verdict and
report_sweep (report.md), plots (PNGs), cli.

Usage, from the repository root:
  python3 -m bench.vacbench [--size smoke|default|full] [--out DIR]
                            --server 18-patched=PREFIX [--server ...]
"""

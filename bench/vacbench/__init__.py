"""vacskip's benchmark (make bench): VACUUM time against the skip threshold.

Phases, each on throwaway clusters of the bench-flavour servers given with
--server NAME=PREFIX (tools/bench builds them):

  sweep    the SKIP_PAGES_THRESHOLD benchmark (pgsql-hackers, "Maybe we
           should reduce SKIP_PAGES_THRESHOLD a bit?", December 2024): a
           table of narrow rows, VACUUM (FREEZE), update a seeded random
           fraction of rows, make reads cold, time VACUUM (VERBOSE) at each
           vacskip.threshold (1 ... 32, and -1 = auto); every threshold of
           one fraction and repetition updates the same rows, so the ratios
           are paired.  Cold reads: direct I/O (debug_io_direct = data, 18
           only) or buffered with the relation's files evicted from the OS
           cache after a restart.  Storage profiles (profiles.py): this disk
           as it is, and "slow": bench/slowread.c (LD_PRELOAD) adds a
           penalty to every read that does not continue the previous read of
           its file.  Each profile gets random_page_cost and I/O concurrency
           settings (postgresql.conf) that describe it; random_page_cost
           comes from a calibration measured at the start.
  cached   the cached all-frozen VACUUM test (pgsql-hackers, "Confine vacuum
           skip logic to lazy_scan_skip", March 2024): plain VACUUM of an
           all-frozen table that is in shared buffers, stock against patched
           (bench/cached_vacuum.py).
  pgbench  pgbench -i, tpcb-like transactions until a fraction of accounts
           is updated, VACUUM pgbench_accounts at each threshold.

Every measurement is appended to OUT/runs.csv as it is taken; a second run
with the same --out skips what the CSV already has (resume).  At the end
OUT/report.md and OUT/*.png are written from the CSV (--report-only redoes
just that).

Modules: plan (sizes, scope, what is left to measure), profiles (storage
profiles), workloads (the tables a phase VACUUMs), harness (clusters,
slowread, cold VACUUMs), phases (the measuring phases), store (runs.csv),
machine (machine facts, load during the run), progress, stats (pure
statistics), report and report_sweep (report.md), plots (PNGs), cli.

Usage, from the repository root:
  python3 -m bench.vacbench [--size smoke|default|full] [--out DIR]
                            --server 18-patched=PREFIX [--server ...]
"""

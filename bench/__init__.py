"""vacskip's benchmarks, run as modules from the repository root:
python3 -m bench.vacbench (make bench), bench.cached_vacuum, bench.vmwalk,
bench.simulate_rate."""

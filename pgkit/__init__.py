"""vacskip's Python kit, shared by the test suite (t/) and the benchmarks
(bench/): PostgreSQL installations and throwaway clusters (server, cluster,
proc), VACUUM and its VERBOSE report (vacuum), and tables with a known
visibility map (tables).

Run from the repository root: pytest finds it through pytest.ini
(pythonpath = .), the benchmarks run as modules (python3 -m bench.vacbench).
"""

from pathlib import Path

TOP = Path(__file__).resolve().parent.parent   # the repository root

"""Interim main job (until the benchmark lands): on a patched PostgreSQL
(make bench uses 18.6) with vacskip preloaded, VACUUM a table whose every
10th page was modified after VACUUM (FREEZE), at threshold 32 (stock) and
at threshold 4, and print how many pages each read.

Usage: bench/demo.py PREFIX [PAGES]"""

import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TOP / "t"))

from pgcluster import (Cluster, Server, install_extension, make_workdir,  # noqa: E402
                       remove_tree, run)
from vacuum_model import make_pattern_table, parse_report, vacuum_verbose  # noqa: E402

EVERY = 10


def main(prefix, pages=10000):
    version = run([Path(prefix) / "bin" / "pg_config", "--version"]).split()[1]
    major = int(version.split(".")[0])
    server = Server(name=f"{major}-patched", prefix=Path(prefix), major=major,
                    variant="patched", tap=False)
    work = make_workdir("vacskip-demo-")
    node = None
    try:
        install_extension(TOP, work / "ext", server.pg_config, [server.pg_config])
        node = Cluster(server, work, {"shared_preload_libraries": "'vacskip'"}).start()
        print(f"PostgreSQL {version} with vacskip; table: {pages} pages, all-frozen, "
              f"then one row updated on every {EVERY}th page "
              f"({len(range(0, pages, EVERY))} pages)")
        results = {}
        with node.connect() as conn:
            for threshold in (32, 4):
                make_pattern_table(conn, pages=pages, every=EVERY)
                conn.execute(f"SET vacskip.threshold = {threshold}")
                results[threshold] = parse_report(vacuum_verbose(conn)).scanned
                print(f"vacskip.threshold = {threshold:2d}: VACUUM scanned "
                      f"{results[threshold]:5d} of {pages} pages")
        print(f"threshold 4 read {results[32] / results[4]:.1f}x fewer pages than 32")
        if not results[4] < results[32]:
            print("unexpected: threshold 4 did not read fewer pages", file=sys.stderr)
            return 1
        return 0
    finally:
        if node is not None:
            node.stop()
        remove_tree(work)

if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2], *map(int, sys.argv[2:3])))

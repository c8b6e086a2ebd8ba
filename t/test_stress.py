"""Randomized VACUUM under concurrent writes and crashes: no corruption.

What one round does and checks: t/stress.py.  Settings (environment):
  VACSKIP_STRESS=long          200 rounds per server instead of 50
  VACSKIP_STRESS_ROUNDS=N      N rounds per server
  VACSKIP_STRESS_BASE_SEED=S   the seed the rounds' seeds are drawn from
                               (printed; default: from the clock)
  VACSKIP_STRESS_SEED=S        replay one round: its choices are those of the
                               round printed with seed=S
Every round prints its choices and seed (pytest -s shows them; a failing
run prints them anyway).
"""

import os
import random
import time

import pytest

from stress import CLUSTER_SETTINGS, Choices, Stress

DEFAULT_ROUNDS, LONG_ROUNDS = 50, 200
CRASH_SHARE = 0.2     # about one round in five ends in an immediate stop


def rounds_wanted():
    if "VACSKIP_STRESS_ROUNDS" in os.environ:
        return int(os.environ["VACSKIP_STRESS_ROUNDS"])
    mode = os.environ.get("VACSKIP_STRESS", "")
    if mode not in ("", "long"):
        raise pytest.UsageError(f"VACSKIP_STRESS={mode!r}: the only mode is 'long'")
    return LONG_ROUNDS if mode == "long" else DEFAULT_ROUNDS


@pytest.mark.patched
def test_randomized_vacuum_never_corrupts(server, make_cluster):
    node = make_cluster(server, CLUSTER_SETTINGS)
    stress = Stress(node, out=lambda s: print(s, flush=True))
    stress.setup()

    if "VACSKIP_STRESS_SEED" in os.environ:
        seeds = [int(os.environ["VACSKIP_STRESS_SEED"])]
        print(f"replaying the round with seed {seeds[0]}")
    else:
        base = int(os.environ.get("VACSKIP_STRESS_BASE_SEED", time.time_ns() % 10**9))
        gen = random.Random(base)
        seeds = [gen.randrange(10**9) for _ in range(rounds_wanted())]
        print(f"{len(seeds)} rounds, VACSKIP_STRESS_BASE_SEED={base}")

    started = time.monotonic()
    for i, seed in enumerate(seeds, 1):
        if not stress.round(i, Choices.draw(seed, server.major, CRASH_SHARE)):
            break       # what follows would repeat the same findings
    totals = stress.totals
    print(f"PostgreSQL {server.name}: {totals.summary()} "
          f"in {time.monotonic() - started:.0f} s")

    assert not totals.findings, "\n".join(totals.findings)
    assert totals.rounds == len(seeds)
    # the checks were not vacuous
    assert totals.manual_vacuums >= totals.rounds
    assert totals.tuples_checked > 0 and totals.rows_checked > 0
    if len(seeds) >= DEFAULT_ROUNDS:
        assert totals.crashes > 0, "no round crashed the server"
        assert totals.autovacuums > 0, "autovacuum never processed the tables"
        assert totals.multixact_tuples > 0, "the workload made no multixacts"
        assert totals.relfrozenxid_advances > 0, "relfrozenxid never advanced"

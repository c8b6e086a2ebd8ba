"""vacskip.simulate() and the autotuner against real VACUUMs.

simulate() must predict, from the live visibility map, exactly what VACUUM
(VERBOSE) run right after reads: compared on randomized maps, every
threshold, both majors.  The autotuner must reach VACUUM through the hook,
per tablespace, and read all-visible runs when relfrozenxid gets old.
"""

import os
import random

import pytest

from pgkit.tables import make_mixed_table, make_state_table, visibility_map
from pgkit.vacuum import parse_report, relfrozenxid, vacuum_verbose
from vacuum_model import predict

THRESHOLDS = (1, 2, 3, 4, 8, 16, 32)
PATTERNS = int(os.environ.get("VACSKIP_SIM_PATTERNS", "50"))


def random_states(rng):
    """make_state_table()'s letters for a map that mixes all-frozen,
    all-visible-unfrozen and not-all-visible pages in runs of random length."""
    pages = rng.choice((rng.randint(1, 40), rng.randint(40, 400)))
    states, p = [], 0
    while p < pages:
        state = rng.choices("fvn", weights=(6, 2, 2))[0]
        run = rng.choice((rng.randint(1, 4), rng.randint(1, 40)))
        states.extend([state] * min(run, pages - p))
        p += run
    return "".join(states)


def build_random_table(conn, holder, rng, name="t"):
    """A table of random_states().  `holder` (another connection) takes a
    snapshot before the last pages are modified, so VACUUM cannot make
    those pages all-visible: the map stays the same from one VACUUM to the
    next."""
    states = random_states(rng)
    holder.execute("COMMIT")       # the previous table's snapshot

    def hold_snapshot():
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT 1")

    # the VACUUM that makes the 'v' pages all-visible reads every page
    make_state_table(conn, name, states, vacuum_threshold=1000000,
                     before_last_update=hold_snapshot)
    return len(states)


def simulate(conn, thresholds, aggressive=False, name="t"):
    rows = conn.execute("SELECT threshold, pages_total, pages_scanned, pages_read_through, "
                        "io_runs, relfrozenxid_can_advance "
                        "FROM vacskip.simulate(%s, %s, %s)",
                        (name, list(thresholds), aggressive)).fetchall()
    return {r[0]: r[1:] for r in rows}


@pytest.mark.patched
def test_simulate_matches_vacuum(node):
    seed = int(os.environ.get("VACSKIP_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (replay: VACSKIP_SEED={seed})")
    rng = random.Random(seed)
    mismatches, compared, with_unfrozen = [], 0, 0
    with node.connect() as conn, node.connect() as holder:
        conn.execute("CREATE EXTENSION vacskip")
        conn.execute("CREATE EXTENSION pg_visibility")
        holder.autocommit = True
        for pattern in range(PATTERNS):
            pages = build_random_table(conn, holder, rng)
            one_pass = simulate(conn, THRESHOLDS)
            for t in rng.sample(THRESHOLDS, len(THRESHOLDS)):
                vm = visibility_map(conn)
                with_unfrozen += any(v and not f for v, f in vm)
                sim = simulate(conn, [t])[t]
                model = predict(vm, t)
                conn.execute(f"SET vacskip.threshold = {t}")
                before = relfrozenxid(conn)
                report = parse_report(vacuum_verbose(conn))
                after = relfrozenxid(conn)
                compared += 1
                total, scanned, read_through, io_runs, can_advance = sim
                problems = []
                if (total, scanned) != (pages, report.scanned):
                    problems.append(f"scanned: simulate {scanned}/{total}, "
                                    f"VACUUM {report.scanned}/{pages}")
                if scanned != model.scanned or read_through != model.short_runs:
                    problems.append(f"model says {model}, simulate {sim}")
                if t != 32 and read_through != report.short_runs:
                    problems.append(f"read through: simulate {read_through}, "
                                    f"VACUUM {report.short_runs}")
                if not can_advance and after != before:
                    problems.append("relfrozenxid advanced though a run with "
                                    "all-visible pages was skipped")
                if t in one_pass and one_pass[t] != sim and vm == visibility_map(conn):
                    problems.append(f"one pass {one_pass[t]} != single {sim}")
                if problems:
                    mismatches.append(f"pattern {pattern} ({pages} pages) threshold {t}: "
                                      + "; ".join(problems))
            # aggressive last: FREEZE changes the map
            t = rng.choice(THRESHOLDS)
            sim = simulate(conn, [t], aggressive=True)[t]
            conn.execute(f"SET vacskip.threshold = {t}")
            report = parse_report(vacuum_verbose(conn, options="VERBOSE, FREEZE"))
            compared += 1
            if sim[1] != report.scanned or not sim[4]:
                mismatches.append(f"pattern {pattern} aggressive threshold {t}: "
                                  f"simulate {sim}, VACUUM scanned {report.scanned}")
            conn.execute("RESET vacskip.threshold")
    print(f"{compared} VACUUMs compared on {PATTERNS} maps, "
          f"{with_unfrozen} with all-visible unfrozen pages, {len(mismatches)} mismatches")
    assert not mismatches, "\n".join(mismatches[:20])
    assert compared == PATTERNS * (len(THRESHOLDS) + 1)
    assert with_unfrozen > compared // 4, "the maps should often hold unfrozen pages"


def fast_threshold(conn, name):
    """The autotuned threshold of `name` as explain_threshold() reports it,
    with storage described as fast: below stock's 32 (what it is exactly is
    the model's arithmetic, which t/unit checks)."""
    t = conn.execute("SELECT all_frozen_threshold FROM vacskip.explain_threshold(%s)",
                     (name,)).fetchone()[0]
    assert t < 32, f"random_page_cost 1.1 should lower the threshold, got {t}"
    return t


@pytest.mark.patched
def test_autotuner_uses_tablespace_settings(node):
    """random_page_cost 1.1 on one tablespace: VACUUM of a table there uses
    the autotuned threshold, the one explain_threshold() and
    effective_threshold() report; a table in pg_default stays stock."""
    spc = node.base / "fast_spc"
    spc.mkdir()
    os.chown(spc, node.datadir.stat().st_uid, node.datadir.stat().st_gid)
    with node.connect() as conn:
        conn.execute(f"CREATE TABLESPACE fast LOCATION '{spc}'")
        conn.execute("ALTER TABLESPACE fast SET (random_page_cost = 1.1)")
        conn.execute("CREATE EXTENSION vacskip")
        for name, tablespace in (("t_fast", "fast"), ("t_default", None)):
            make_mixed_table(conn, name=name, pages=300)
            if tablespace:
                conn.execute(f"ALTER TABLE {name} SET TABLESPACE {tablespace}")
            expected = fast_threshold(conn, name) if tablespace else 32
            vm = visibility_map(conn, name)
            assert conn.execute("SELECT vacskip.effective_threshold(%s)",
                                (name,)).fetchone()[0] == expected
            row = conn.execute("SELECT random_page_cost_source, all_frozen_threshold "
                               "FROM vacskip.explain_threshold(%s)", (name,)).fetchone()
            assert row == ("tablespace" if tablespace else "global", expected)
            report = parse_report(vacuum_verbose(conn, name))
            assert report.scanned == predict(vm, expected).scanned
            assert report.thresholds == (None if expected == 32 else (expected, expected))


def burn_xids(conn, n):
    for _ in range(n):
        conn.execute("SELECT pg_current_xact_id()")


@pytest.mark.patched
def test_auto_mode_reads_all_visible_runs_when_relfrozenxid_is_old(node):
    """With storage described as fast (a threshold below 32), relfrozenxid past half
    of vacuum_freeze_table_age makes the autotuner read runs with
    all-visible, unfrozen pages: relfrozenxid advances, where threshold 1
    (and auto while relfrozenxid is young) leaves it behind."""
    with node.connect() as conn:
        conn.execute("CREATE EXTENSION vacskip")
        conn.execute("SET random_page_cost = 1.1")
        conn.execute("SET vacuum_freeze_table_age = 1000")

        def vacuum_advances(name, threshold):
            conn.execute(f"SET vacskip.threshold = {threshold}")
            # freeze everything read, so that relfrozenxid can move past the
            # XIDs on the all-visible pages whenever none of them is skipped
            conn.execute("SET vacuum_freeze_min_age = 0")
            vm = visibility_map(conn, name)
            assert any(v and not f for v, f in vm), "want all-visible, unfrozen pages"
            row = conn.execute("SELECT read_through_all_visible, all_visible_threshold "
                               "FROM vacskip.explain_threshold(%s)", (name,)).fetchone()
            before = relfrozenxid(conn, name)
            text = vacuum_verbose(conn, name)
            assert "aggressively" not in text
            conn.execute("RESET vacuum_freeze_min_age")
            return row, parse_report(text), relfrozenxid(conn, name) != before

        # young: auto skips all-visible runs as long as its threshold
        make_mixed_table(conn, name="young", pages=300)
        fast = fast_threshold(conn, "young")
        row, report, advanced = vacuum_advances("young", -1)
        assert row == (False, fast) and report.thresholds == (fast, fast) and not advanced

        # old: past 500 of 1000, not yet aggressive (1000)
        make_mixed_table(conn, name="old_fixed", pages=300)
        make_mixed_table(conn, name="old_auto", pages=300)
        age = conn.execute("SELECT max(age(relfrozenxid)) FROM pg_class "
                           "WHERE relname IN ('old_fixed', 'old_auto')").fetchone()[0]
        burn_xids(conn, 600 - age)
        row, report, advanced = vacuum_advances("old_fixed", 1)
        assert report.thresholds == (1, 1) and not advanced
        row, report, advanced = vacuum_advances("old_auto", -1)
        assert row == (True, 0xFFFFFFFF)
        assert report.thresholds == (fast, 0xFFFFFFFF)
        assert advanced


@pytest.mark.patched
def test_other_sessions_temp_table_refused(node):
    with node.connect() as conn, node.connect() as other:
        conn.execute("CREATE EXTENSION vacskip")
        other.execute("CREATE TEMP TABLE mine (id int)")
        name = other.execute("SELECT 'mine'::regclass::oid").fetchone()[0]
        import psycopg
        for call in ("effective_threshold(%s::oid::regclass)",
                     "explain_threshold(%s::oid::regclass)",
                     "simulate(%s::oid::regclass)"):
            with pytest.raises(psycopg.Error) as err:
                conn.execute(f"SELECT vacskip.{call}", (name,))
            assert err.value.sqlstate == "0A000"
            assert "temporary tables of other sessions" in str(err.value)
        # its own session may ask
        assert other.execute("SELECT count(*) FROM vacskip.simulate('mine')").fetchone()[0] == 6

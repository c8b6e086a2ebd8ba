--
-- vacskip's SQL functions: what they return, every bad input, privileges.
-- The same output on servers with and without the hook: where the answer
-- differs, the query states the expected value for each.
--
-- On a server without the hook every SET of vacskip.threshold warns.
SET client_min_messages = error;

-- an error's SQLSTATE and message, as one value (calibrate.sql, the last
-- test, uses it too and drops it)
CREATE FUNCTION public.vs_error_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'no error';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- 50 pages of 4 rows, all frozen, then pages 10 and 20 modified (HOT):
-- runs of 10, 9 and 28 all-frozen pages before pages 10, 20 and 49 (the last
-- page is always read).
CREATE TABLE vs_t (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO vs_t SELECT g, repeat('x', 900) FROM generate_series(1, 200) g;
SELECT pg_relation_size('vs_t') / current_setting('block_size')::int AS pages;
VACUUM (FREEZE) vs_t;
UPDATE vs_t SET id = -id WHERE ctid IN ('(10,1)', '(20,1)');

--
-- status()
--
-- (hook_available differs between servers: t/test_extension.py compares it
-- with how each server was built)
SELECT threshold_setting, mode,
       server_version_num = current_setting('server_version_num')::int AS version_agrees
FROM vacskip.status();
SET vacskip.threshold = 4;
SELECT threshold_setting, mode FROM vacskip.status();
RESET vacskip.threshold;

--
-- effective_threshold(): 32 with PostgreSQL's defaults, on every server
--
SELECT vacskip.effective_threshold('vs_t');
-- storage described as fast: below 32 where the hook is (the model's
-- arithmetic is t/unit's), 32 (stock) where it is not; the same as
-- explain_threshold() says
SET random_page_cost = 1.1;
SELECT CASE WHEN vacskip.hook_active() THEN t < 32 ELSE t = 32 END AS as_expected,
       t = (SELECT all_frozen_threshold FROM vacskip.explain_threshold('vs_t')) AS agrees
FROM vacskip.effective_threshold('vs_t') t;
SET vacskip.threshold = 4;
SELECT vacskip.effective_threshold('vs_t') =
       CASE WHEN vacskip.hook_active() THEN 4 ELSE 32 END AS as_expected;
RESET vacskip.threshold;
RESET random_page_cost;
-- a materialized view is vacuumed like a table
CREATE MATERIALIZED VIEW vs_mv AS SELECT * FROM vs_t;
SELECT vacskip.effective_threshold('vs_mv');

--
-- explain_threshold(): inputs, their sources, the choice
--
-- (no calibration of pg_default: the costs come from the settings, in
-- seq_page_cost units: a page after a skip costs random_page_cost 4 read as
-- documented, 40 sequential reads uncached; each page read on 1.  costs:
-- reading at 1, 2, 4, 8, 16, 32 on this map, 3 / 3 / 3 / 3 / 22 / 50 pages
-- in 3 / 3 / 3 / 3 / 2 / 1 runs; map_runs: the 3 runs of pages to read,
-- what threshold 1 reads)
SELECT relation, tablespace, random_page_cost, random_page_cost_source,
       seq_page_cost, seq_page_cost_source, effective_io_concurrency_source,
       maintenance_io_concurrency_source, calibration, cost_source, cost_unit,
       settings_skip_cost, map_density, map_runs, costs, read_through_all_visible,
       mode, all_frozen_threshold, all_visible_threshold
FROM vacskip.explain_threshold('vs_t');
-- version-dependent inputs: 18 has asynchronous I/O and io_combine_limit
SELECT (io_method IS NOT NULL) = (current_setting('server_version_num')::int >= 180000)
           AS io_method_iff_18,
       (io_combine_limit IS NOT NULL) = (current_setting('server_version_num')::int >= 180000)
           AS io_combine_limit_iff_18,
       effective_io_concurrency = current_setting('effective_io_concurrency')::int AS eic,
       maintenance_io_concurrency = current_setting('maintenance_io_concurrency')::int AS mic,
       (io_workers IS NOT NULL) = (current_setting('server_version_num')::int >= 180000)
           AS io_workers_iff_18,
       direct_io = (current_setting('server_version_num')::int >= 160000 AND
                    current_setting('debug_io_direct') LIKE '%data%') AS direct_io,
       -- 18's read stream keeps maintenance_io_concurrency reads in flight,
       -- performed by io_workers processes under io_method worker; 15 reads
       -- one block at a time
       concurrency_used = CASE WHEN current_setting('server_version_num')::int < 180000
                               OR io_method = 'sync' THEN 1
                               WHEN io_method = 'worker'
                               THEN least(maintenance_io_concurrency, io_workers)
                               ELSE maintenance_io_concurrency END AS concurrency,
       tuples_per_page = (SELECT reltuples / relpages FROM pg_class
                          WHERE oid = 'vs_t'::regclass) AS density,
       relfrozenxid_age >= 0 AND relfrozenxid_age = age((SELECT relfrozenxid FROM pg_class
                                                         WHERE oid = 'vs_t'::regclass))
           AS xid_age,
       freeze_table_age = current_setting('vacuum_freeze_table_age')::bigint AS table_age
FROM vacskip.explain_threshold('vs_t');
-- per-tablespace settings win, and say so
ALTER TABLESPACE pg_default SET (random_page_cost = 1.1, maintenance_io_concurrency = 4);
SELECT random_page_cost, random_page_cost_source, seq_page_cost_source,
       maintenance_io_concurrency, maintenance_io_concurrency_source,
       -- the settings give one skip cost whatever the run; the threshold
       -- is the shortest run that costs as much read through, L + 1 (the
       -- model's arithmetic is t/unit's), 32 where there is no hook
       CASE WHEN NOT vacskip.hook_active() THEN all_frozen_threshold = 32
            ELSE all_frozen_threshold + 1 >= settings_skip_cost - 1e-9 AND
                 (all_frozen_threshold = 1 OR all_frozen_threshold < settings_skip_cost - 1e-9)
       END AS as_expected,
       settings_skip_cost < 33 AS skip_below_stock,
       reason LIKE CASE WHEN vacskip.hook_active() THEN 'autotuned from the settings: %'
                        ELSE 'this server has no skip threshold hook%' END AS reason_ok
FROM vacskip.explain_threshold('vs_t');
ALTER TABLESPACE pg_default RESET (random_page_cost, maintenance_io_concurrency);
SET vacskip.threshold = 7;
SELECT mode, all_frozen_threshold = CASE WHEN vacskip.hook_active() THEN 7 ELSE 32 END
           AS as_expected,
       reason LIKE CASE WHEN vacskip.hook_active() THEN 'fixed by vacskip.threshold = 7'
                        ELSE 'this server has no skip threshold hook%' END AS reason_ok
FROM vacskip.explain_threshold('vs_t');
RESET vacskip.threshold;

--
-- simulate(): runs of 10, 9 and 28 pages; default thresholds 1..32
--
-- (est_cost, in the model's unit, here seq_page_cost: a run's first page
-- as after a skip, 40, the others as read through, 1)
SELECT * FROM vacskip.simulate('vs_t');
-- any thresholds, in the order given; 10 skips the run of 10 only
SELECT threshold, pages_scanned, pages_read_through, io_runs
FROM vacskip.simulate('vs_t', '{10, 29, 1000000, 10}');
-- aggressive: all pages here are frozen, so the same
SELECT threshold, pages_scanned, relfrozenxid_can_advance
FROM vacskip.simulate('vs_t', '{1,32}', aggressive => true);
-- an empty table: nothing to read
CREATE TABLE vs_empty (id int);
SELECT * FROM vacskip.simulate('vs_empty', '{1,32}');
-- never vacuumed: no visibility map, every page is read
CREATE TABLE vs_new AS SELECT g FROM generate_series(1, 2000) g;
SELECT threshold, pages_total = pages_scanned AS all_read, io_runs
FROM vacskip.simulate('vs_new', '{1}');
SELECT threshold, pages_total > 0 AND pages_scanned = pages_total AS all_read
FROM vacskip.simulate('vs_mv', '{1}');

--
-- NULLs: the functions are strict
--
SELECT vacskip.effective_threshold(NULL);
SELECT count(*), bool_and(relation IS NULL AND reason IS NULL) AS all_null
FROM vacskip.explain_threshold(NULL);
SELECT count(*) FROM vacskip.simulate(NULL);
SELECT count(*) FROM vacskip.simulate('vs_t', NULL);
SELECT count(*) FROM vacskip.simulate('vs_t', '{1}', NULL);

--
-- bad thresholds
--
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{1,NULL}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{0}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{-1}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{1000001}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{{1,2},{3,4}}')$$);
SELECT vs_error_of($$SELECT * FROM vacskip.simulate('vs_t', '{2147483648}')$$);
SELECT vs_error_of(format($$SELECT * FROM vacskip.simulate('vs_t', %L)$$,
                               array_fill(4, ARRAY[1001])));
-- 1000 is the limit
SELECT count(*) FROM vacskip.simulate('vs_t', array_fill(4, ARRAY[1000]));
-- a non-default lower bound is just a list
SELECT threshold, pages_scanned FROM vacskip.simulate('vs_t', '[5:6]={1,32}');

--
-- relations the functions do not answer for
--
CREATE VIEW vs_view AS SELECT 1 AS x;
CREATE INDEX vs_t_id ON vs_t (id);
CREATE SEQUENCE vs_seq;
CREATE TYPE vs_type AS (a int);
CREATE TABLE vs_parted (id int) PARTITION BY RANGE (id);
CREATE TABLE vs_part1 PARTITION OF vs_parted FOR VALUES FROM (0) TO (10);
CREATE TABLE vs_dropped (id int);
SELECT 'vs_dropped'::regclass::oid AS dropped_oid \gset
DROP TABLE vs_dropped;
SELECT reltoastrelid::regclass AS toast FROM pg_class WHERE oid = 'vs_t'::regclass \gset
SELECT f, r, vs_error_of(format('SELECT vacskip.%s(%L::regclass)', f, r))
FROM unnest(ARRAY['effective_threshold', 'explain_threshold', 'simulate']) f,
     unnest(ARRAY['vs_view', 'vs_t_id', 'vs_seq', 'vs_type', 'vs_parted']) r
ORDER BY f, r;
-- a TOAST table is vacuumed with its table (its name has its OID: masked)
SELECT f, regexp_replace(vs_error_of(format('SELECT vacskip.%s(%L::regclass)', f, :'toast')),
                         'pg_toast_\d+', 'pg_toast_N')
FROM unnest(ARRAY['effective_threshold', 'explain_threshold', 'simulate']) f;
SELECT f, vs_error_of(format('SELECT vacskip.%s(%s::regclass)', f, :dropped_oid))
           IN ('42P01: relation with OID ' || :dropped_oid || ' does not exist') AS undefined
FROM unnest(ARRAY['effective_threshold', 'explain_threshold', 'simulate']) f;
SELECT vs_error_of('SELECT vacskip.simulate(0)');
-- a partition is a table
SELECT threshold, pages_scanned FROM vacskip.simulate('vs_part1', '{1}');

--
-- privileges: superusers and members of pg_stat_scan_tables, with nothing
-- granted beyond what CREATE EXTENSION did (both roles may read vs_t)
--
CREATE ROLE vs_nobody;
CREATE ROLE vs_monitor IN ROLE pg_stat_scan_tables;
GRANT SELECT ON vs_t TO vs_nobody, vs_monitor;
SET ROLE vs_nobody;
SELECT f, vs_error_of(format('SELECT vacskip.%s', f))
FROM unnest(ARRAY['status()', 'hook_active()', 'effective_threshold(''vs_t'')',
                  'explain_threshold(''vs_t'')', 'simulate(''vs_t'')']) f;
SET ROLE vs_monitor;
SELECT f, vs_error_of(format('SELECT count(*) FROM vacskip.%s', f))
FROM unnest(ARRAY['status()', 'hook_active()', 'effective_threshold(''vs_t'')',
                  'explain_threshold(''vs_t'')', 'simulate(''vs_t'')']) f;
RESET ROLE;
REVOKE SELECT ON vs_t FROM vs_nobody, vs_monitor;
DROP ROLE vs_nobody;
DROP ROLE vs_monitor;

DROP TABLE vs_t, vs_empty, vs_new, vs_parted CASCADE;
DROP VIEW vs_view;
DROP SEQUENCE vs_seq;
DROP TYPE vs_type;
RESET client_min_messages;

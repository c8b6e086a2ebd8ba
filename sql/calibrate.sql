--
-- calibrate() and forget_calibration(): bad input, privileges, and one
-- short calibration whose figures the autotuner then uses.
--
SET client_min_messages = error;

-- these should all fail
SELECT q, vs_error_of(q)
FROM unnest(ARRAY[
    $$SELECT vacskip.calibrate('no_such_tablespace', 1)$$,
    $$SELECT vacskip.calibrate('pg_global', 1)$$,
    $$SELECT vacskip.calibrate('pg_default', 0)$$,
    $$SELECT vacskip.calibrate('pg_default', -1)$$,
    $$SELECT vacskip.calibrate('pg_default', 'NaN')$$,
    $$SELECT vacskip.calibrate('pg_default', 'Infinity')$$,
    $$SELECT vacskip.calibrate('pg_default', 3601)$$,
    $$SELECT vacskip.forget_calibration('no_such_tablespace')$$]) q;
-- strict: NULL in, NULL out
SELECT vacskip.calibrate(NULL, 1) IS NULL AS null_tablespace,
       vacskip.calibrate('pg_default', NULL) IS NULL AS null_seconds,
       vacskip.forget_calibration(NULL) IS NULL AS null_forget;

-- a declaration from another version of the module (six columns fewer):
-- refused before anything is measured
CREATE FUNCTION vs_other_calibrate(tablespace name, seconds float8,
    OUT tablespace name, OUT measured_at timestamptz, OUT seconds float8,
    OUT rounds integer, OUT io_path text, OUT densities float8[],
    OUT read_us float8[], OUT start_read_us float8[], OUT read_noise float8[],
    OUT start_read_noise float8[], OUT cpu_page_us float8, OUT cpu_tuple_us float8)
RETURNS record AS '$libdir/vacskip', 'vacskip_calibrate' LANGUAGE C STRICT;
SELECT vs_error_of($$SELECT vs_other_calibrate('pg_default', 1)$$);
DROP FUNCTION vs_other_calibrate(name, float8);
-- and explain_threshold()'s alike
CREATE FUNCTION vs_other_explain(rel regclass, OUT relation regclass, OUT tablespace name)
RETURNS record AS '$libdir/vacskip', 'vacskip_explain_threshold' LANGUAGE C STRICT;
SELECT vs_error_of($$SELECT vs_other_explain('pg_class')$$);
DROP FUNCTION vs_other_explain(regclass);

-- superusers only: not granted to anyone, and refused even where granted
CREATE ROLE vs_calib IN ROLE pg_stat_scan_tables;
CREATE VIEW vs_calib_calls AS
SELECT q FROM unnest(ARRAY[$$SELECT vacskip.calibrate('pg_default', 1)$$,
                           $$SELECT vacskip.forget_calibration()$$]) q;
GRANT SELECT ON vs_calib_calls TO vs_calib;
SET ROLE vs_calib;
SELECT q, vs_error_of(q) FROM vs_calib_calls;
RESET ROLE;
GRANT EXECUTE ON FUNCTION vacskip.calibrate(name, float8),
                          vacskip.forget_calibration(name) TO vs_calib;
SET ROLE vs_calib;
SELECT q, vs_error_of(q) FROM vs_calib_calls;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION vacskip.calibrate(name, float8),
                           vacskip.forget_calibration(name) FROM vs_calib;
DROP VIEW vs_calib_calls;
DROP ROLE vs_calib;

-- no calibration yet: forgetting one says so
SELECT vacskip.forget_calibration();

-- a short calibration: what it reports, and what explain_threshold() then
-- shows for a table in that tablespace
CREATE TABLE vs_c (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO vs_c SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g;
VACUUM vs_c;
CREATE TEMP TABLE vs_before AS SELECT clock_timestamp() AS t;
CREATE TEMP TABLE vs_measured AS SELECT * FROM vacskip.calibrate(seconds => 0.5);
SELECT tablespace, rounds >= 1 AS measured, seconds > 0 AS took_time,
       measured_at BETWEEN (SELECT t FROM vs_before) AND clock_timestamp() AS when_ok,
       -- buffered reads name the kernel's readahead where the device shows it
       io_path ~ ('^(direct reads|buffered reads( \(kernel readahead \d+ kB\))?), ' ||
                  CASE WHEN current_setting('server_version_num')::int >= 180000
                       THEN 'io_method .*: \d+ in flight$'
                       ELSE 'one at a time$' END) AS path_ok,
       -- 1 %, 1/57, then where a scattered map's mean skippable run is 32 .. 1
       (SELECT array_agg(round(1 / d::numeric, 9)::float8) FROM unnest(densities) d)
         AS one_in, array_dims(read_us) AS read_dims,
       (SELECT bool_and(r > 0) FROM unnest(read_us) r) AS reads_ok,
       -- buffered: a file's first pages timed apart; direct: one figure
       array_dims(start_read_us) AS start_dims,
       (SELECT bool_and(r > 0) FROM unnest(start_read_us) r) AS start_ok,
       (start_read_us = read_us) = (io_path LIKE 'direct reads%') AS parts_ok,
       cpu_page_us >= 0 AND cpu_tuple_us >= 0 AS cpu_ok,
       -- each density's noise; it needs two rounds to be measured
       array_length(read_noise, 1) = 8 AND array_length(start_read_noise, 1) = 8 AND
         (SELECT bool_and(n >= 0 AND (n = 0) = (rounds = 1))
          FROM unnest(read_noise || start_read_noise) n) AS noise_ok,
       -- each round's figures, by density, threshold and round
       array_dims(round_read_us) = format('[1:8][1:6][1:%s]', rounds) AND
         array_dims(round_start_read_us) = array_dims(round_read_us) AND
         (SELECT bool_and(r > 0) FROM unnest(round_read_us || round_start_read_us) r) AND
         (round_start_read_us = round_read_us) = (io_path LIKE 'direct reads%')
         AS rounds_ok,
       -- the device's read requests alike, where it counts them
       round_requests IS NULL AND round_start_requests IS NULL OR
         array_dims(round_requests) = array_dims(round_read_us) AND
         array_dims(round_start_requests) = array_dims(round_read_us) AND
         (SELECT bool_and(r IS NOT NULL AND r >= 0)
          FROM unnest(round_requests || round_start_requests) r) AND
         (round_start_requests = round_requests) = (io_path LIKE 'direct reads%')
         AS requests_ok,
       -- each pattern's share of its time on a CPU, per round, and the
       -- median over the rounds
       array_dims(round_cpu_share) = array_dims(round_read_us) AND
         (SELECT bool_and(x BETWEEN 0 AND 1) FROM unnest(round_cpu_share) x) AND
         array_dims(read_cpu_share) = '[1:8][1:6]' AND
         (SELECT bool_and(abs(read_cpu_share[d][t] -
                              (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x)
                               FROM unnest(round_cpu_share[d:d][t:t][1:rounds]) x)) < 1e-12)
          FROM generate_series(1, 8) d, generate_series(1, 6) t) AS cpu_share_ok
FROM vs_measured;
-- after a plain VACUUM every page is all-visible: only the last page must
-- be read; with the hook the threshold is the cheapest of the priced ones
-- (a tie keeps the larger), without it stock's
SELECT calibration LIKE 'measured % with %' AS calibrated, cost_source, cost_unit,
       map_density = 1.0 / (SELECT relpages FROM pg_class WHERE oid = 'vs_c'::regclass)
         AS last_page_only,
       array_length(costs, 1) AS costs,
       all_frozen_threshold =
         CASE WHEN vacskip.hook_active()
              THEN (SELECT g FROM unnest(costs, ARRAY[1, 2, 4, 8, 16, 32]) AS u(c, g)
                    ORDER BY c, g DESC LIMIT 1)
              ELSE 32 END AS threshold_ok,
       reason LIKE CASE WHEN vacskip.hook_active()
                        THEN 'autotuned from the storage measured by vacskip.calibrate()%'
                        ELSE 'this server has no skip threshold hook%' END AS reason_ok
FROM vacskip.explain_threshold('vs_c');
-- VACUUM's cost-based delay (vacuum_cost_delay above 0, as autovacuum's 2
-- ms by default): each page VACUUM reads through adds vacuum_cost_page_miss
-- to its balance for reading it in and vacuum_cost_page_hit for the free
-- space map's page it records the page's free space in, and each point of
-- that sleeps vacuum_cost_delay / vacuum_cost_limit; calibrated, every page
-- a threshold reads through costs that much more.  Where VACUUM's reads go
-- on while it sleeps (18, io_method worker or io_uring), a threshold costs
-- instead its work on the pages it reads through (the calibration's
-- cpu_page_us + cpu_tuple_us per tuple), its reading (its cost without the
-- delay, less that work) and its sleeping (that sleep for every page read
-- through, and for every page it must read vacuum_cost_page_dirty points
-- more, the page dirtied), less what its naps hide of its waiting (the
-- reading less its share on a CPU, explain_threshold()'s cpu_shares): each
-- nap of vacuum_cost_delay at least, sleep / vacuum_cost_delay of them,
-- hides maintenance_io_concurrency reads at most, a read taking the
-- waiting over its reads, io_runs + pages_scanned / io_combine_limit at
-- most; in all no more than the sleep or the waiting.
-- explain_threshold() gives a manual VACUUM's in this session.
CREATE TABLE vs_d (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO vs_d SELECT g, repeat('x', 900) FROM generate_series(1, 4000) g;
VACUUM (FREEZE) vs_d;
UPDATE vs_d SET id = -id WHERE ctid = ANY (ARRAY(
  SELECT format('(%s,1)', p)::tid FROM generate_series(0, 999, 10) p));
CREATE TEMP TABLE vs_nodelay AS
  SELECT costs, cost_delay_per_page FROM vacskip.explain_threshold('vs_d');
-- Each threshold's cost, from the one without the delay (its work, the
-- calibration's cpu_page_us + cpu_tuple_us per tuple on the pages read
-- through, and its reading): priced, and whether the naps hide all the
-- sleep or the reading covers at every threshold (the longer of the two;
-- where the reads do not go on while VACUUM sleeps, nothing to hide).
CREATE TEMP VIEW vs_delayed AS
SELECT n.cost_delay_per_page AS off, e.cost_delay_per_page AS at_delay,
       sum(s.pages_read_through) > 0 AND
       bool_and(abs(u.ce - CASE WHEN e.io_method IN ('worker', 'io_uring')
                                THEN w.work + r.reading + z.sleep - h.hidden
                                ELSE u.cn + s.pages_read_through * e.cost_delay_per_page END)
                <= 1e-9 * u.ce) AS priced,
       e.io_method IS NULL OR e.io_method NOT IN ('worker', 'io_uring') OR
       bool_and(abs(u.ce - (w.work + greatest(r.reading, z.sleep + r.reading * u.cpu)))
                <= 1e-9 * u.ce) AS naps_hide_all
FROM vacskip.explain_threshold('vs_d') e, vs_nodelay n,
     unnest(e.costs, n.costs, e.cpu_shares, ARRAY[1, 2, 4, 8, 16, 32]) AS u(ce, cn, cpu, g)
     JOIN vacskip.simulate('vs_d') s ON s.threshold = u.g,
     LATERAL (SELECT s.pages_read_through *
                     (m.cpu_page_us + m.cpu_tuple_us * e.tuples_per_page) AS work
              FROM vs_measured m) w,
     LATERAL (SELECT current_setting('vacuum_cost_page_miss')::float8 AS miss,
                     current_setting('vacuum_cost_page_hit')::float8 AS hit,
                     current_setting('vacuum_cost_page_dirty')::float8 AS dirty) p,
     LATERAL (SELECT u.cn - w.work AS reading) r,
     LATERAL (SELECT (s.pages_scanned - s.pages_read_through) * e.cost_delay_per_page *
                       (p.miss + p.hit + p.dirty) / (p.miss + p.hit) +
                     s.pages_read_through * e.cost_delay_per_page AS sleep) z,
     LATERAL (SELECT r.reading * (1 - u.cpu) AS waiting) q,
     LATERAL (SELECT least(z.sleep, q.waiting,
                           z.sleep / (1000 * (SELECT setting::float8 FROM pg_settings
                                              WHERE name = 'vacuum_cost_delay')) *
                           current_setting('maintenance_io_concurrency')::float8 *
                           q.waiting / (s.io_runs + s.pages_scanned /
                             e.io_combine_limit::float8)) AS hidden) h
GROUP BY n.cost_delay_per_page, e.cost_delay_per_page, e.io_method;
-- 16 reads issued ahead (18's default): at autovacuum's delay the naps'
-- reads outnumber any threshold's, and the naps hide all the sleep or the
-- waiting covers: the longer of the reading and the sleep with the
-- reading's time on a CPU
SET vacuum_cost_delay = 2;
SELECT off, at_delay, priced, naps_hide_all FROM vs_delayed
WHERE current_setting('server_version_num')::int < 180000
   OR current_setting('maintenance_io_concurrency')::int = 16;
-- three issued ahead (three performed at once by the I/O workers, as with
-- 16: the calibration still holds): each nap hides three reads at most,
-- less than the waiting its sleep could cover where the pages to read lie
-- apart (18); before 18 the sleep adds to the reading
SET maintenance_io_concurrency = 3;
SELECT off, at_delay, priced,
       naps_hide_all = (current_setting('server_version_num')::int < 180000) AS as_expected
FROM vs_delayed;
RESET maintenance_io_concurrency;
SET vacuum_cost_limit = 400;
SELECT cost_delay_per_page FROM vacskip.explain_threshold('vs_d');
SET vacuum_cost_page_miss = 10;
SELECT cost_delay_per_page FROM vacskip.explain_threshold('vs_d');
SET vacuum_cost_page_hit = 0;
SELECT cost_delay_per_page FROM vacskip.explain_threshold('vs_d');
RESET vacuum_cost_delay;
SELECT cost_delay_per_page FROM vacskip.explain_threshold('vs_d');
RESET vacuum_cost_limit;
RESET vacuum_cost_page_miss;
RESET vacuum_cost_page_hit;
DROP VIEW vs_delayed;
DROP TABLE vs_d, vs_nodelay, vs_measured;
-- another read concurrency is another I/O path (18): the calibration is
-- kept but not used
SET maintenance_io_concurrency = 1;
SELECT CASE WHEN current_setting('server_version_num')::int >= 180000
                 AND current_setting('io_method') <> 'sync'
                 AND current_setting('io_workers')::int > 1
            THEN calibration LIKE 'not used: measured % but VACUUM reads with %'
                 AND cost_source = 'settings'
            ELSE cost_source = 'calibration' END AS as_expected
FROM vacskip.explain_threshold('vs_c');
RESET maintenance_io_concurrency;
-- forgetting it: back to the settings
SELECT vacskip.forget_calibration();
SELECT calibration, cost_source FROM vacskip.explain_threshold('vs_c');
SELECT vacskip.forget_calibration();

DROP TABLE vs_c;
DROP FUNCTION vs_error_of(text);
RESET client_min_messages;

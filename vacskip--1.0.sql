/* vacskip--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION vacskip" to load this file. \quit

CREATE FUNCTION hook_active()
RETURNS boolean
AS 'MODULE_PATHNAME', 'vacskip_hook_active'
LANGUAGE C STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hook_active() IS
'true when this server has the vacuum skip threshold hook, so vacskip.threshold takes effect';

CREATE FUNCTION status(
    OUT hook_available boolean,
    OUT threshold_setting integer,
    OUT mode text,
    OUT server_version_num integer)
RETURNS record
AS 'MODULE_PATHNAME', 'vacskip_status'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

COMMENT ON FUNCTION status() IS
'whether the hook is there, vacskip.threshold, auto or fixed mode, and the server version';

CREATE FUNCTION effective_threshold(rel regclass)
RETURNS integer
AS 'MODULE_PATHNAME', 'vacskip_effective_threshold'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION effective_threshold(regclass) IS
'the skip threshold for all-frozen runs that the next VACUUM of rel would use';

CREATE FUNCTION explain_threshold(
    rel regclass,
    OUT relation regclass,
    OUT tablespace name,
    OUT random_page_cost float8,
    OUT random_page_cost_source text,
    OUT seq_page_cost float8,
    OUT seq_page_cost_source text,
    OUT effective_io_concurrency integer,
    OUT effective_io_concurrency_source text,
    OUT maintenance_io_concurrency integer,
    OUT maintenance_io_concurrency_source text,
    OUT io_combine_limit integer,
    OUT io_method text,
    OUT io_workers integer,
    OUT direct_io boolean,
    OUT concurrency_used integer,
    OUT calibration text,
    OUT cost_source text,
    OUT cost_unit text,
    OUT settings_skip_cost float8,
    OUT tuples_per_page float8,
    OUT cost_delay_per_page float8,
    OUT map_density float8,
    OUT map_runs bigint,
    OUT costs float8[],
    OUT cpu_shares float8[],
    OUT relfrozenxid_age bigint,
    OUT freeze_table_age bigint,
    OUT relminmxid_age bigint,
    OUT multixact_freeze_table_age bigint,
    OUT read_through_all_visible boolean,
    OUT mode text,
    OUT all_frozen_threshold bigint,
    OUT all_visible_threshold bigint,
    OUT reason text)
RETURNS record
AS 'MODULE_PATHNAME', 'vacskip_explain_threshold'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION explain_threshold(regclass) IS
'every input the autotuner reads for rel, with its source, the thresholds chosen and why';

CREATE FUNCTION simulate(
    rel regclass,
    thresholds integer[] DEFAULT '{1,2,4,8,16,32}',
    aggressive boolean DEFAULT false,
    OUT threshold integer,
    OUT pages_total bigint,
    OUT pages_scanned bigint,
    OUT pages_read_through bigint,
    OUT io_runs bigint,
    OUT relfrozenxid_can_advance boolean,
    OUT est_cost float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'vacskip_simulate'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE ROWS 6;

COMMENT ON FUNCTION simulate(regclass, integer[], boolean) IS
'what VACUUM of rel would read under each threshold, from the live visibility map';

CREATE FUNCTION calibrate(
    tablespace name DEFAULT 'pg_default',
    seconds float8 DEFAULT 20,
    OUT tablespace name,
    OUT measured_at timestamptz,
    OUT seconds float8,
    OUT rounds integer,
    OUT io_path text,
    OUT densities float8[],
    OUT read_us float8[],
    OUT start_read_us float8[],
    OUT read_noise float8[],
    OUT start_read_noise float8[],
    OUT cpu_page_us float8,
    OUT cpu_tuple_us float8,
    OUT read_cpu_share float8[],
    OUT round_read_us float8[],
    OUT round_start_read_us float8[],
    OUT round_requests float8[],
    OUT round_start_requests float8[],
    OUT round_cpu_share float8[])
RETURNS record
AS 'MODULE_PATHNAME', 'vacskip_calibrate'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION calibrate(name, float8) IS
'measure what VACUUM''s reads cost on the storage of a tablespace, for the autotuner';

CREATE FUNCTION forget_calibration(tablespace name DEFAULT 'pg_default')
RETURNS boolean
AS 'MODULE_PATHNAME', 'vacskip_forget_calibration'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION forget_calibration(name) IS
'drop the calibration of a tablespace: the autotuner goes back to its settings';

-- calibrate() and forget_calibration() do I/O on the server's disks and
-- change what every VACUUM does: superusers only (they check, too).
REVOKE ALL ON FUNCTION calibrate(name, float8) FROM PUBLIC;
REVOKE ALL ON FUNCTION forget_calibration(name) FROM PUBLIC;

-- They read any table's visibility map and settings: like pg_visibility,
-- for superusers and members of pg_stat_scan_tables, who need the schema
-- too.
GRANT USAGE ON SCHEMA @extschema@ TO pg_stat_scan_tables;
REVOKE ALL ON FUNCTION hook_active() FROM PUBLIC;
REVOKE ALL ON FUNCTION status() FROM PUBLIC;
REVOKE ALL ON FUNCTION effective_threshold(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION explain_threshold(regclass) FROM PUBLIC;
REVOKE ALL ON FUNCTION simulate(regclass, integer[], boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hook_active() TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION status() TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION effective_threshold(regclass) TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION explain_threshold(regclass) TO pg_stat_scan_tables;
GRANT EXECUTE ON FUNCTION simulate(regclass, integer[], boolean) TO pg_stat_scan_tables;

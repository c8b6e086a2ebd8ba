/* vacskip--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION vacskip" to load this file. \quit

CREATE FUNCTION hook_active()
RETURNS boolean
AS 'MODULE_PATHNAME', 'vacskip_hook_active'
LANGUAGE C STRICT PARALLEL SAFE;

COMMENT ON FUNCTION hook_active() IS
'true when this server has the vacuum skip threshold hook, so vacskip.threshold takes effect';

--
-- CREATE EXTENSION: schema, objects, privileges
--
CREATE EXTENSION vacskip;

SELECT e.extname, e.extversion, n.nspname, e.extrelocatable
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'vacskip';

-- the extension's objects
SELECT pg_describe_object(classid, objid, objsubid) AS object
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'vacskip')
ORDER BY 1;

-- not relocatable: it lives in schema vacskip
CREATE SCHEMA other;
ALTER EXTENSION vacskip SET SCHEMA other;
DROP SCHEMA other;

-- not trusted: an ordinary user cannot create it
CREATE ROLE vacskip_regress_user;
DROP EXTENSION vacskip;
SET ROLE vacskip_regress_user;
CREATE EXTENSION vacskip;
RESET ROLE;
DROP ROLE vacskip_regress_user;
CREATE EXTENSION vacskip;

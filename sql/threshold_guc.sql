--
-- vacskip.threshold: valid values, bounds, invalid input
--
-- On a server without the hook every SET warns; that is tested in hook.sql.
SET client_min_messages = error;

SHOW vacskip.threshold;
SELECT name, setting, min_val, max_val, context, vartype
FROM pg_settings WHERE name = 'vacskip.threshold';

SET vacskip.threshold = 4;
SHOW vacskip.threshold;
SET vacskip.threshold = 1;
SHOW vacskip.threshold;
SET vacskip.threshold = 1000000;
SHOW vacskip.threshold;
SET vacskip.threshold = -1;
SHOW vacskip.threshold;
RESET vacskip.threshold;
SHOW vacskip.threshold;

-- these should all fail, leaving the setting unchanged
SET vacskip.threshold = 8;
SET vacskip.threshold = 0;
SET vacskip.threshold = -2;
SET vacskip.threshold = 1000001;
SET vacskip.threshold = 'four';
SET vacskip.threshold = '';
\set VERBOSITY sqlstate
SET vacskip.threshold = 0;
SET vacskip.threshold = -2;
SET vacskip.threshold = 1000001;
SET vacskip.threshold = 'four';
\set VERBOSITY default
SHOW vacskip.threshold;

-- like every integer setting, a fraction is rounded
SET vacskip.threshold = 4.6;
SHOW vacskip.threshold;

-- the prefix is reserved
SET vacskip.no_such_setting = 1;

-- a SET LOCAL ends with its transaction
BEGIN;
SET LOCAL vacskip.threshold = 2;
SHOW vacskip.threshold;
COMMIT;
SHOW vacskip.threshold;
RESET vacskip.threshold;
RESET client_min_messages;

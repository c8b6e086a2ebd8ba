-- row locks of several transactions on the same rows, and updates of rows
-- that others hold FOR KEY SHARE: multixacts in xmax
\set id 1 + (:base + random(0, 20)) % :n
\set k random(0, 1)
BEGIN;
SELECT 1 FROM acct_:t WHERE id BETWEEN :id AND :id + 5 FOR KEY SHARE;
\if :k
SELECT 1 FROM acct_:t WHERE id BETWEEN :id + 2 AND :id + 8 FOR SHARE;
\endif
\sleep 2 ms
COMMIT;

-- an aborted subtransaction inside a committed transaction, then an
-- aborted transaction
\set id 1 + (:base + random_exponential(0, :n - 1, 4.0)) % :n
\set d random(-100, 100)
BEGIN;
SAVEPOINT s;
UPDATE acct_:t SET bal = bal + 1000 WHERE id = :id;
INSERT INTO acct_:t (bal, grp, pad) VALUES (1, 1, 'aborted');
ROLLBACK TO SAVEPOINT s;
WITH u AS (UPDATE acct_:t SET bal = bal + :d WHERE id = :id RETURNING id)
UPDATE ledger SET total = total + :d FROM u
WHERE ledger.tbl = :t AND ledger.shard = u.id % 8;
COMMIT;
BEGIN;
UPDATE acct_:t SET bal = bal - 1000 WHERE id = :id + 1;
DELETE FROM acct_:t WHERE id = :id + 2;
ROLLBACK;

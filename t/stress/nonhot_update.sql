-- grp is indexed: never a HOT update
\set id 1 + (:base + random_exponential(0, :n - 1, 4.0)) % :n
\set d random(-100, 100)
WITH u AS (UPDATE acct_:t SET grp = (grp + 1) % 50, bal = bal + :d WHERE id = :id RETURNING id)
UPDATE ledger SET total = total + :d FROM u
WHERE ledger.tbl = :t AND ledger.shard = u.id % 8;

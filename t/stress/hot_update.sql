-- bal is not indexed: a HOT update where the page has room
\set id 1 + (:base + random_exponential(0, :n - 1, 4.0)) % :n
\set d random(-100, 100)
WITH u AS (UPDATE acct_:t SET bal = bal + :d WHERE id = :id RETURNING id)
UPDATE ledger SET total = total + :d FROM u
WHERE ledger.tbl = :t AND ledger.shard = u.id % 8;

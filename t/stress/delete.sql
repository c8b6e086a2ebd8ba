\set id 1 + (:base + random_exponential(0, :n - 1, 4.0)) % :n
WITH d AS (DELETE FROM acct_:t WHERE id = :id RETURNING id, bal)
UPDATE ledger SET cnt = cnt - 1, total = total - d.bal FROM d
WHERE ledger.tbl = :t AND ledger.shard = d.id % 8;

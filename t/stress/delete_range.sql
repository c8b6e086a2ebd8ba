\set id random(1, :n)
WITH d AS (DELETE FROM acct_:t WHERE id BETWEEN :id AND :id + 40 RETURNING id, bal),
     a AS (SELECT id % 8 AS shard, count(*) AS c, sum(bal) AS s FROM d GROUP BY 1)
UPDATE ledger SET cnt = cnt - a.c, total = total - a.s FROM a
WHERE ledger.tbl = :t AND ledger.shard = a.shard;

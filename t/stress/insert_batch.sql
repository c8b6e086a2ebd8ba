-- 25 rows in one statement; every row lock on acct is taken before the
-- ledger's (the aggregate reads the whole CTE first)
WITH i AS (INSERT INTO acct_:t (bal, grp, pad)
           SELECT g * 7 % 1000, g % 50, repeat(md5(g::text), g % 10 + 1)
           FROM generate_series(1, 25) g RETURNING id, bal),
     a AS (SELECT id % 8 AS shard, count(*) AS c, sum(bal) AS s FROM i GROUP BY 1)
UPDATE ledger SET cnt = cnt + a.c, total = total + a.s FROM a
WHERE ledger.tbl = :t AND ledger.shard = a.shard;

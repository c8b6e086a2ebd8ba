\set b random(0, 1000)
\set len random(1, 12)
WITH i AS (INSERT INTO acct_:t (bal, grp, pad)
           VALUES (:b, :b % 50, repeat(md5(:b::text), :len)) RETURNING id, bal)
UPDATE ledger SET cnt = cnt + 1, total = total + i.bal FROM i
WHERE ledger.tbl = :t AND ledger.shard = i.id % 8;

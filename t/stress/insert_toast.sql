-- a pad of random hex that pglz cannot shrink below the TOAST threshold
\set b random(0, 1000)
WITH i AS (INSERT INTO acct_:t (bal, grp, pad)
           SELECT :b, :b % 50, string_agg(md5(random()::text), '')
           FROM generate_series(1, 120) RETURNING id, bal)
UPDATE ledger SET cnt = cnt + 1, total = total + i.bal FROM i
WHERE ledger.tbl = :t AND ledger.shard = i.id % 8;

-- Create and fill a TPC-C database (clause 4.3.3.1) inside the server, with SQL only.
-- Run by tpcc.load() as one psql session:
--   psql -v warehouses=W -v seed=S -v seed_fraction=F -v nurand_c_last=C -v nurand_c_id=C
--        -v nurand_ol_i_id=C -f load.sql
-- All randomness comes from random() after setseed(:seed_fraction), in this session, in a
-- fixed order, so a seed always gives the same database. That needs every row generated in a
-- fixed order by one process: no parallel workers, no synchronized scans, and rows numbered
-- from one generate_series (n) rather than joins the planner could reorder.

\set ON_ERROR_STOP on
\set QUIET on
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
SET max_parallel_maintenance_workers = 0;
SET synchronize_seqscans = off;
SET maintenance_work_mem = '128MB';
-- Load-time dates are fixed (not the clock) so that the content depends on the seed only.
\set loaded_at '2025-01-01 00:00:00'

\ir schema.sql
\ir transactions.sql

SELECT setseed(:seed_fraction);

-- Helpers, dropped with the session.
-- rand(lo, hi): uniform integer in [lo, hi] (TPC-C's random(x, y)).
CREATE FUNCTION pg_temp.rand(lo integer, hi integer) RETURNS integer VOLATILE LANGUAGE sql
    AS $$ SELECT lo + floor(random() * (hi - lo + 1))::integer $$;
-- n_string(len): len random digits.
CREATE FUNCTION pg_temp.n_string(len integer) RETURNS text VOLATILE LANGUAGE sql
    AS $$ SELECT lpad(floor(random() * 10 ^ len)::bigint::text, len, '0') $$;
-- a_string(lo, hi): a random alphanumeric string of random length in [lo, hi]. Drawing every
-- character would take ~20 random() calls per column; instead a string is a random slice of a
-- 100,000-character random pool, built into the function's body as a constant. The pool is
-- bytea because slicing text in a UTF-8 database scans it from its start on every call.
SELECT format('CREATE FUNCTION pg_temp.a_string(lo integer, hi integer) RETURNS text VOLATILE LANGUAGE sql AS %L',
              format('SELECT encode(substring(%L::bytea FROM 1 + floor(random() * (%s - hi))::integer '
                     'FOR lo + floor(random() * (hi - lo + 1))::integer), ''escape'')', pool, length(pool)))
FROM (SELECT string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                               1 + floor(random() * 62)::integer, 1), '') AS pool
      FROM generate_series(1, 100000)) p
\gexec
-- original(s): in 10 % of the rows, "ORIGINAL" at a random place in s (I_DATA, S_DATA).
CREATE FUNCTION pg_temp.original(s text) RETURNS text VOLATILE LANGUAGE sql
    AS $$ SELECT CASE WHEN random() < 0.1
                      THEN overlay(s PLACING 'ORIGINAL' FROM 1 + floor(random() * (length(s) - 7))::integer)
                      ELSE s END $$;

-- C_LAST's NURand constant for the load: any C with |C_run - C_load| in [65, 119] except 96
-- and 112 (clause 2.1.6.1); C_run is fixed (tpcc.NURAND_C).
SELECT c AS c_last_load FROM generate_series(0, 255) c
WHERE abs(c - :nurand_c_last) BETWEEN 65 AND 119 AND abs(c - :nurand_c_last) NOT IN (96, 112)
ORDER BY random(), c LIMIT 1
\gset
INSERT INTO tpcc_meta VALUES (:warehouses, :seed, :'loaded_at', :c_last_load, :nurand_c_last, :nurand_c_id,
                              :nurand_ol_i_id);

\echo item
INSERT INTO item
SELECT i, pg_temp.rand(1, 10000), pg_temp.a_string(14, 24), pg_temp.rand(100, 10000) / 100.0,
       pg_temp.original(pg_temp.a_string(26, 50))
FROM generate_series(1, 100000) i;

\echo warehouse
INSERT INTO warehouse
SELECT w, pg_temp.a_string(6, 10), pg_temp.a_string(10, 20), pg_temp.a_string(10, 20), pg_temp.a_string(10, 20),
       pg_temp.a_string(2, 2), pg_temp.n_string(4) || '11111', pg_temp.rand(0, 2000) / 10000.0, 300000.00
FROM generate_series(1, :warehouses) w;

\echo stock
INSERT INTO stock
SELECT n % 100000 + 1, n / 100000 + 1, pg_temp.rand(10, 100),
       pg_temp.a_string(24, 24), pg_temp.a_string(24, 24), pg_temp.a_string(24, 24), pg_temp.a_string(24, 24),
       pg_temp.a_string(24, 24), pg_temp.a_string(24, 24), pg_temp.a_string(24, 24), pg_temp.a_string(24, 24),
       pg_temp.a_string(24, 24), pg_temp.a_string(24, 24),
       0, 0, 0, pg_temp.original(pg_temp.a_string(26, 50))
FROM generate_series(0, :warehouses * 100000 - 1) n;

\echo district
INSERT INTO district
SELECT n % 10 + 1, n / 10 + 1, pg_temp.a_string(6, 10), pg_temp.a_string(10, 20), pg_temp.a_string(10, 20),
       pg_temp.a_string(10, 20), pg_temp.a_string(2, 2), pg_temp.n_string(4) || '11111',
       pg_temp.rand(0, 2000) / 10000.0, 30000.00, 3001
FROM generate_series(0, :warehouses * 10 - 1) n;

\echo customer
-- C_LAST: the syllables of C_ID - 1 for the first 1,000 customers of a district, so that
-- every name exists; NURand(255, 0, 999) for the others (clause 4.3.2.3).
INSERT INTO customer
SELECT c, d, w, pg_temp.a_string(8, 16), 'OE',
       tpcc_last_name(CASE WHEN c <= 1000 THEN c - 1
                           ELSE ((pg_temp.rand(0, 255) | pg_temp.rand(0, 999)) + :c_last_load) % 1000 END),
       pg_temp.a_string(10, 20), pg_temp.a_string(10, 20), pg_temp.a_string(10, 20), pg_temp.a_string(2, 2),
       pg_temp.n_string(4) || '11111', pg_temp.n_string(8) || pg_temp.n_string(8), :'loaded_at',
       CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000.00, pg_temp.rand(0, 5000) / 10000.0,
       -10.00, 10.00, 1, 0, pg_temp.a_string(300, 500)
FROM (SELECT n % 3000 + 1 AS c, n / 3000 % 10 + 1 AS d, n / 30000 + 1 AS w
      FROM generate_series(0, :warehouses * 30000 - 1) n) g;

\echo history
INSERT INTO history
SELECT n % 3000 + 1, n / 3000 % 10 + 1, n / 30000 + 1, n / 3000 % 10 + 1, n / 30000 + 1, :'loaded_at',
       10.00, pg_temp.a_string(12, 24)
FROM generate_series(0, :warehouses * 30000 - 1) n;

\echo orders
-- O_C_ID is a random permutation of the district's customers; orders 2,101-3,000 are
-- undelivered (no carrier, lines without delivery date or with an amount, in NEW-ORDER).
INSERT INTO orders
SELECT o, d, w, c, :'loaded_at', CASE WHEN o < 2101 THEN pg_temp.rand(1, 10) END, pg_temp.rand(5, 15), 1
FROM (SELECT w, d, c, row_number() OVER (PARTITION BY w, d ORDER BY random(), c) AS o
      FROM (SELECT n % 3000 + 1 AS c, n / 3000 % 10 + 1 AS d, n / 30000 + 1 AS w
            FROM generate_series(0, :warehouses * 30000 - 1) n) g) p
ORDER BY w, d, o;

\echo order_line
INSERT INTO order_line
SELECT o_id, o_d_id, o_w_id, ol, pg_temp.rand(1, 100000), o_w_id, CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
       CASE WHEN o_id < 2101 THEN 0.00 ELSE pg_temp.rand(1, 999999) / 100.0 END, pg_temp.a_string(24, 24)
FROM orders, generate_series(1, o_ol_cnt) ol;

\echo new_order
INSERT INTO new_order SELECT o_id, o_d_id, o_w_id FROM orders WHERE o_id >= 2101;

\echo keys
\ir keys.sql

-- VACUUM sets the hint bits and the visibility map now, so that the first run does not
-- dirty every page it reads (which would count as the bufferpool's writes).
\echo vacuum analyze
VACUUM ANALYZE;
CHECKPOINT;

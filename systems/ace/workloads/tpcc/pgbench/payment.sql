-- TPC-C Payment (clause 2.5.1): 85 % of the customers are of the paying district, 15 % of a
-- random district of another warehouse (of the same warehouse when there is only one);
-- 60 % are chosen by last name.
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set home random(1, 100)
\set c_d_id CASE WHEN :home <= 85 THEN :d_id ELSE random(1, 10) END
\set c_w_id CASE WHEN :home <= 85 OR :warehouses = 1 THEN :w_id \
                  ELSE 1 + (:w_id - 1 + random(1, :warehouses - 1)) % :warehouses END
\set by_name random(1, 100)
\set c_last ((random(0, 255) | random(0, 999)) + :nurand_c_last) % 1000
\set c_id ((random(0, 1023) | random(1, 3000)) + :nurand_c_id) % 3000 + 1
\set cents random(100, 500000)
SELECT tpcc_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :c_last, :by_name <= 60, :cents / 100.0);

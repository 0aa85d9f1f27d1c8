-- TPC-C NewOrder (clause 2.4.1): a customer of a district orders 5-15 items; 1 % roll back.
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set c_id ((random(0, 1023) | random(1, 3000)) + :nurand_c_id) % 3000 + 1
\set ol_cnt random(5, 15)
\set rbk random(1, 100)
\set seed random(0, 2147483647)
SELECT tpcc_new_order(:w_id, :d_id, :c_id, :ol_cnt, :rbk, :warehouses, :nurand_ol_i_id, :seed);

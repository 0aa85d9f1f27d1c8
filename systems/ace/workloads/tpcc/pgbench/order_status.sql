-- TPC-C OrderStatus (clause 2.6.1): a customer's latest order; 60 % by last name.
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set by_name random(1, 100)
\set c_last ((random(0, 255) | random(0, 999)) + :nurand_c_last) % 1000
\set c_id ((random(0, 1023) | random(1, 3000)) + :nurand_c_id) % 3000 + 1
SELECT tpcc_order_status(:w_id, :d_id, :c_id, :c_last, :by_name <= 60);

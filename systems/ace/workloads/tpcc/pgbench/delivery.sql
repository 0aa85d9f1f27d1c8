-- TPC-C Delivery (clause 2.7.1): the oldest undelivered order of each district of a warehouse.
\set w_id random(1, :warehouses)
\set carrier_id random(1, 10)
SELECT tpcc_delivery(:w_id, :carrier_id);

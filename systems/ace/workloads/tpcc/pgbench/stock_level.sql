-- TPC-C StockLevel (clause 2.8.1): items of a district's last 20 orders low in stock. The
-- specification fixes the district per terminal; with no terminals it is drawn.
\set w_id random(1, :warehouses)
\set d_id random(1, 10)
\set threshold random(10, 20)
SELECT tpcc_stock_level(:w_id, :d_id, :threshold);

-- The five TPC-C transactions (clause 2) as PL/pgSQL functions; one pgbench script calls
-- each with the inputs it drew (workloads/tpcc/pgbench/). Each call is one database
-- transaction (pgbench's autocommit). The functions return a small result that nothing uses:
-- TPC-C's terminal output is not displayed.
--
-- Lock order, so that concurrent transactions wait but never deadlock: Payment locks
-- warehouse, then district, then customer; NewOrder locks district, then stock rows in
-- (item, supply warehouse) order; Delivery locks, district by district in order, the oldest
-- new order, its order and lines, then its customer.

-- C_LAST from a number in [0, 999]: its three digits' syllables (clause 4.3.2.3).
CREATE OR REPLACE FUNCTION tpcc_last_name(n integer) RETURNS text IMMUTABLE LANGUAGE sql AS $$
    SELECT s[n / 100 + 1] || s[n / 10 % 10 + 1] || s[n % 10 + 1]
    FROM (SELECT ARRAY['BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'] AS s) syllables
$$;

-- A customer chosen by last name (clauses 2.5.2.2, 2.6.2.2): of those with that name, sorted
-- by C_FIRST, the one at position n/2 rounded up.
CREATE OR REPLACE FUNCTION tpcc_customer_by_name(w integer, d integer, last text) RETURNS integer
STABLE LANGUAGE sql AS $$
    SELECT ids[(cardinality(ids) + 1) / 2]
    FROM (SELECT array_agg(c_id ORDER BY c_first) AS ids FROM customer
          WHERE c_w_id = w AND c_d_id = d AND c_last = last) named
$$;

-- NewOrder (clause 2.4). pgbench draws the customer (NURand), the number of lines and rbk;
-- the lines themselves (items by NURand(8191, 1, 100000), 1 % from a remote warehouse,
-- quantities) are drawn here from `seed`, so that a run is reproducible. When rbk = 1 the
-- last item is not a valid item: everything the order did is rolled back (in a
-- subtransaction, so pgbench sees a success) and the rollback is recorded in tpcc_rollbacks.
-- Returns the order's total amount, or NULL when it rolled back.
CREATE OR REPLACE FUNCTION tpcc_new_order(p_w_id integer, p_d_id integer, p_c_id integer, p_ol_cnt integer,
                                          p_rbk integer, p_warehouses integer, p_nurand_ol_i_id integer,
                                          p_seed bigint) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
    v_items integer[] := '{}';
    v_supply integer[] := '{}';
    v_quantity integer[] := '{}';
    v_item integer;
    v_w_tax numeric;
    v_d_tax numeric;
    v_o_id integer;
    v_discount numeric;
    v_last text;
    v_credit text;
    v_price numeric;
    v_i_name text;
    v_i_data text;
    v_s_data text;
    v_dist_info text;
    v_number integer := 0;
    v_total numeric := 0;
    line record;
BEGIN
    PERFORM setseed(p_seed::float8 / 2147483648);
    FOR n IN 1 .. p_ol_cnt LOOP
        IF p_rbk = 1 AND n = p_ol_cnt THEN
            v_item := 100001;  -- unused (clause 2.4.1.5)
        ELSE
            v_item := ((floor(random() * 8192)::integer | (1 + floor(random() * 100000)::integer))
                       + p_nurand_ol_i_id) % 100000 + 1;
        END IF;
        v_items := v_items || v_item;
        v_supply := v_supply || CASE WHEN p_warehouses > 1 AND random() < 0.01
                                     THEN 1 + (p_w_id + floor(random() * (p_warehouses - 1))::integer) % p_warehouses
                                     ELSE p_w_id END;
        v_quantity := v_quantity || (1 + floor(random() * 10)::integer);
    END LOOP;

    BEGIN
        SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
        UPDATE district SET d_next_o_id = d_next_o_id + 1
        WHERE d_w_id = p_w_id AND d_id = p_d_id
        RETURNING d_tax, d_next_o_id - 1 INTO v_d_tax, v_o_id;
        SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit
        FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
        INSERT INTO orders VALUES (v_o_id, p_d_id, p_w_id, p_c_id, localtimestamp, NULL, p_ol_cnt,
                                   CASE WHEN p_w_id = ALL (v_supply) THEN 1 ELSE 0 END);
        INSERT INTO new_order VALUES (v_o_id, p_d_id, p_w_id);

        -- Lines in item order (they are numbered in that order): stock rows are locked in a
        -- global order, and the invalid item (100001) comes last, after all the other work.
        FOR line IN SELECT * FROM unnest(v_items, v_supply, v_quantity) AS l(i_id, supply_w_id, quantity)
                    ORDER BY i_id, supply_w_id LOOP
            v_number := v_number + 1;
            SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = line.i_id;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'Item number is not valid' USING ERRCODE = 'TPCC1';
            END IF;
            UPDATE stock
            SET s_quantity = CASE WHEN s_quantity >= line.quantity + 10 THEN s_quantity - line.quantity
                                  ELSE s_quantity - line.quantity + 91 END,
                s_ytd = s_ytd + line.quantity,
                s_order_cnt = s_order_cnt + 1,
                s_remote_cnt = s_remote_cnt + CASE WHEN line.supply_w_id <> p_w_id THEN 1 ELSE 0 END
            WHERE s_w_id = line.supply_w_id AND s_i_id = line.i_id
            RETURNING s_data, CASE p_d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                                          WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                                          WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                                          ELSE s_dist_10 END
            INTO v_s_data, v_dist_info;
            INSERT INTO order_line VALUES (v_o_id, p_d_id, p_w_id, v_number, line.i_id, line.supply_w_id, NULL,
                                           line.quantity, line.quantity * v_price, v_dist_info);
            v_total := v_total + line.quantity * v_price;
        END LOOP;
    EXCEPTION WHEN SQLSTATE 'TPCC1' THEN
        INSERT INTO tpcc_rollbacks VALUES (p_w_id, p_d_id, p_c_id, p_seed);
        RETURN NULL;
    END;
    RETURN round(v_total * (1 - v_discount) * (1 + v_w_tax + v_d_tax), 2);
END
$$;

-- Payment (clause 2.5): a payment by a customer of district (p_c_w_id, p_c_d_id), chosen by
-- last name when p_by_name (number p_c_last's syllables), else by p_c_id, made at district
-- (p_w_id, p_d_id). Returns the customer's new balance.
CREATE OR REPLACE FUNCTION tpcc_payment(p_w_id integer, p_d_id integer, p_c_w_id integer, p_c_d_id integer,
                                        p_c_id integer, p_c_last integer, p_by_name boolean, p_amount numeric)
RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    w warehouse%ROWTYPE;
    d district%ROWTYPE;
    c customer%ROWTYPE;
    v_c_id integer := p_c_id;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id RETURNING * INTO w;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id RETURNING * INTO d;
    IF p_by_name THEN
        v_c_id := tpcc_customer_by_name(p_c_w_id, p_c_d_id, tpcc_last_name(p_c_last));
    END IF;
    -- A bad-credit customer's C_DATA gets the payment's identifiers at its left, kept to 500
    -- characters.
    UPDATE customer
    SET c_balance = c_balance - p_amount,
        c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC'
                      THEN left(concat_ws(' ', c_id, c_d_id, c_w_id, p_d_id, p_w_id, p_amount) || ' ' || c_data, 500)
                      ELSE c_data END
    WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id
    RETURNING * INTO c;
    INSERT INTO history VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, localtimestamp, p_amount,
                                w.w_name || '    ' || d.d_name);
    RETURN c.c_balance;
END
$$;

-- OrderStatus (clause 2.6), read-only: a customer (by last name or by id), their latest order
-- and its lines. Returns the number of lines.
CREATE OR REPLACE FUNCTION tpcc_order_status(p_w_id integer, p_d_id integer, p_c_id integer, p_c_last integer,
                                             p_by_name boolean) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    c customer%ROWTYPE;
    o orders%ROWTYPE;
    v_c_id integer := p_c_id;
    v_lines integer;
    v_amount numeric;
    v_delivered timestamp;
BEGIN
    IF p_by_name THEN
        v_c_id := tpcc_customer_by_name(p_w_id, p_d_id, tpcc_last_name(p_c_last));
    END IF;
    SELECT * INTO c FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = v_c_id;
    SELECT * INTO o FROM orders WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id
    ORDER BY o_id DESC LIMIT 1;
    -- Aggregates of non-key columns, so that the lines' rows are read, not just the index.
    SELECT count(*), sum(ol_amount), max(ol_delivery_d) INTO v_lines, v_amount, v_delivered
    FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = o.o_id;
    RETURN v_lines;
END
$$;

-- Delivery (clause 2.7), run at once rather than queued: for each district of the warehouse,
-- its oldest undelivered order gets carrier p_carrier_id, its lines a delivery date, and its
-- customer the order's amount. Returns the number of orders delivered.
CREATE OR REPLACE FUNCTION tpcc_delivery(p_w_id integer, p_carrier_id integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_o_id integer;
    v_c_id integer;
    v_amount numeric;
    v_delivered integer := 0;
BEGIN
    <<districts>>
    FOR d IN 1 .. 10 LOOP
        LOOP
            SELECT no_o_id INTO v_o_id FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
            EXIT WHEN FOUND;
            -- Either the district has no undelivered order (skip it, clause 2.7.4.2), or a
            -- concurrent Delivery took the oldest one while we waited for its lock: look again.
            CONTINUE districts WHEN NOT EXISTS (SELECT FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d);
        END LOOP;
        DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o_id;
        UPDATE orders SET o_carrier_id = p_carrier_id
        WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o_id
        RETURNING o_c_id INTO v_c_id;
        WITH delivered AS (
            UPDATE order_line SET ol_delivery_d = localtimestamp
            WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o_id
            RETURNING ol_amount)
        SELECT sum(ol_amount) INTO v_amount FROM delivered;
        UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c_id;
        v_delivered := v_delivered + 1;
    END LOOP;
    RETURN v_delivered;
END
$$;

-- StockLevel (clause 2.8), read-only: how many distinct items of the district's last 20
-- orders have less than p_threshold in stock at the warehouse.
CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w_id integer, p_d_id integer, p_threshold integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    v_next integer;
    v_low integer;
BEGIN
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
    SELECT count(DISTINCT s_i_id) INTO v_low
    FROM order_line JOIN stock ON s_w_id = p_w_id AND s_i_id = ol_i_id
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id >= v_next - 20 AND ol_o_id < v_next
      AND s_quantity < p_threshold;
    RETURN v_low;
END
$$;

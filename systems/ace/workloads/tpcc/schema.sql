-- The nine TPC-C tables (TPC-C 5.11, clause 1.3), without their keys: tpcc.load creates the
-- keys after filling the tables (keys.sql), which is faster than maintaining them row by row.
-- Identifiers are integers, money and rates are numeric as the specification's
-- "signed numeric(m, n)", so that the consistency conditions compare exact sums.

DROP TABLE IF EXISTS warehouse, district, customer, history, orders, new_order, order_line, item, stock,
    tpcc_meta, tpcc_rollbacks CASCADE;

CREATE TABLE warehouse (
    w_id       integer       NOT NULL,
    w_name     varchar(10)   NOT NULL,
    w_street_1 varchar(20)   NOT NULL,
    w_street_2 varchar(20)   NOT NULL,
    w_city     varchar(20)   NOT NULL,
    w_state    char(2)       NOT NULL,
    w_zip      char(9)       NOT NULL,
    w_tax      numeric(4, 4) NOT NULL,
    w_ytd      numeric(12, 2) NOT NULL
);

CREATE TABLE district (
    d_id        integer       NOT NULL,
    d_w_id      integer       NOT NULL,
    d_name      varchar(10)   NOT NULL,
    d_street_1  varchar(20)   NOT NULL,
    d_street_2  varchar(20)   NOT NULL,
    d_city      varchar(20)   NOT NULL,
    d_state     char(2)       NOT NULL,
    d_zip       char(9)       NOT NULL,
    d_tax       numeric(4, 4) NOT NULL,
    d_ytd       numeric(12, 2) NOT NULL,
    d_next_o_id integer       NOT NULL
);

CREATE TABLE customer (
    c_id           integer        NOT NULL,
    c_d_id         integer        NOT NULL,
    c_w_id         integer        NOT NULL,
    c_first        varchar(16)    NOT NULL,
    c_middle       char(2)        NOT NULL,
    c_last         varchar(16)    NOT NULL,
    c_street_1     varchar(20)    NOT NULL,
    c_street_2     varchar(20)    NOT NULL,
    c_city         varchar(20)    NOT NULL,
    c_state        char(2)        NOT NULL,
    c_zip          char(9)        NOT NULL,
    c_phone        char(16)       NOT NULL,
    c_since        timestamp      NOT NULL,
    c_credit       char(2)        NOT NULL,
    c_credit_lim   numeric(12, 2) NOT NULL,
    c_discount     numeric(4, 4)  NOT NULL,
    c_balance      numeric(12, 2) NOT NULL,
    c_ytd_payment  numeric(12, 2) NOT NULL,
    c_payment_cnt  integer        NOT NULL,
    c_delivery_cnt integer        NOT NULL,
    c_data         varchar(500)   NOT NULL
);

-- HISTORY has no primary key (clause 1.3.1: "rows ... do not need to be unique").
CREATE TABLE history (
    h_c_id   integer       NOT NULL,
    h_c_d_id integer       NOT NULL,
    h_c_w_id integer       NOT NULL,
    h_d_id   integer       NOT NULL,
    h_w_id   integer       NOT NULL,
    h_date   timestamp     NOT NULL,
    h_amount numeric(6, 2) NOT NULL,
    h_data   varchar(24)   NOT NULL
);

-- The specification's ORDER table ("order" is an SQL keyword).
CREATE TABLE orders (
    o_id         integer   NOT NULL,
    o_d_id       integer   NOT NULL,
    o_w_id       integer   NOT NULL,
    o_c_id       integer   NOT NULL,
    o_entry_d    timestamp NOT NULL,
    o_carrier_id integer,            -- NULL until the order is delivered
    o_ol_cnt     integer   NOT NULL,
    o_all_local  integer   NOT NULL
);

CREATE TABLE new_order (
    no_o_id integer NOT NULL,
    no_d_id integer NOT NULL,
    no_w_id integer NOT NULL
);

CREATE TABLE order_line (
    ol_o_id        integer       NOT NULL,
    ol_d_id        integer       NOT NULL,
    ol_w_id        integer       NOT NULL,
    ol_number      integer       NOT NULL,
    ol_i_id        integer       NOT NULL,
    ol_supply_w_id integer       NOT NULL,
    ol_delivery_d  timestamp,            -- NULL until the order is delivered
    ol_quantity    integer       NOT NULL,
    ol_amount      numeric(6, 2) NOT NULL,
    ol_dist_info   char(24)      NOT NULL
);

CREATE TABLE item (
    i_id    integer       NOT NULL,
    i_im_id integer       NOT NULL,
    i_name  varchar(24)   NOT NULL,
    i_price numeric(5, 2) NOT NULL,
    i_data  varchar(50)   NOT NULL
);

CREATE TABLE stock (
    s_i_id       integer     NOT NULL,
    s_w_id       integer     NOT NULL,
    s_quantity   integer     NOT NULL,
    s_dist_01    char(24)    NOT NULL,
    s_dist_02    char(24)    NOT NULL,
    s_dist_03    char(24)    NOT NULL,
    s_dist_04    char(24)    NOT NULL,
    s_dist_05    char(24)    NOT NULL,
    s_dist_06    char(24)    NOT NULL,
    s_dist_07    char(24)    NOT NULL,
    s_dist_08    char(24)    NOT NULL,
    s_dist_09    char(24)    NOT NULL,
    s_dist_10    char(24)    NOT NULL,
    s_ytd        integer     NOT NULL,
    s_order_cnt  integer     NOT NULL,
    s_remote_cnt integer     NOT NULL,
    s_data       varchar(50) NOT NULL
);

-- Not TPC-C: what was loaded, and the NURand constants C (clause 2.1.6) of the load and of
-- the runs, so that a database says how it was made.
CREATE TABLE tpcc_meta (
    warehouses  integer   NOT NULL,
    seed        bigint    NOT NULL,
    loaded_at   timestamp NOT NULL,
    c_last_load integer   NOT NULL,
    c_last_run  integer   NOT NULL,
    c_id        integer   NOT NULL,
    ol_i_id     integer   NOT NULL
);

-- Not TPC-C: one row per NewOrder that rolled back because of its invalid item (clause
-- 2.4.2.3), so that the 1 % can be counted; the rollback itself leaves no other trace.
CREATE TABLE tpcc_rollbacks (
    w_id integer NOT NULL,
    d_id integer NOT NULL,
    c_id integer NOT NULL,
    seed bigint  NOT NULL
);

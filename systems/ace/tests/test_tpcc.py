"""TPC-C for pgbench (ace.tpcc): the loader's cardinalities and data rules, TPC-C's
consistency conditions before and after runs, the standard mix's weights, each transaction
alone, determinism for a seed, and NewOrder's 1 % rollback. The database is loaded once
(1 warehouse) and each test works on its own copy of it."""

from __future__ import annotations

import itertools
import math
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from ace import tpcc
from ace.server import Server

SEED = 1
SERVER_SETTINGS = {"shared_buffers": "64MB", "synchronous_commit": "off", "max_wal_size": "1GB"}

# A pgbench report of the standard mix (PostgreSQL 15), trimmed.
PGBENCH_OUTPUT = """\
transaction type: multiple scripts
number of transactions per client: 200
number of transactions actually processed: 400/400
number of failed transactions: 0 (0.000%)
tps = 893.962623 (without initial connection time)
SQL script 1: /tmp/s/new_order.sql
 - weight: 45 (targets 45.0% of total)
 - 183 transactions (45.8% of total, tps = 408.987900)
 - number of failed transactions: 0 (0.000%)
SQL script 2: /tmp/s/payment.sql
 - weight: 43 (targets 43.0% of total)
 - 170 transactions (42.5% of total, tps = 379.934115)
 - number of failed transactions: 0 (0.000%)
"""


# ---------------------------------------------------------------------- without a server

def test_scripts_weights_and_variables(tmp_path):
    args = tpcc.write_scripts(tmp_path / "mix", "mix")
    assert args[0::2] == ["-f"] * 5
    weighted = [arg.rsplit("@", 1) for arg in args[1::2]]
    assert [Path(path).stem for path, _ in weighted] == list(tpcc.TRANSACTIONS)
    assert {Path(path).stem: int(w) for path, w in weighted} == tpcc.STANDARD_MIX == \
        {"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}
    variables = dict(arg.split("=") for arg in tpcc.pgbench_variables(3)[1::2])
    assert variables["warehouses"] == "3"
    for path, _ in weighted:
        text = Path(path).read_text()
        name = Path(path).stem
        assert f"SELECT tpcc_{name}(" in text
        # every variable a script uses is drawn by it or given with -D
        drawn = set(re.findall(r"^\\set (\w+)", text, re.MULTILINE))
        used = set(re.findall(r":(\w+)", text))
        assert used - drawn <= set(variables), (name, used - drawn)
    for name in tpcc.TRANSACTIONS:
        single = tpcc.write_scripts(tmp_path / name, name)
        assert single == ["-f", str((tmp_path / name / f"{name}.sql").resolve())]
        assert Path(single[1]).exists()
    with pytest.raises(ValueError, match="new_order"):
        tpcc.write_scripts(tmp_path, "neworder")


def test_pgbench_summary():
    summary = tpcc.pgbench_summary(PGBENCH_OUTPUT)
    assert summary == {"processed": 400, "expected": 400, "failed": 0, "tps": 893.962623,
                       "scripts": {"new_order": 183, "payment": 170}}


def test_seed_fractions_are_valid_and_distinct():
    fractions = [tpcc.seed_fraction(seed) for seed in range(-50, 50)]
    assert all(0 <= f < 1 for f in fractions)
    assert len(set(fractions)) == len(fractions)


# ---------------------------------------------------------------------- with a server

@pytest.fixture(scope="module")
def server(install):
    """One server for the module, with SEED's 1-warehouse database loaded as `loaded`."""
    root = Path(tempfile.mkdtemp(prefix="ace-tpcc-", dir="/tmp"))
    root.chmod(0o755)  # the server's user must reach it
    try:
        with Server(install, root, SERVER_SETTINGS) as pg:
            start = time.monotonic()
            tpcc.load(pg, 1, SEED, database="loaded")
            pg.load_seconds = time.monotonic() - start
            yield pg
    finally:
        shutil.rmtree(root, ignore_errors=True)


_copies = itertools.count()


@pytest.fixture
def database(server):
    """A fresh copy of the loaded database."""
    name = f"copy_{next(_copies)}"
    server.sql(f"CREATE DATABASE {name} TEMPLATE loaded STRATEGY FILE_COPY")
    yield name
    server.sql(f"DROP DATABASE {name}")


def count(server, database, query) -> int:
    return int(server.sql(query, database))


def pgbench(server, database, mix, tmp_path, *options, warehouses=1) -> dict:
    """Run pgbench with `mix`'s scripts; its summary, after checking that it ran everything."""
    args = tpcc.write_scripts(tmp_path / "scripts", mix)
    result = server.client(["pgbench", "-n", "-d", database, *options, *args,
                            *tpcc.pgbench_variables(warehouses)])
    summary = tpcc.pgbench_summary(result.stdout)
    assert summary["failed"] == 0, result.stdout + result.stderr
    assert summary["processed"] == summary["expected"], result.stdout + result.stderr
    summary["output"] = result.stdout
    return summary


@pytest.mark.e2e
def test_load_follows_tpcc(server):
    db = "loaded"
    assert server.load_seconds < 60
    for table, rows in tpcc.ROWS_PER_WAREHOUSE.items():
        assert count(server, db, f"SELECT count(*) FROM {table}") == rows, table
    assert count(server, db, "SELECT count(*) FROM item") == tpcc.ITEMS
    lines = count(server, db, "SELECT count(*) FROM order_line")
    assert 9.8 * 30_000 < lines < 10.2 * 30_000  # 5-15 lines per order, 10 on average
    assert server.sql("SELECT min(o_ol_cnt), max(o_ol_cnt) FROM orders", db) == "5|15"
    # per district: orders 1-3000 for a permutation of the customers, 2101-3000 undelivered
    assert server.sql("SELECT DISTINCT count(DISTINCT o_c_id), min(o_id), max(o_id), "
                      "count(*) FILTER (WHERE o_carrier_id IS NULL), min(o_id) FILTER (WHERE o_carrier_id IS NULL) "
                      "FROM orders GROUP BY o_w_id, o_d_id", db) == "3000|1|3000|900|2101"
    assert server.sql("SELECT DISTINCT min(no_o_id), max(no_o_id) FROM new_order GROUP BY no_w_id, no_d_id",
                      db) == "2101|3000"
    assert count(server, db, "SELECT count(*) FROM order_line JOIN orders ON (o_w_id, o_d_id, o_id) = "
                             "(ol_w_id, ol_d_id, ol_o_id) WHERE (o_carrier_id IS NULL) <> "
                             "(ol_delivery_d IS NULL) OR (o_carrier_id IS NULL) <> (ol_amount > 0)") == 0
    # C_LAST: customers 1-1000 named by their number's syllables, so every name exists
    assert server.sql("SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id IN (1, 372, 1000) "
                      "ORDER BY c_id", db).split() == ["BARBARBAR", "PRICALLYOUGHT", "EINGEINGEING"]  # 0, 371, 999
    assert count(server, db, "SELECT count(*) FROM customer WHERE c_id <= 1000 AND "
                             "c_last <> tpcc_last_name(c_id - 1)") == 0
    assert server.sql("SELECT DISTINCT count(DISTINCT c_last) FROM customer GROUP BY c_w_id, c_d_id", db) == "1000"
    c_load, c_run = map(int, server.sql("SELECT c_last_load, c_last_run FROM tpcc_meta", db).split("|"))
    assert c_run == tpcc.NURAND_C["c_last"]
    assert 65 <= abs(c_run - c_load) <= 119 and abs(c_run - c_load) not in (96, 112)
    # 10 % "ORIGINAL" and 10 % bad credit
    for query, rows in [("SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'", 100_000),
                        ("SELECT count(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'", 100_000),
                        ("SELECT count(*) FROM customer WHERE c_credit = 'BC'", 30_000)]:
        assert 0.085 * rows < count(server, db, query) < 0.115 * rows, query
    indexes = server.sql("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'", db).split()
    assert len(indexes) == 10 and {"customer_name", "orders_customer"} <= set(indexes)
    assert tpcc.consistency_violations(server, db) == []


@pytest.mark.e2e
def test_consistency_check_finds_each_violation(server, database):
    server.sql("UPDATE warehouse SET w_ytd = w_ytd + 1;"
               "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = 2;"
               "DELETE FROM new_order WHERE no_d_id = 3 AND no_o_id = 2500;"
               "DELETE FROM order_line WHERE ol_d_id = 4 AND ol_o_id = 7 AND ol_number = 1", database)
    violations = tpcc.consistency_violations(server, database)
    assert [v.split(":")[0] for v in violations] == [f"condition {n}" for n in (1, 2, 3, 4)], violations
    assert "district (1, 2)" in violations[1] and "district (1, 3)" in violations[2]


def near_weights(scripts: dict, transactions: int) -> list[str]:
    """The scripts whose count is more than 4 standard deviations (+1) from their weight."""
    far = []
    for name, weight in tpcc.STANDARD_MIX.items():
        p = weight / 100
        if abs(scripts.get(name, 0) - transactions * p) > 4 * math.sqrt(transactions * p * (1 - p)) + 1:
            far.append(f"{name}: {scripts.get(name, 0)} of {transactions} for weight {weight}")
    return far


@pytest.mark.e2e
def test_standard_mix(server, database, tmp_path):
    orders = count(server, database, "SELECT count(*) FROM orders")
    summary = pgbench(server, database, "mix", tmp_path, "-c", "2", "-t", "200", "--random-seed", "7")
    assert summary["processed"] == 400
    assert sum(summary["scripts"].values()) == 400 and near_weights(summary["scripts"], 400) == []
    assert tpcc.consistency_violations(server, database) == []
    rollbacks = count(server, database, "SELECT count(*) FROM tpcc_rollbacks")
    assert count(server, database, "SELECT count(*) FROM orders") - orders == \
        summary["scripts"]["new_order"] - rollbacks
    assert count(server, database, "SELECT count(*) FROM history") - 30_000 == summary["scripts"]["payment"]


@pytest.mark.e2e
@pytest.mark.parametrize("transaction", tpcc.TRANSACTIONS)
def test_each_transaction_alone(server, database, tmp_path, transaction):
    before = tpcc.content_summary(server, database)
    summary = pgbench(server, database, transaction, tmp_path, "-c", "2", "-t", "25", "--random-seed", "3")
    assert summary["processed"] == 50
    assert tpcc.consistency_violations(server, database) == []
    after = tpcc.content_summary(server, database)
    rows = {table: int(text.split()[0]) for table, text in after.items()}
    if transaction == "new_order":
        rollbacks = count(server, database, "SELECT count(*) FROM tpcc_rollbacks")
        assert rows["orders"] == 30_000 + 50 - rollbacks and rows["new_order"] == 9_000 + 50 - rollbacks
        assert count(server, database, "SELECT sum(s_order_cnt) FROM stock") == rows["order_line"] - lines(before)
    elif transaction == "payment":
        assert rows["history"] == 30_000 + 50
        assert count(server, database, "SELECT sum(c_payment_cnt) FROM customer") == 30_000 + 50
    elif transaction == "delivery":
        # every district has undelivered orders left: each Delivery delivers 10
        assert rows["new_order"] == 9_000 - 50 * 10
        assert count(server, database, "SELECT sum(c_delivery_cnt) FROM customer") == 50 * 10
        assert count(server, database, "SELECT count(*) FROM orders WHERE o_carrier_id IS NULL") == 9_000 - 500
    else:  # read-only
        assert after == before


def lines(summary: dict) -> int:
    return int(summary["order_line"].split()[0])


@pytest.mark.e2e
def test_same_seed_same_content(server, tmp_path):
    loaded = tpcc.content_summary(server, "loaded")
    tpcc.load(server, 1, SEED, database="reloaded")
    assert tpcc.content_summary(server, "reloaded") == loaded
    tpcc.load(server, 1, SEED + 1, database="reloaded")
    other_seed = tpcc.content_summary(server, "reloaded")
    # every table but NEW-ORDER (order numbers only) has random content
    assert [t for t in tpcc.TABLES if other_seed[t] == loaded[t]] == ["new_order"]
    server.sql("DROP DATABASE reloaded")

    after = {}
    for run, random_seed in [("a", 7), ("b", 7), ("c", 8)]:
        name = f"run_{run}"
        server.sql(f"CREATE DATABASE {name} TEMPLATE loaded STRATEGY FILE_COPY")
        pgbench(server, name, "mix", tmp_path / run, "-c", "1", "-t", "200", "--random-seed", str(random_seed))
        after[run] = tpcc.content_summary(server, name)
        server.sql(f"DROP DATABASE {name}")
    assert after["a"] == after["b"]
    assert after["a"] != loaded and after["c"] != after["a"]


@pytest.mark.e2e
def test_new_order_rolls_back_one_percent(server, database, tmp_path):
    next_o_id = count(server, database, "SELECT sum(d_next_o_id) FROM district")
    pgbench(server, database, "new_order", tmp_path, "-c", "1", "-t", "600", "--random-seed", "7")
    rollbacks = count(server, database, "SELECT count(*) FROM tpcc_rollbacks")
    assert 1 <= rollbacks <= 15  # 6 expected
    # a rolled-back order left nothing behind: no order, no order number, no stock change
    assert count(server, database, "SELECT count(*) FROM orders") == 30_000 + 600 - rollbacks
    assert count(server, database, "SELECT sum(d_next_o_id) FROM district") == next_o_id + 600 - rollbacks
    assert count(server, database, "SELECT sum(s_order_cnt) FROM stock") == \
        count(server, database, "SELECT count(*) FROM order_line") - count(server, "loaded",
                                                                            "SELECT count(*) FROM order_line")
    assert tpcc.consistency_violations(server, database) == []


@pytest.mark.e2e
def test_two_warehouses_with_remote_work(server, tmp_path):
    tpcc.load(server, 2, SEED, database="two")
    try:
        for table, rows in tpcc.ROWS_PER_WAREHOUSE.items():
            assert count(server, "two", f"SELECT count(*) FROM {table}") == 2 * rows, table
        pgbench(server, "two", "mix", tmp_path, "-c", "2", "-t", "200", "--random-seed", "7", warehouses=2)
        assert tpcc.consistency_violations(server, "two") == []
        # 15 % of the payments are for a customer of the other warehouse
        assert count(server, "two", "SELECT count(*) FROM history WHERE h_c_w_id <> h_w_id") > 0
        assert count(server, "two", "SELECT count(DISTINCT h_w_id) FROM history WHERE h_date > '2025-01-01'") == 2
    finally:
        server.sql("DROP DATABASE two")


@pytest.mark.e2e
def test_transactions_called_directly(server, database):
    db = database
    # NewOrder: the total of clause 2.4.2.2, lines numbered in item order, one order row
    total = server.sql("SELECT tpcc_new_order(1, 4, 17, 12, 50, 1, 7911, 12345)", db)
    o_id = count(server, db, "SELECT d_next_o_id - 1 FROM district WHERE d_id = 4")
    items = server.sql(f"SELECT ol_i_id FROM order_line WHERE ol_d_id = 4 AND ol_o_id = {o_id} ORDER BY ol_number", db)
    items = [int(i) for i in items.split()]
    assert len(items) == 12 and items == sorted(items)
    expected = server.sql(
        "SELECT round(sum(ol_amount) * (1 - c_discount) * (1 + w_tax + d_tax), 2) FROM order_line, customer, "
        f"warehouse, district WHERE ol_d_id = 4 AND ol_o_id = {o_id} AND (c_d_id, c_id) = (4, 17) AND d_id = 4 "
        "GROUP BY c_discount, w_tax, d_tax", db)
    assert total == expected
    assert server.sql(f"SELECT o_c_id, o_ol_cnt, o_all_local FROM orders WHERE o_d_id = 4 AND o_id = {o_id}",
                      db) == "17|12|1"
    # the same seed draws the same lines
    server.sql("SELECT tpcc_new_order(1, 5, 17, 12, 50, 1, 7911, 12345)", db)
    assert server.sql("SELECT ol_i_id FROM order_line WHERE ol_d_id = 5 AND ol_o_id = 3001 ORDER BY ol_number",
                      db).split() == [str(i) for i in items]

    # NewOrder with rbk = 1 rolls back, with no error, and is recorded
    before = tpcc.content_summary(server, db)
    assert server.sql("SELECT tpcc_new_order(1, 4, 17, 12, 1, 1, 7911, 99)", db) == ""
    assert server.sql("SELECT * FROM tpcc_rollbacks", db) == "1|4|17|99"
    assert tpcc.content_summary(server, db) == before

    # Payment by last name: of the district's customers with that name sorted by first name,
    # the one at position n/2 rounded up; a bad-credit customer's C_DATA starts with the payment
    name = count(server, db, "SELECT n FROM generate_series(0, 999) n WHERE (SELECT count(*) FROM customer "
                             "WHERE c_d_id = 2 AND c_last = tpcc_last_name(n)) = 4 LIMIT 1")
    chosen = server.sql(f"SELECT c_id FROM customer WHERE c_d_id = 2 AND c_last = tpcc_last_name({name}) "
                        "ORDER BY c_first", db).split()[1]
    server.sql(f"UPDATE customer SET c_credit = 'BC' WHERE c_d_id = 2 AND c_id = {chosen}", db)
    balance = server.sql(f"SELECT tpcc_payment(1, 3, 1, 2, 1, {name}, true, 12.34)", db)
    assert server.sql(f"SELECT c_balance, c_payment_cnt, c_data LIKE '{chosen} 2 1 3 1 12.34 %', "
                      f"length(c_data) <= 500 FROM customer WHERE c_d_id = 2 AND c_id = {chosen}", db) == \
        f"{balance}|2|t|t"
    assert balance == "-22.34"  # -10.00 at load
    assert server.sql("SELECT h_c_id, h_c_d_id, h_d_id, h_amount FROM history WHERE h_amount = 12.34", db) == \
        f"{chosen}|2|3|12.34"
    assert tpcc.consistency_violations(server, db) == []

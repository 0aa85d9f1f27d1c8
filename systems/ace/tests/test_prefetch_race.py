"""ACE's Reader reads the pages it predicts into private memory and puts them in the pool
afterwards. Meanwhile another process may read such a page, change it, write it and evict it:
the copy read before is then older than the file, and putting it in the pool would bring back
the page's older state (a lost update). Most likely this is what the CI run of 2026-11-28 met
in PostgreSQL's regression suite (Clock Sweep with ACE, a 1 MB pool), where a table lost its
index in the catalog (psql's describe of it in the domain test showed none).

Here the window is made wide on purpose (the developer setting ace_prefetch_install_delay holds
the prefetched pages back), and another session updates one of them, has it written and evicted
before they go in. Without the server's check of the page's writes (StrategyPageWrites), the
update is lost: the row reads 0 again."""

from __future__ import annotations

import threading
import time

import pytest

from ace.server import Server

pytestmark = pytest.mark.e2e

PAGES = 32  # the prefetching scan's table: one row a page
DELAY_MS = 15000  # the prefetched pages' wait: the other session's work takes about 1 s
CHURN_ROWS = 20000  # about 2,200 pages read through an index: the 512-buffer pool turns over


def test_a_page_written_while_its_prefetch_waits_is_not_brought_back(install, server_root):
    # a pool that a restart leaves with free buffers: the Reader prefetches only after a free
    # buffer or a dirty victim (thesis Algorithm 1)
    settings = {"shared_buffers": "4MB", "buffer_replacement_policy": "clock", "ace": True,
                "ace_prefetch": "sequential", "ace_n_e": 8, "fsync": False}
    with Server(install, server_root / "pg", settings) as server:
        server.sql("CREATE EXTENSION pg_buffercache")
        server.sql("CREATE TABLE t (id int PRIMARY KEY, n int NOT NULL, pad text) WITH (fillfactor = 10)")
        server.sql(f"INSERT INTO t SELECT i, 0, repeat('x', 800) FROM generate_series(1, {PAGES}) i")
        server.sql("CREATE TABLE churn (id int PRIMARY KEY, pad text)")
        server.sql(f"INSERT INTO churn SELECT i, repeat('y', 800) FROM generate_series(1, {CHURN_ROWS}) i")
        # the row on heap page 8: the scan below (pages 0-9) misses on pages 0-3 one by one,
        # then reads the next 7 pages ahead with the 4th or 5th (TaP), page 8 among them
        target = int(server.sql("SELECT id FROM t WHERE ctid = '(8,1)'"))
        server.stop()
        server.start()  # t is not in the pool: the scan misses, with free buffers

        def in_pool(session) -> bool:
            return session.sql("SELECT count(*) FROM pg_buffercache b JOIN pg_class c "
                               "ON b.relfilenode = pg_relation_filenode(c.oid) "
                               "WHERE c.relname = 't' AND b.relblocknumber = 8") != "0"

        scan = {}
        query = "SELECT sum(n) FROM t WHERE id BETWEEN 1 AND 10"

        def scan_t():
            try:
                with server.session() as reader:
                    reader.sql(f"SET ace_prefetch_install_delay = {DELAY_MS}; SET enable_seqscan = off; "
                               "SET enable_bitmapscan = off")
                    scan["sum"] = reader.sql(query)
            except Exception as error:  # reported below, in the test's thread
                scan["error"] = error

        reader = threading.Thread(target=scan_t)
        with server.session() as other:
            other.sql("SET enable_seqscan = off; SET enable_bitmapscan = off")
            reader.start()
            # the scan under way (its snapshot taken), however long its connection took; then
            # a moment for its first misses: it waits with its prefetched pages
            deadline = time.monotonic() + 60
            while other.sql(f"SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                            f"AND query LIKE '{query}%'") == "0" and reader.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            assert reader.is_alive() and not in_pool(other), ("the scan did not hold page 8 back", scan)
            other.sql(f"UPDATE t SET n = n + 1 WHERE id = {target}")  # reads page 8 and changes it
            other.sql("CHECKPOINT")  # writes it
            for _ in range(10):  # and evicts it
                other.sql(f"SELECT sum(length(pad)) FROM churn WHERE id BETWEEN 1 AND {CHURN_ROWS}")
                if not in_pool(other):
                    break
            evicted = not in_pool(other)
            held_back = reader.is_alive()
        reader.join()
        assert "error" not in scan, scan
        # the window was hit: page 8 was changed, written and evicted while the scan held it back
        assert evicted and held_back, (evicted, held_back)
        assert scan["sum"] == "0"  # the scan's snapshot predates the update
        assert server.sql(f"SELECT n FROM t WHERE id = {target}") == "1"
        server.sql("CREATE EXTENSION IF NOT EXISTS amcheck")
        server.sql("SELECT bt_index_check('t_pkey', true)")  # every index entry has its heap tuple


# Many clients at once, without a widened window: each update of a counter logs itself in the
# same transaction, so the counters must equal the log row for row, while other clients read
# ranges of the same table (index scans: the Reader prefetches) and of a larger one (the pool
# turns over and dirty pages are evicted, through ACE's batches). Every policy, about 8 s each.
# Without the check of the page's writes, 1 of 8 such runs (two of each policy) lost updates
# (LRU: 2 counters, 2026-11-28); with it, none of 16.
COUNTER_ROWS = 400  # 100 pages of 4 rows
CLIENTS = 16
TRANSACTIONS = 3000  # per client: about 16,000 updates in all


@pytest.mark.parametrize("policy", ["clock", "lru", "cflru", "lru_wsr"])
def test_no_update_is_lost_among_many_clients(install, server_root, policy):
    settings = {"shared_buffers": "1MB", "buffer_replacement_policy": policy, "ace": True, "ace_n_w": 8,
                "ace_n_e": 8, "ace_prefetch": "history", "fsync": False}
    scripts = {
        "update": f"\\set id random(1, {COUNTER_ROWS})\nBEGIN;\nUPDATE counters SET n = n + 1 WHERE id = :id;\n"
                  "INSERT INTO log VALUES (:id);\nEND;\n",
        "read": f"\\set a random(1, {COUNTER_ROWS})\nSELECT sum(n) FROM counters WHERE id BETWEEN :a AND :a + 60;\n",
        "churn": "\\set a random(1, 40000)\nSELECT sum(length(pad)) FROM churn WHERE id BETWEEN :a AND :a + 200;\n",
    }
    for name, text in scripts.items():
        (server_root / f"{name}.sql").write_text(text)
    with Server(install, server_root / "pg", settings) as server:
        server.sql("CREATE EXTENSION pg_ace")
        server.sql("CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL, pad text) WITH (fillfactor = 20)")
        server.sql(f"INSERT INTO counters SELECT i, 0, repeat('x', 300) FROM generate_series(1, {COUNTER_ROWS}) i")
        server.sql("CREATE TABLE log (id int NOT NULL)")
        server.sql("CREATE TABLE churn (id int PRIMARY KEY, pad text) WITH (fillfactor = 20)")
        server.sql("INSERT INTO churn SELECT i, repeat('y', 300) FROM generate_series(1, 40000) i")
        server.sql("SELECT pg_ace_reset()")
        run = server.client(["pgbench", "-n", "-c", str(CLIENTS), "-j", "2", "-t", str(TRANSACTIONS),
                             *[f"--file={server_root / name}.sql" for name in scripts], "postgres"], check=False)
        assert run.returncode == 0, run.stdout + run.stderr
        counters = server.counters()
        differing = server.sql(
            "SELECT count(*) FROM counters c FULL JOIN (SELECT id, count(*) AS n FROM log GROUP BY id) l "
            "USING (id) WHERE c.n IS DISTINCT FROM coalesce(l.n, 0)")
        logged = int(server.sql("SELECT count(*) FROM log"))
        server.sql("CREATE EXTENSION amcheck")
        for index in ("counters_pkey", "churn_pkey"):
            server.sql(f"SELECT bt_index_check('{index}', true)")
    assert differing == "0", f"{differing} counters differ from their log ({logged} updates logged)"
    assert logged > CLIENTS * TRANSACTIONS / 4  # a third of the transactions are updates
    # the Reader and the Writer were at work
    assert counters["prefetch_issued"] > 1000 and counters["ace_batches"] > 1000, counters

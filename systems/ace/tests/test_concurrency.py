"""ACE's I/O is really concurrent, on an emulated SSD (emussd) with known latencies and
k_r = k_w = 8: a batch of n_w <= k_w writes completes in about one write latency, not n_w
of them, and the device sees n_w writes in service at once; with n_w = 2 k_w a batch needs
two rounds of the device; and prefetching reads a sequential scan's pages 8 at a time."""

from __future__ import annotations

import json

import pytest

from ace.server import Server, hand_over
from emussd.harness import DEFAULT_BUILD_DIR, Mount, build, fuse_available

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.wall_clock,
    pytest.mark.skipif(not fuse_available(), reason="/dev/fuse is absent: emussd needs FUSE"),
]

READ_US = 5000
ALPHA = 2.0
WRITE_US = READ_US * ALPHA  # 10 ms per 8 KB page written
K_W = 8
PAGES = 400  # the table on the device: 3 MB, three times the 1 MB pool
SCAN_PAGES = 96  # the table the prefetching test scans, with its 4 MB pool (512 buffers) not full


@pytest.fixture(scope="module")
def emussd() -> str:
    return str(build(DEFAULT_BUILD_DIR))


def run_on_emulated_device(install, root, emussd, n_w):
    """A table on a tablespace on emussd, filled and then updated with ACE on (LRU, 1 MB pool):
    the pool's counters and the device's statistics."""
    settings = {"shared_buffers": "1MB", "buffer_replacement_policy": "lru", "ace": True, "ace_n_w": n_w,
                "checkpoint_timeout": "1h", "max_wal_size": "1GB", "checkpoint_flush_after": 0,
                "bgwriter_flush_after": 0, "backend_flush_after": 0}
    with Mount(emussd, root / "device", read_latency_us=READ_US, alpha=ALPHA, k_r=8, k_w=K_W,
               page_size=8192) as device:
        tablespace = device.mountpoint / "tablespace"
        tablespace.mkdir()
        hand_over(tablespace)  # chown through the mount: the server's user owns its files there
        with Server(install, root / "pg", settings) as server:
            server.sql(f"CREATE TABLESPACE slow LOCATION '{tablespace}'")
            server.sql("CREATE EXTENSION pg_ace")
            # 7 rows of 1 KB per 8 KB page
            server.sql("CREATE TABLE t (id int, pad text) WITH (fillfactor = 100) TABLESPACE slow")
            server.sql(f"INSERT INTO t SELECT g, repeat('x', 1000) FROM generate_series(1, {7 * PAGES}) g")
            server.sql("CREATE INDEX ON t (id)")
            server.sql("SELECT pg_ace_reset()")
            # every page dirtied once, through the index: a sequential scan of a table this much
            # larger than the pool would use a ring of buffers, which ACE leaves alone
            server.sql("SET enable_seqscan = off; SET enable_bitmapscan = off;"
                       "UPDATE t SET pad = repeat('y', 1000) WHERE id % 7 = 0 AND id > 0")
            counters = server.counters()
            pages = int(server.sql("SELECT pg_relation_size('t') / 8192"))
        stats = json.loads((device.mountpoint / ".emussd_stats").read_text())
    return counters, stats, pages


def batch_time_us(counters) -> tuple[float, float]:
    """Mean wall time of a write batch, and mean pages per batch."""
    batches = counters["ace_batches"]
    assert batches > 0, counters
    return counters["ace_batch_usec"] / batches, counters["ace_batch_pages"] / batches


def test_batch_of_k_w_writes_takes_one_write_latency(install, server_root, emussd):
    counters, stats, pages = run_on_emulated_device(install, server_root, emussd, n_w=K_W)
    mean_us, mean_pages = batch_time_us(counters)
    assert pages >= PAGES
    assert mean_pages >= 0.75 * K_W, counters  # batches are (nearly) full
    # one write latency, not mean_pages of them (which would be >= 6 latencies)
    assert 0.8 * WRITE_US <= mean_us <= 2.0 * WRITE_US, (mean_us, counters)
    # the device had k_w writes in service at the same time
    assert stats["ops"]["write"]["max_in_service"] == K_W, stats["ops"]["write"]


def test_batch_of_twice_k_w_writes_takes_two_rounds(install, server_root, emussd):
    counters, stats, _ = run_on_emulated_device(install, server_root, emussd, n_w=2 * K_W)
    mean_us, mean_pages = batch_time_us(counters)
    assert mean_pages >= 1.5 * K_W, counters
    # the device serves k_w at a time: about two write latencies per batch
    assert 1.6 * WRITE_US <= mean_us <= 3.5 * WRITE_US, (mean_us, counters)
    assert stats["ops"]["write"]["max_in_service"] == K_W
    assert stats["ops"]["write"]["max_queue_length"] >= K_W // 2  # the rest waited for the device


def scan_on_emulated_device(install, root, emussd, prefetch):
    """An index-ordered scan of a table on emussd right after a restart: the pool is not
    full, so with prefetching every miss of a sequential run also reads the next
    ace_n_e - 1 = 7 pages (thesis Algorithm 1, lines 10-12)."""
    settings = {"shared_buffers": "4MB", "buffer_replacement_policy": "lru", "ace": True, "ace_n_w": 8,
                "ace_n_e": 8, "ace_prefetch": prefetch}
    with Mount(emussd, root / "device", read_latency_us=READ_US, alpha=ALPHA, k_r=8, k_w=K_W,
               page_size=8192) as device:
        tablespace = device.mountpoint / "tablespace"
        tablespace.mkdir()
        hand_over(tablespace)
        with Server(install, root / "pg", settings) as server:
            server.sql(f"CREATE TABLESPACE slow LOCATION '{tablespace}'")
            server.sql("CREATE EXTENSION pg_ace")
            server.sql("CREATE TABLE t (id int, pad text) WITH (fillfactor = 100) TABLESPACE slow")
            server.sql(f"INSERT INTO t SELECT g, repeat('x', 1000) FROM generate_series(1, {7 * SCAN_PAGES}) g")
            server.sql("CREATE INDEX ON t (id)")
            server.stop()
            server.start()
            # one session, whose last result psql prints: the counters start after its catalog
            # lookups, and the executor times the scan
            plan = json.loads(server.sql(
                "SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT pg_ace_reset();"
                "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT sum(length(pad)) FROM t WHERE id > 0"))
            counters = server.counters()
    return counters, plan[0]["Execution Time"]


def test_prefetching_reads_ahead_concurrently(install, server_root, emussd):
    without, without_ms = scan_on_emulated_device(install, server_root / "off", emussd, "off")
    with_tap, with_ms = scan_on_emulated_device(install, server_root / "on", emussd, "sequential")
    assert without["prefetch_issued"] == 0
    # the sequential predictor read ahead, and what it read was used
    assert with_tap["prefetch_issued"] >= SCAN_PAGES / 2, with_tap
    assert with_tap["prefetch_used"] >= 0.9 * with_tap["prefetch_issued"], with_tap
    assert with_tap["misses"] < 0.5 * without["misses"], (with_tap, without)
    # pages read 8 at a time: the scan takes a fraction of the time
    assert with_ms < 0.5 * without_ms, (with_ms, without_ms)

"""The simulator against the patched PostgreSQL: a page trace recorded by the server
(buffer_trace_file), replayed through the simulator with the same pool size, policy and ACE
settings, gives the server's hit ratio.

The server's pool (shared_buffers = 2MB, 256 buffers) starts empty after a restart and serves
a single-client pgbench run (simple-update, 2000 transactions, a fixed seed) on a scale-2
database (about 3,300 pages of pgbench_accounts). pg_ace_counters() counts every request of
every process since the start, and so does the trace: its R lines are exactly those requests
(asserted), so the two hit ratios cover the same requests.

What the simulator cannot see, and how the setup keeps it out of the comparison:
- the background writer's and the checkpointer's writes make pages clean behind the policy's
  back (CFLRU, LRU-WSR and ACE depend on it): bgwriter_lru_maxpages = 0, and no checkpoint
  during the run (checkpoint_timeout = 1d);
- pages dirtied by hint bits (MarkBufferDirtyHint: visibility hints, index entries marked
  dead) are not W lines, and the first runs after loading also clear visibility-map bits and
  walk dead index entries with pins held across other requests (Clock Sweep counts a use
  only at a process's first pin; the simulator sees re-pins only when consecutive): two
  untraced runs of the same workload first bring the database to the state every later run
  finds. Without them the hit ratios differed by up to 0.001 (Clock Sweep 0.0009, LRU-WSR
  0.0010, CFLRU 0.0006, LRU 0; systems/ace/sim/README.md).
Tolerance: 0.001 absolute. In the steady state the list policies match request for request
and Clock Sweep within 0.0001 (re-pins and pinned buffers the trace cannot show); 0.001 is
ten times that, and half the smallest difference between two policies on this workload
(Clock Sweep and LRU, 0.0019), so running the wrong policy would fail the check.

The server is the other ACE tests' cassert build (conftest.py): the same patched server with
PostgreSQL's assertions on, which check the buffer manager's invariants and change none of its
decisions, and one PostgreSQL build fewer in the test run.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from ace.server import Server
from ace.sim import build as build_simulator
from ace.sim import run

pytestmark = pytest.mark.e2e

POOL_PAGES = 256
SETTINGS = {
    "shared_buffers": "2MB",  # 256 buffers of 8 kB
    "autovacuum": "off",
    "bgwriter_lru_maxpages": 0,
    "checkpoint_timeout": "1d",
    "max_wal_size": "1GB",
}
WORKLOAD = ["pgbench", "-n", "-c", "1", "-t", "2000", "--random-seed", "1", "-b", "simple-update", "postgres"]
TOLERANCE = 0.001

CONFIGURATIONS = [(policy, ace, prefetch)
                  for policy in ("clock", "lru", "cflru", "lru_wsr")
                  for ace, prefetch in ((False, "off"), (True, "off"), (True, "history"))]


@pytest.fixture(scope="module")
def simulator() -> Path:
    return build_simulator()


@pytest.fixture(scope="module")
def cluster(install):
    """A loaded scale-2 pgbench database, run twice (untraced) to its steady state."""
    root = Path(tempfile.mkdtemp(prefix="ace-sim-xc-", dir="/tmp"))
    root.chmod(0o755)  # mkdtemp's 0700 would shut the server's user out
    server = Server(install, root / "pg", SETTINGS)
    try:
        server.initdb()
        server.start()
        server.client(["pgbench", "-i", "-q", "-s", "2", "postgres"])
        server.sql("CREATE EXTENSION pg_ace")
        assert int(server.sql("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'")) == POOL_PAGES
        server.stop()
        for _ in range(2):
            server.start()
            server.client(WORKLOAD)
            server.stop()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("policy, ace, prefetch", CONFIGURATIONS,
                         ids=[f"{p}-{'ace' if a else 'noace'}-{f}" for p, a, f in CONFIGURATIONS])
def test_simulated_hit_ratio_matches_the_server(cluster, simulator, policy, ace, prefetch):
    trace = cluster.root / f"trace-{policy}-{int(ace)}-{prefetch}.csv"  # the server's user writes it
    cluster.configure({"buffer_replacement_policy": policy, "ace": ace, "ace_prefetch": prefetch,
                       "ace_n_w": 8, "ace_n_e": 8, "buffer_trace_file": str(trace)})
    cluster.start()
    try:
        cluster.client(WORKLOAD)
        counters = cluster.counters()
    finally:
        cluster.stop()  # every process flushes its part of the trace as it exits
    lines = trace.read_text().splitlines()
    requests = counters["hits"] + counters["misses"]
    reads = sum(1 for line in lines if line.endswith(",R"))
    # The counters' own session may still request pages after reading them; nothing else differs.
    assert 0 <= reads - requests <= 50, (reads, requests)
    server_ratio = counters["hits"] / requests

    row = run(simulator, policy=policy, ace=ace, prefetch=prefetch, n_w=8, n_e=8, pool_pages=POOL_PAGES,
              trace=trace)
    trace.unlink()
    assert row["accesses"] == reads
    assert row["w_nonresident"] == 0  # one client: a process dirties only pages it holds
    summary = (f"{policy} ace={ace} prefetch={prefetch}: server {server_ratio:.6f} "
               f"({counters['misses']} misses, {counters['dirty_victims']} dirty victims, "
               f"{counters['ace_batches']} batches, {counters['prefetch_issued']} prefetched), simulator "
               f"{row['hit_ratio']:.6f} ({row['misses']} misses, {row['dirty_evictions']} dirty victims, "
               f"{row['write_batches'] if ace else 0} batches, {row['prefetch_issued']} prefetched)")
    print(summary)
    assert abs(row["hit_ratio"] - server_ratio) <= TOLERANCE, summary


"""PostgreSQL's own regression suite, and pg_ace's, with each replacement policy, with and
without ACE, on a 1 MB pool (dirty evictions all the time) and with data checksums on."""

from __future__ import annotations

import pytest

from ace.regress import run_core_suite, run_pg_ace_suite
from ace.server import Server
from ace_cases import combinations, policy_settings

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("policy,ace", combinations())
def test_regression_suite_passes(install, server_root, policy, ace):
    settings = {**policy_settings(policy, ace), "fsync": False}  # durability is the crash test's
    with Server(install, server_root / "pg", settings) as server:
        run_core_suite(server, server_root / "regress")
        counters = server.counters()
        run_pg_ace_suite(server, server_root / "pg_ace")
        assert server.sql("SHOW buffer_replacement_policy") == policy
    # the suite did make the pool evict dirty pages, through ACE's batches when it is on
    assert counters["dirty_victims"] > 100
    if ace:
        assert counters["ace_batches"] > 0
        assert counters["ace_batch_pages"] > counters["ace_batches"]  # batches of more than one page
        assert counters["prefetch_issued"] > 0
    else:
        assert counters["ace_batches"] == counters["prefetch_issued"] == 0

"""ACE in PostgreSQL's smallest pools. Its batches and prefetches keep several buffers pinned
at once, in every process that runs one, so the server bounds them by the pool: at most
1 + shared_buffers / 8 pages a batch, an eighth of the pool over all processes together, and a
process that finds every buffer pinned while (or just after) ACE held some waits instead of
failing (systems/ace/README.md, "ACE's pins are bounded by the pool"). Whatever ace_n_w and ace_n_e,
PostgreSQL's isolation suite and several pgbench clients then pass at shared_buffers = 128kB
(16 buffers, PostgreSQL's minimum). Without the bound, with n_w = n_e = 64, the isolation suite
failed 8 (Clock Sweep, LRU) and 13 (CFLRU) of its 115 tests there with "no unpinned buffers
available" and could not create its database under LRU-WSR, and pgbench failed with 3 clients.
The settings that cannot do what they say warn at server start."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from ace.regress import run_isolation_suite
from ace.server import Server

pytestmark = pytest.mark.e2e

SMALLEST_POOL = "128kB"  # 16 buffers of 8 kB
LARGEST = 64  # ace_n_w's and ace_n_e's maximum (CONCURRENT_IO_MAX_BATCH)
POLICIES = ("clock", "lru", "cflru", "lru_wsr")
CLIENTS = 8  # half the smallest pool: ACE off, none of them ever lacked a buffer


def ace_settings(policy: str, shared_buffers: str = SMALLEST_POOL, n_w: int = LARGEST, n_e: int = LARGEST,
                 prefetch: str = "history", ace: bool = True) -> dict:
    return {"shared_buffers": shared_buffers, "buffer_replacement_policy": policy, "ace": ace,
            "ace_n_w": n_w, "ace_n_e": n_e, "ace_prefetch": prefetch, "fsync": False}


def largest_batch(counters: dict[str, int]) -> int:
    """The most pages any write batch had (pg_ace_counters' ace_batch_size_<n>)."""
    return max((int(name.rsplit("_", 1)[1]) for name in counters if name.startswith("ace_batch_size_")), default=0)


def isolation_suite(install, root, policy: str) -> dict[str, int]:
    """PostgreSQL's isolation suite against a server of the smallest pool with n_w = n_e = 64;
    the pool's counters afterwards."""
    with Server(install, root, ace_settings(policy)) as server:
        server.sql("CREATE EXTENSION pg_ace")
        run_isolation_suite(server, root / "isolation")
        effective = (server.sql("SHOW ace_n_w_effective"), server.sql("SHOW ace_n_e_effective"))
        return {**server.counters(), "n_w_effective": int(effective[0]), "n_e_effective": int(effective[1])}


# Each server runs the suite's 115 specs one after the other (the specs share object names);
# two servers run side by side (about 50 s on 2 cores). CI runs Clock Sweep (PostgreSQL's
# policy) and LRU-WSR (whose setup failed); `make test-ace-matrix` all four.
@pytest.mark.parametrize("policies", [pytest.param(("clock", "lru_wsr"), id="clock+lru_wsr"),
                                      pytest.param(("lru", "cflru"), id="lru+cflru", marks=pytest.mark.full_matrix)])
def test_isolation_suite_passes_in_the_smallest_pool(install, server_root, policies):
    with ThreadPoolExecutor(len(policies)) as pool:
        runs = {policy: pool.submit(isolation_suite, install, server_root / policy, policy) for policy in policies}
    failed = {policy: run.exception() for policy, run in runs.items() if run.exception() is not None}
    assert not failed, "\n\n".join(f"{policy}: {error}" for policy, error in failed.items())
    for policy, run in runs.items():
        counters = run.result()
        assert counters["n_w_effective"] == counters["n_e_effective"] == 3, (policy, counters)
        # ACE did batch and prefetch, never more than 1 + 16 / 8 pages at once
        assert counters["ace_batches"] > 0 and counters["prefetch_issued"] > 0, (policy, counters)
        assert 2 <= largest_batch(counters) <= 3, (policy, counters)


def expected_warnings(settings: dict, buffers: int) -> list[str]:
    limit = 1 + buffers // 8
    prefetch = settings["ace_prefetch"] != "off"
    said = []
    if prefetch and not settings["ace"]:
        said.append(f"ace_prefetch = {settings['ace_prefetch']} has no effect while ace = off")
    for name, verb, used in (("ace_n_w", "writes", True), ("ace_n_e", "reads", prefetch)):
        if settings["ace"] and used and settings[name] > limit:
            said.append(f"{name} = {settings[name]} is more than a buffer pool of {buffers} buffers allows: "
                        f"ACE {verb} at most {limit} pages at once")
    return said


def test_pgbench_clients_never_run_out_of_buffers(install, server_root):
    """pgbench's clients beside ACE's batches and prefetches in pools of 16-40 buffers, with
    n_w and n_e at the edges of their range and drawn at random, under every policy: no client
    fails, no batch is larger than the pool allows, SHOW ace_n_w_effective and
    ace_n_e_effective say what runs, and the start warns about each setting that does less
    than it says (and about nothing else)."""
    rng = random.Random(18)
    configurations = [
        ace_settings("lru_wsr", n_w=8, n_e=8),  # the defaults failed with 3 clients before the bound
        ace_settings("clock"),
        ace_settings("cflru", n_e=2),
        ace_settings("lru", "136kB", n_w=2, prefetch="sequential"),
        ace_settings("clock", "256kB", n_w=5, n_e=5),  # within the bound: nothing to say
        ace_settings("lru_wsr", prefetch="history", ace=False),  # prefetching needs ACE
        *[ace_settings(rng.choice(POLICIES), f"{rng.randint(16, 40) * 8}kB", rng.randint(1, LARGEST),
                       rng.randint(1, LARGEST), rng.choice(("off", "sequential", "history")))
          for _ in range(2)],
    ]
    server = Server(install, server_root / "pg", {"fsync": False}).initdb()
    server.start()
    try:
        server.client(["pgbench", "-i", "-q", "-s", "1", "postgres"])
        server.sql("CREATE EXTENSION pg_ace")
        # the effective values are the server's to say, not settings
        refused = server.client(["psql", "-X", "-c", "SET ace_n_w_effective = 2"], check=False)
        assert refused.returncode != 0 and 'parameter "ace_n_w_effective" cannot be changed' in refused.stderr
    finally:
        server.stop()
    for settings in configurations:
        server.configure(settings)
        log_start = server.log_path.stat().st_size
        server.start()
        try:
            buffers = int(server.sql("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'"))
            limit = 1 + buffers // 8
            prefetching = settings["ace"] and settings["ace_prefetch"] != "off"
            effective = (int(server.sql("SHOW ace_n_w_effective")), int(server.sql("SHOW ace_n_e_effective")))
            server.sql("SELECT pg_ace_reset()")
            run = server.client(["pgbench", "-n", "-c", str(CLIENTS), "-j", "2", "-T", "3", "postgres"], check=False)
            counters = server.counters()
        finally:
            server.stop()
        log = server.log_path.read_bytes()[log_start:].decode(errors="replace")
        said = [line.split("WARNING:", 1)[1].strip() for line in log.splitlines() if "WARNING:" in line]
        assert run.returncode == 0 and "error" not in run.stderr.lower(), (settings, run.stdout + run.stderr)
        assert "no unpinned buffers" not in log, (settings, log[-3000:])
        assert effective == (min(settings["ace_n_w"], limit) if settings["ace"] else 1,
                             min(settings["ace_n_e"], limit) if prefetching else 1), settings
        assert said == expected_warnings(settings, buffers), (settings, log)
        if said:
            assert "HINT:" in log, log  # a warning says what to do
        if settings["ace"]:
            assert counters["ace_batches"] > 0 and largest_batch(counters) <= effective[0], (settings, counters)
        else:
            assert counters["ace_batches"] == counters["prefetch_issued"] == 0, (settings, counters)


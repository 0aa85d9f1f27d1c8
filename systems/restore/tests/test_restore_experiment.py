"""The experiment driver on tiny grids (columns, shapes, normalization), the analytic figures,
the emulator cross-check (e2e) and the claims' direction on a small static workload (reported)."""

from __future__ import annotations

import math

import pytest

from restore import experiment as ex

TINY = {"pages": 1000, "requests": 20_000, "jobs": 2}


def test_fig_6_4_memberships_cross_at_the_mean():
    rows = ex.fig_6_4({"pairs": [[0.5, 1.0]], "points": 11})
    assert list(rows[0]) == ex.FIG_6_4_COLUMNS
    at_mean = [r for r in rows if r["x"] == pytest.approx(0.5)]
    assert [r["membership"] for r in at_mean] == [pytest.approx(0.5), pytest.approx(0.5)]
    large = {r["x"]: r["membership"] for r in rows if r["category"] == "Large"}
    assert large[0.6] == pytest.approx(1 / (1 + math.exp(-1)))


def test_fig_6_5_temperature_trace(binary):
    rows = ex.fig_6_5({"binary": binary})
    assert list(rows[0]) == ex.FIG_6_5_COLUMNS
    assert len(rows) == 1000 and sum(r["requested"] for r in rows) == 100
    temps = [r["temperature"] for r in rows]
    assert 0 <= min(temps) and max(temps) < 1
    first = next(i for i, r in enumerate(rows) if r["requested"])
    assert temps[first] == pytest.approx(1 - 0.5 * math.exp(-0.2), abs=1e-6)


def test_fig_6_8_grid_shape_and_columns(binary):
    rows = ex.fig_6_8({**TINY, "binary": binary, "workloads": ["5hf90", "10hf80"],
                       "tier_grid": {"t1_pct": [1, 6], "t2_pct": [8]}})
    assert len(rows) == 2 * 2 * 7
    assert list(rows[0]) == ex.FIG_6_8_COLUMNS
    r = next(r for r in rows if r["workload"] == "10hf80" and r["t1_pct"] == 6 and r["policy"] == "tlfu")
    assert r["capacity_pages"] == "60:80:1000"
    assert all(r["migrations_total"] == 0 for r in rows if r["policy"] == "static")


def test_fig_6_11_and_6_12_normalization(binary):
    rows = ex.fig_6_11({**TINY, "binary": binary, "read_pcts": [10, 90], "policies": ["static", "restore"]})
    assert {(r["asymmetry"], r["alpha"]) for r in rows} == {("asymmetric", "1.5:2:4"), ("symmetric", "1")}
    assert list(rows[0]) == ex.FIG_6_11_COLUMNS
    rows = ex.fig_6_12({**TINY, "binary": binary, "groups": [[500, 5000], [2000, 20000]],
                        "policies": ["static", "tlfu"]})
    assert list(rows[0]) == ex.FIG_6_12_COLUMNS
    assert [r["normalized_data_access"] for r in rows if r["policy"] == "static"] == [1.0, 1.0]


def test_fig_6_13_table_6_5_and_fig_6_7_with_a_trace(binary, tmp_path):
    trace = tmp_path / "mine.csv"
    trace.write_text("page,op\n" + "".join(f"{(i * 7) % 50},{'R' if i % 4 else 'W'}\n" for i in range(2000)))
    params = {**TINY, "binary": binary, "traces": {"mine": {"path": str(trace), "capacity_pct": [10, 20, 100]}},
              "policies": ["static", "tlfu", "restore"]}
    rows = ex.fig_6_13(params)
    assert list(rows[0]) == ex.FIG_6_13_COLUMNS
    assert {r["trace"] for r in rows} == {"ycsb", "mine"}
    stats = {r["trace"]: r for r in ex.table_6_5(params)}
    assert stats["mine"]["unique_pages"] == 50 and stats["mine"]["operations"] == 2000
    assert stats["ycsb"]["operations"] == TINY["requests"]
    freq = ex.fig_6_7(params)
    assert sum(r["pages"] for r in freq if r["trace"] == "mine") == 50


def test_table_6_6_reports_cpu_and_memory(binary):
    rows = ex.table_6_6({**TINY, "binary": binary, "repeats": 1})
    assert list(rows[0]) == ex.TABLE_6_6_COLUMNS
    assert all(r["overhead_us_per_access"] > 0 for r in rows)
    mem = {r["policy"]: r["policy_memory_bytes"] for r in rows}
    assert mem["restore"] > mem["temp"] > mem["static"]
    # measured by the allocator, near what each policy counts (its vectors' capacity, the chunks' overhead;
    # small chunks freed into glibc's per-thread cache still count as in use: a few KiB at this size)
    heap = {r["policy"]: r["policy_heap_bytes"] for r in rows}
    assert all(abs(heap[p] - mem[p]) <= max(4096, 0.1 * mem[p]) for p in mem)
    assert heap["restore"] > heap["temp"] > heap["lrfu"] > heap["tlfu"]


def test_rank_agreement_counts_only_clear_discordances():
    rows = [{"engine": "sim", "policy": "a", "data_access_us": 100},
            {"engine": "sim", "policy": "b", "data_access_us": 102},
            {"engine": "sim", "policy": "c", "data_access_us": 200},
            {"engine": "emu", "policy": "a", "data_access_us": 105},
            {"engine": "emu", "policy": "b", "data_access_us": 103},
            {"engine": "emu", "policy": "c", "data_access_us": 90}]
    out = ex.rank_agreement(rows, tolerance=0.05)
    assert out["discordant_pairs"] == 3
    assert out["violations"] == [("a", "c"), ("b", "c")]  # a/b is a near-tie in the simulator


@pytest.mark.e2e
@pytest.mark.wall_clock  # the emulator sleeps: its policies' order comes from the clock
def test_emulator_ranks_policies_as_the_simulator(binary):
    """Both engines on 1e4 requests (100 us-scale sleeps). The rule-based policies make the same
    decisions in both engines (their decisions do not depend on time), so their migration counts
    must be equal and their order must agree except for near-ties (< 10 % apart in the simulator:
    each sleep overshoots by tens of us, a third of Tier 1's 30 us read, which moves policies whose
    requests fall on the tiers in other proportions by several percent; TEMP and tLRU, 5.3 % apart
    in the simulator, swapped in one CI run on 2026-11-27).
    ReStore's decisions depend on the observed queues and response times, which differ between
    virtual and real time; its position in both engines is reported, not asserted."""
    rows = ex.crosscheck({"binary": binary, "repeats": 3})  # the emulator's times: medians of 3 runs
    sim = {r["policy"]: r for r in rows if r["engine"] == "sim"}
    emu = {r["policy"]: r for r in rows if r["engine"] == "emu"}
    assert {r["runs"] for r in sim.values()} == {1} and {r["runs"] for r in emu.values()} == {3}
    assert all(r["spread"] == 0 for r in sim.values()) and all(r["spread"] >= 0 for r in emu.values())
    for policy in ex.POLICIES:
        if policy != "restore":
            assert sim[policy]["migrations_total"] == emu[policy]["migrations_total"], policy
    fixed = [r for r in rows if r["policy"] != "restore"]
    agreement = ex.rank_agreement(fixed, tolerance=0.10)
    print("rank agreement without restore:", agreement)
    print("restore rank: sim", sim["restore"]["rank"], "emu", emu["restore"]["rank"],
          "| with restore:", ex.rank_agreement(rows, tolerance=0.05))
    assert agreement["violations"] == []


def test_claims_direction_on_a_small_static_workload(binary):
    """The thesis's claims that ReStore is fastest (L2011), tLRU and LRFU slowest (L2013), its CPU
    time highest (L2056) and its migrations fewest (L2015), on 5hf90 (1e4 pages, 2e5 requests, 3 %/8 %):
    reported in the test output, not asserted (the claims checker evaluates them on the experiment's CSVs).
    Only mechanism facts that any correct implementation must show are asserted."""
    rows = ex.fig_6_8({"binary": binary, "pages": 10_000, "requests": 200_000, "workloads": ["5hf90"],
                       "tier_grid": {"t1_pct": [3], "t2_pct": [8]}})
    by = {r["policy"]: r for r in rows}
    order = sorted(by, key=lambda p: by[p]["runtime_us"])
    adaptive = [p for p in ex.POLICIES if p != "static"]
    report = {
        "runtime_order": order,
        "claim1_restore_best_adaptive": min(adaptive, key=lambda p: by[p]["runtime_us"]) == "restore",
        "claim3_tlru_lrfu_worst": set(order[-2:]) == {"tlru", "lrfu"},
        "claim4_restore_highest_cpu": max(by, key=lambda p: by[p]["overhead_us_per_access"]) == "restore",
        "claim5_restore_fewest_migrations": min(adaptive, key=lambda p: by[p]["migrations_total"]) == "restore",
        "migrations": {p: by[p]["migrations_total"] for p in adaptive},
    }
    print("claims direction (5hf90, 3%/8%):", report)
    assert by["static"]["migrations_total"] == 0
    assert by["static"]["data_access_us"] <= min(by[p]["data_access_us"] for p in adaptive)

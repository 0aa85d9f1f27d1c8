"""The automatic alpha/k rule and the adaptive thread search, on curves with known answers."""

import pytest

from pio import bench, characterize

RULE = characterize.Rule(max_threads=256, plateau_growth=0.10, saturation_fraction=0.95, latency_knee_factor=1.2)


def emulated_curve(k: int, service_s: float):
    """A device with k servers: bandwidth grows linearly up to k, then stays flat (like emussd)."""
    return lambda threads: min(threads, k) / service_s * 4096


def rows_for(op: str, k: int, service_s: float, measured: dict[int, float], steady="unchecked"):
    return [{"device": "d", "op": op, "pattern": "random", "block_size": 4096, "threads": t, "iodepth": 1,
             "iops": bw / 4096, "bandwidth_bytes_s": bw, "lat_mean_us": service_s * 1e6 * max(1, t / k),
             "steady_state": steady} for t, bw in measured.items()]


@pytest.mark.parametrize("k", [1, 2, 5, 6, 11, 19, 25, 80, 100])
def test_search_finds_k_of_a_linear_then_flat_device_with_few_points(k):
    measured = characterize.search_threads(emulated_curve(k, 0.002), RULE)
    rows = rows_for("read", k, 0.002, measured)
    found = characterize.saturation_row(rows, RULE)["threads"]
    assert abs(found - k) <= 0.05 * k + 1e-9  # 0.95 of the plateau is reached at ceil(0.95 k)
    assert len(measured) <= 2 * (k.bit_length() + 2)  # doubling plus bisection, not a dense grid
    assert 0.9 * k <= characterize.latency_knee(rows, RULE) <= 1.2 * k  # within the measured grid
    assert characterize.saturated(rows, RULE)


def test_a_device_still_growing_at_max_threads_is_reported_unsaturated():
    rule = characterize.Rule(max_threads=16, plateau_growth=0.1, saturation_fraction=0.95, latency_knee_factor=1.2)
    measured = characterize.search_threads(emulated_curve(80, 0.002), rule)
    assert max(measured) == 16
    assert not characterize.saturated(rows_for("read", 80, 0.002, measured), rule)


def test_estimate_gives_the_cost_ratio_and_the_bandwidth_ratio():
    # alpha 2 per request, k_r 10, k_w 4: bandwidth ratio = 2 * 10 / 4 = 5, cost ratio = 2.
    reads = rows_for("read", 10, 0.001, characterize.search_threads(emulated_curve(10, 0.001), RULE))
    writes = rows_for("write", 4, 0.002, characterize.search_threads(emulated_curve(4, 0.002), RULE), "reached")
    row = characterize.estimate("d", "random", 4096, reads, writes, RULE)
    assert (row["k_r"], row["k_w"]) == (10, 4)
    assert row["alpha"] == pytest.approx(5.0)
    assert row["alpha_cost"] == pytest.approx(2.0)
    assert row["read_gain"] == pytest.approx(10.0)
    assert row["read_lat_1_us"] == pytest.approx(1000.0)
    assert row["write_steady_state"] == "reached"
    assert set(row) == set(characterize.ALPHA_K_COLUMNS)


def test_one_write_point_without_steady_state_taints_alpha():
    writes = rows_for("write", 4, 0.002, {1: 2e6, 2: 4e6, 4: 8e6, 8: 8e6}, "reached")
    writes[-1]["steady_state"] = "not reached"
    assert characterize.combined_steady_state(writes, 4) == "not reached"
    assert characterize.combined_steady_state(writes[:3], 4) == "reached"


def test_estimate_needs_both_sides():
    with pytest.raises(ValueError, match="both a read and a write"):
        characterize.estimate("d", "random", 4096, [], rows_for("write", 4, 0.002, {1: 1.0}), RULE)


@pytest.mark.parametrize("bad", [dict(max_threads=0), dict(saturation_fraction=1.5), dict(latency_knee_factor=1.0)])
def test_invalid_rules_are_refused(bad):
    with pytest.raises(ValueError):
        characterize.Rule(**{**RULE.__dict__, **bad})


def test_writeback_batches_cover_k_w_and_beyond():
    assert bench.writeback_batches(8, 2) == [1, 2, 4, 7, 8, 9, 16]
    assert bench.writeback_batches(5, 2) == [1, 2, 4, 5, 6, 8, 10]
    assert bench.writeback_batches(1, 2) == [1, 2]


def test_later_experiments_read_a_measured_device(tmp_path):
    from ssdartifact.tidy import write_csv

    row = characterize.estimate("emu", "random", 4096,
                                rows_for("read", 10, 0.001, characterize.search_threads(emulated_curve(10, 0.001), RULE)),
                                rows_for("write", 4, 0.002, characterize.search_threads(emulated_curve(4, 0.002), RULE)),
                                RULE)
    write_csv(tmp_path / "alpha_k.csv", characterize.ALPHA_K_COLUMNS, [row])
    measured = characterize.measured_device(tmp_path / "alpha_k.csv", "emu")
    assert measured == {"alpha": pytest.approx(2.0), "k_r": 10, "k_w": 4, "read_saturated": True,
                        "write_saturated": True}
    with pytest.raises(LookupError, match="characterize it first"):
        characterize.measured_device(tmp_path / "alpha_k.csv", "emu", block_size=8192)


def test_a_run_slowed_by_the_host_is_measured_again_and_the_faster_run_kept():
    k, calls = 11, []
    curve = emulated_curve(k, 0.004)

    def disturbed(threads):
        calls.append(threads)
        slowed = calls.count(threads) == 1 and threads in (12, 16)  # the first run at 12 and 16 is slowed
        return curve(threads) * (0.85 if slowed else 1.0)

    measured = characterize.search_threads(disturbed, RULE)
    rows = rows_for("read", k, 0.004, measured)
    assert characterize.saturation_row(rows, RULE)["threads"] == k
    assert measured[16] == curve(16) and calls.count(16) == 2  # retried, the faster run kept
    assert calls.count(1) == 1  # points that pass their test are run once


def test_the_peak_is_robust_to_one_lucky_run():
    assert characterize.peak_bandwidth([1.0, 2.0, 10.0, 10.1, 13.0]) == 10.1
    assert characterize.peak_bandwidth([5.0]) == 5.0
    assert characterize.peak_bandwidth([5.0, 7.0]) == 5.0

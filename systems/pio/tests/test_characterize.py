"""The automatic alpha/k rule and the adaptive thread search, on curves with known answers."""

import random

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


@pytest.mark.parametrize("bad", [dict(max_threads=0), dict(saturation_fraction=1.5), dict(latency_knee_factor=1.0),
                                 dict(plateau_doublings=0)])
def test_invalid_rules_are_refused(bad):
    with pytest.raises(ValueError):
        characterize.Rule(**{**RULE.__dict__, **bad})


def test_the_writeback_app_runs_150_operations_at_batch_1_on_a_slow_device():
    app, point = {"read_fraction": 0.5}, {"runtime_ms": 300}
    slow = {"read_lat_1_us": 6200.0, "write_lat_1_us": 12400.0}  # a 2 ms device dilated 3.1 times
    assert bench.writeback_seconds(app, point, slow) == pytest.approx(150 * 9300e-6)
    assert bench.writeback_seconds(app, point, {"read_lat_1_us": 90.0, "write_lat_1_us": 30.0}) == 0.3


def test_writeback_batches_cover_k_w_and_beyond():
    assert bench.writeback_batches(8, 2) == [1, 2, 4, 7, 8, 9, 16]
    assert bench.writeback_batches(5, 2) == [1, 2, 4, 5, 6, 8, 10]
    assert bench.writeback_batches(1, 2) == [1, 2]


def test_later_experiments_read_a_measured_device(tmp_path):
    from ssdartifact.tidy import write_csv

    reads = rows_for("read", 10, 0.001, characterize.search_threads(emulated_curve(10, 0.001), RULE))
    writes = rows_for("write", 4, 0.002, characterize.search_threads(emulated_curve(4, 0.002), RULE))
    row = characterize.estimate("emu", "random", 4096, reads, writes, RULE)
    write_csv(tmp_path / "alpha_k.csv", characterize.ALPHA_K_COLUMNS, [row])
    measured = characterize.measured_device(tmp_path / "alpha_k.csv", "emu")
    assert measured == {"alpha": pytest.approx(2.0), "k_r": 10, "k_w": 4, "read_saturated": True,
                        "write_saturated": True}
    with pytest.raises(LookupError, match="characterize it first"):
        characterize.measured_device(tmp_path / "alpha_k.csv", "emu", block_size=8192)


def test_a_run_slowed_by_the_host_is_measured_again_and_the_median_kept():
    k, calls = 11, []
    curve = emulated_curve(k, 0.004)

    def disturbed(threads):
        calls.append(threads)
        slowed = calls.count(threads) == 1 and threads in (12, 16)  # the first run at 12 and 16 is slowed
        return curve(threads) * (0.85 if slowed else 1.0)

    measured = characterize.search_threads(disturbed, RULE)
    rows = rows_for("read", k, 0.004, measured)
    assert characterize.saturation_row(rows, RULE)["threads"] == k
    assert measured[16] == curve(16) and calls.count(16) == 3  # settled: the median of three runs
    assert calls.count(1) == 1  # points that pass their test are run once


# Synthetic curves with known k on which the rule must stay right (issue 18): each of these
# gave a wrong k with the previous rule (median of the three highest points, one flat doubling).

def k_found(curve, k, service_s=0.002, rule=RULE):
    measured = characterize.search_threads(curve, rule)
    return characterize.saturation_row(rows_for("read", k, service_s, measured), rule)["threads"], measured


@pytest.mark.parametrize("k", [4, 6, 16, 32, 100])
def test_k_stays_right_when_throughput_dips_after_its_peak(k):
    """Past k the bandwidth falls (to 0.5 of the peak at 4k, like emussd's collapse on 2 cores)."""
    def dipping(threads):
        return (emulated_curve(k, 0.002)(threads) * (k / threads) ** 0.5 if threads > k
                else emulated_curve(k, 0.002)(threads))
    found, measured = k_found(dipping, k)
    assert abs(found - k) <= 0.05 * k + 1e-9, (found, measured)


def test_k_stays_right_on_a_noisy_device():
    """Every run is off by up to 3 % either way, and one in ten is slowed by 15 % (the host): over
    280 sweeps (k from 2 to 128, 40 seeds), k is within 10 % + 1 in at least 97 % (the previous
    rule: 94.6 %; a point whose runs are mostly slowed cannot be told from a slower device)."""
    wrong = []
    for k in (2, 5, 11, 19, 32, 80, 128):
        for seed in range(40):
            rng = random.Random(seed * 1000 + k)
            curve = emulated_curve(k, 0.002)

            def noisy(threads, rng=rng, curve=curve):
                slowed = 0.85 if rng.random() < 0.1 else 1.0
                return curve(threads) * rng.uniform(0.97, 1.03) * slowed
            found, _ = k_found(noisy, k)
            if abs(found - k) > 0.1 * k + 1:
                wrong.append((k, seed, found))
    assert len(wrong) <= 0.03 * 280, wrong


def test_one_lucky_run_at_the_best_point_does_not_raise_the_peak():
    k, calls = 8, []
    curve = emulated_curve(k, 0.002)

    def lucky(threads):
        calls.append(threads)
        return curve(threads) * (1.15 if threads == 32 and calls.count(32) == 1 else 1.0)
    found, measured = k_found(lucky, k)
    assert found == k and measured[32] == curve(32), (found, measured)


def test_a_device_saturated_from_one_thread_has_k_1():
    found, measured = k_found(lambda threads: 1e6, 1)
    assert found == 1 and max(measured) <= 4, measured


def test_a_device_that_saturates_in_steps_is_followed_past_its_first_plateau():
    """60 % of the bandwidth from 4 threads, flat to 8, then growing to the full bandwidth at 32."""
    def staircase(threads):
        first = 0.6 * min(threads, 4) / 4
        return 1e8 * (first if threads <= 8 else 0.6 + 0.4 * min(threads - 8, 24) / 24)
    found, measured = k_found(staircase, 32)
    assert found == 29, (found, measured)  # the fewest threads reaching 95 % of the full bandwidth


def test_the_peak_is_the_best_point():
    assert characterize.peak_bandwidth([1.0, 2.0, 10.0, 10.1, 13.0]) == 13.0
    assert characterize.peak_bandwidth([5.0]) == 5.0

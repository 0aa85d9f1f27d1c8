"""The PIO model against the thesis's worked numbers (T636, T645), Eq. 2.1 (T470-474), and values
computed from the thesis's closed forms (T636, T645, T656)."""

import math

import pytest
from hypothesis import given, strategies as st

from pio import model

# (f_r, alpha, k) -> value printed in the thesis (2 decimals) or recomputed to 4.
BATCHABLE_WRITES = {
    (0.5, 8, 8): 4.5,      # Figure 3.2C, T636
    (0.5, 1, 8): 1.7778,   # Figure 3.2C, T636 ("1.78x")
    (0.5, 2, 8): 2.4000,
    (0.5, 4, 8): 3.3333,
    (0.1, 1, 8): 4.7059,
    (0.1, 2, 8): 5.8462,
    (0.1, 4, 8): 6.7273,
    (0.1, 8, 8): 7.3000,
}
BATCHABLE_READS = {
    (0.5, 1, 8): 1.7778,   # Figure 3.3C, T645 ("1.78x")
    (0.5, 8, 8): 1.1077,   # Figure 3.3C, T645 ("1.11x")
    (0.5, 2, 8): 1.4118,
    (0.5, 4, 8): 1.2121,
    (0.9, 1, 8): 4.7059,
    (0.9, 2, 8): 3.5200,
    (0.9, 4, 8): 2.5366,
    (0.9, 8, 8): 1.8630,
}


@pytest.mark.parametrize(("args", "expected"), BATCHABLE_WRITES.items())
def test_speedup_batchable_writes_matches_thesis(args, expected):
    assert model.speedup_batchable_writes(*args) == pytest.approx(expected, abs=5e-5)


@pytest.mark.parametrize(("args", "expected"), BATCHABLE_READS.items())
def test_speedup_batchable_reads_matches_thesis(args, expected):
    assert model.speedup_batchable_reads(*args) == pytest.approx(expected, abs=5e-5)


def test_thesis_rounded_numbers():
    assert round(model.speedup_batchable_writes(0.5, 8, 8), 2) == 4.5
    assert round(model.speedup_batchable_writes(0.5, 1, 8), 2) == 1.78
    assert round(model.speedup_batchable_reads(0.5, 1, 8), 2) == 1.78
    assert round(model.speedup_batchable_reads(0.5, 8, 8), 2) == 1.11


def test_pcie_ssd_example():
    # PCIe SSD of Table 2.2 (T556-564: alpha 2.8, k_r 80, k_w 8), f_r = 0.5; the thesis prints no
    # speedup for it: values computed from T636, T645 and T656.
    assert model.speedup_batchable_writes(0.5, 2.8, 8) == pytest.approx(2.8148, abs=5e-5)
    assert model.speedup_batchable_reads(0.5, 2.8, 80) == pytest.approx(1.3511, abs=5e-5)
    assert model.speedup_batchable_both(0.5, 2.8, 80, 8) == pytest.approx(10.4828, abs=5e-5)


def test_closed_forms_equal_generic_speedup():
    # The thesis's rearranged forms (T636, T645, T656) equal the generic definition.
    f_r, a, k_r, k_w = 0.3, 2.8, 16, 6
    f_w = 1 - f_r
    assert model.speedup_batchable_writes(f_r, a, k_w) == pytest.approx(1 + (k_w - 1) * f_w * a / (k_w * f_r + f_w * a))
    assert model.speedup_batchable_reads(f_r, a, k_r) == pytest.approx(1 + (k_r - 1) * f_r / (f_r + k_r * f_w * a))
    assert model.speedup_batchable_both(f_r, a, k_r, k_w) == pytest.approx(
        k_r * k_w * (f_r + f_w * a) / (k_w * f_r + k_r * f_w * a))


def test_cost_per_operation():
    assert model.cost_per_operation(1.0, model.Device(8)) == 1.0
    assert model.cost_per_operation(0.0, model.Device(8)) == 8.0
    assert model.cost_per_operation(0.5, model.Device(3)) == 2.0


@given(f_r=st.floats(0, 1), alpha=st.floats(1, 100), k=st.integers(1, 256))
def test_speedup_bounds(f_r, alpha, k):
    # T636: 1 <= S_PIO <= k_w; T645: 1 <= S'_PIO <= k_r; T656: S'' = k when k_r = k_w = k.
    assert 1 - 1e-9 <= model.speedup_batchable_writes(f_r, alpha, k) <= k + 1e-9
    assert 1 - 1e-9 <= model.speedup_batchable_reads(f_r, alpha, k) <= k + 1e-9
    assert model.speedup_batchable_both(f_r, alpha, k, k) == pytest.approx(k)


def test_only_reads_or_only_writes():
    # T636: for a workload of only reads or only writes the speedup does not depend on alpha.
    for alpha in (1, 2, 8):
        assert model.speedup_batchable_writes(1.0, alpha, 8) == pytest.approx(1.0)
        assert model.speedup_batchable_writes(0.0, alpha, 8) == pytest.approx(8.0)
        assert model.speedup_batchable_reads(1.0, alpha, 8) == pytest.approx(8.0)
        assert model.speedup_batchable_reads(0.0, alpha, 8) == pytest.approx(1.0)


def test_expected_empty_channels():
    # Eq. 2.1 (T470) exactly, E_m = n ((n - 1) / n)^m; T474 rounds m = n to 37 % and m = 3n to 0.05.
    assert model.expected_empty_channels(8, 0) == 8
    assert model.expected_empty_channels(8, 8) / 8 == pytest.approx(0.3436, abs=5e-5)
    assert model.expected_empty_channels(8, 24) / 8 == pytest.approx(0.0406, abs=5e-5)
    assert model.expected_empty_channels(16, 48) / 16 == pytest.approx(0.0451, abs=5e-5)
    assert model.expected_empty_channels(32, 96) / 32 == pytest.approx(0.0475, abs=5e-5)
    # T472: E_m / n tends to e^(-m/n) for many channels.
    assert model.expected_empty_channels(10_000, 30_000) / 10_000 == pytest.approx(math.exp(-3), rel=1e-3)


@pytest.mark.parametrize("bad", [
    lambda: model.Device(0.5),
    lambda: model.Device(2, k_r=0),
    lambda: model.speedup_batchable_writes(1.5, 2, 4),
    lambda: model.expected_empty_channels(0, 1),
])
def test_invalid_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        bad()

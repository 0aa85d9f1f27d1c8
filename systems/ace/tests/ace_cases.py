"""The settings and combinations the ACE correctness tests run with."""

from __future__ import annotations

import pytest

# ACE's settings for the correctness tests: a 1 MB pool (128 buffers), so that dirty
# evictions, and so ACE's batches, happen all the time.
SMALL_POOL = {"shared_buffers": "1MB", "ace_n_w": 8}

# (policy, ACE on): CI runs these three (ACE's batches over a list policy and over Clock
# Sweep, and a list policy alone); `make test-ace-matrix` runs all eight.
CI_COMBINATIONS = [("lru_wsr", True), ("clock", True), ("cflru", False)]
ALL_COMBINATIONS = [(policy, ace) for policy in ("clock", "lru", "cflru", "lru_wsr") for ace in (True, False)]


def combinations():
    """pytest parameters: the CI combinations, and the others marked full_matrix."""
    return [pytest.param(policy, ace, id=f"{policy}-{'ace' if ace else 'noace'}",
                         marks=() if (policy, ace) in CI_COMBINATIONS else pytest.mark.full_matrix)
            for policy, ace in ALL_COMBINATIONS]


def policy_settings(policy: str, ace: bool) -> dict:
    """ACE on means its Writer and its Reader: prefetching with both predictors (history
    falls back from TaP), so that every code path runs under the tests."""
    ace_settings = {"ace_prefetch": "history", "ace_n_e": 8} if ace else {}
    return {**SMALL_POOL, "buffer_replacement_policy": policy, "ace": ace, **ace_settings}

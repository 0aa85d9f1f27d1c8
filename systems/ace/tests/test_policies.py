"""The replacement policies' eviction order, and ACE's choice of the pages to write, on
the thesis's worked examples: the patched freelist.c itself, on buffer pools set up by
hand (freelist_harness.c), so that every state of the example is exact.

Pages are listed as the thesis draws them turned around: least recently used first
(Clock Sweep: buffer order from the clock hand). D = dirty, W = LRU-WSR's cold flag,
P = pinned, U<n> = usage count."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ace.build import source_tree

pytestmark = pytest.mark.e2e  # needs the patched source tree (the cassert build)

HARNESS = Path(__file__).with_name("freelist_harness.c")


@pytest.fixture(scope="module")
def harness(install, tmp_path_factory) -> Path:
    source = source_tree(install)
    binary = tmp_path_factory.mktemp("harness") / "freelist_harness"
    compiled = subprocess.run(["gcc", "-O1", "-Wall", "-Wno-unused-function",
                               f"-I{install / 'include/postgresql/server'}",
                               f"-iquote{source / 'src/backend/storage/buffer'}", "-o", str(binary), str(HARNESS)],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    return binary


def choose(harness: Path, policy: str, n_w: int, pages: str, window: float = 1 / 3) -> dict[str, list[str]]:
    result = subprocess.run([str(harness), policy, str(window), str(n_w), *pages.split()],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines()}


def test_figure_4_6a_lru(harness):
    """ACE writes p6, p4, p2 (n_w = 3) following the LRU order; without prefetching p6 is evicted."""
    chosen = choose(harness, "lru", 3, "p6:D p5 p4:D p3 p2:D p1")
    assert chosen["victim"] == ["p6"]
    assert chosen["writeback"] == ["p4", "p2"]
    assert chosen["order"] == ["p6", "p5", "p4", "p3", "p2", "p1"]  # writing reorders nothing


def test_figure_4_6b_lru_wsr(harness):
    """p3 is dirty without its cold flag: it moves to the front with the flag set; the dirty
    pages with the flag set, p6, p4, p1, are written."""
    chosen = choose(harness, "lru_wsr", 3, "p6:DW p5 p4:DW p3:D p2 p1:DW")
    assert chosen["victim"] == ["p6"]
    assert chosen["writeback"] == ["p4", "p1"]
    assert chosen["order"] == ["p6*", "p5", "p4*", "p2", "p1*", "p3*"]


def test_cflru_example_of_the_summary_paper(harness):
    """Fig. 7b of the summary paper (Papon and Athanassoulis, "Exploiting SSD Asymmetry and Concurrency for
    Storage-Intensive Applications"): the clean-first region (here half the pool) holds only dirty pages, so CFLRU
    evicts p6 as LRU would, and ACE writes p6, p5, p4 from that region."""
    chosen = choose(harness, "cflru", 3, "p6:D p5:D p4:D p3 p2 p1", window=0.5)
    assert chosen["victim"] == ["p6"]
    assert chosen["writeback"] == ["p5", "p4"]


def test_cflru_evicts_a_clean_page_of_its_window_first(harness):
    assert choose(harness, "cflru", 3, "p6:D p5 p4:D p3 p2 p1", window=0.5)["victim"] == ["p5"]
    # a clean page outside the window does not count: the LRU dirty page goes
    assert choose(harness, "cflru", 3, "p6:D p5:D p4:D p3 p2 p1", window=0.34)["victim"] == ["p6"]


def test_lru_wsr_examples_of_the_slides(harness):
    """Example 1: p1 is dirty and not cold, so it moves to the front with the flag set and the
    clean p2 is evicted. Example 2: p1's flag is set, so p1 itself is evicted."""
    first = choose(harness, "lru_wsr", 1, "p1:D p2 p3:D p4:D p5 p6:DW")
    assert first["victim"] == ["p2"]
    assert first["order"] == ["p2", "p3", "p4", "p5", "p6*", "p1*"]
    assert choose(harness, "lru_wsr", 1, "p1:DW p2 p3:D p4:D p5 p6:DW")["victim"] == ["p1"]


def test_lru_ace_example_of_the_slides(harness):
    """k_w = 3, LRU list 8 6 2 3 5 7 4 (most recent first) with 4, 5, 2 dirty: 4, 5, 2 are
    written concurrently and 4 is evicted."""
    chosen = choose(harness, "lru", 3, "4:D 7 5:D 3 2:D 6 8")
    assert chosen["victim"] == ["4"]
    assert chosen["writeback"] == ["5", "2"]


def test_pinned_pages_are_neither_evicted_nor_written(harness):
    chosen = choose(harness, "lru", 3, "p6:DP p5:D p4:DP p3:D p2 p1:D")
    assert chosen["victim"] == ["p5"]
    assert chosen["writeback"] == ["p3", "p1"]


def test_fewer_dirty_pages_than_n_w(harness):
    assert choose(harness, "lru", 8, "p4:D p3 p2:D p1")["writeback"] == ["p2"]


def test_clock_sweep_writes_in_the_order_it_would_evict(harness):
    """The hand is at b0. The sweep lowers b0's usage count and evicts b1. After it, with no
    further accesses, the clock would evict by (usage count, distance from the hand): b4 (0),
    b0 (0, now), then b5 (1), then b3 (2)."""
    chosen = choose(harness, "clock", 4, "b0:DU1 b1:D b2 b3:DU2 b4:D b5:DU1")
    assert chosen["victim"] == ["b1"]
    assert chosen["writeback"] == ["b4", "b0", "b5"]

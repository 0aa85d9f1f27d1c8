"""Slow end-to-end checks (pytest -m e2e): the mechanism of Fig 5.8 on an emulated SSD with a
known k_r, and a quick-profile-sized graph on the local disk."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from cave import engine, reference

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def emussd_binary():
    from emussd.harness import build, fuse_available

    if not fuse_available():
        pytest.skip("/dev/fuse is absent: the emulated SSD needs FUSE "
                    "(modprobe fuse; in a container --device /dev/fuse)")
    if shutil.which("fusermount3") is None:
        pytest.skip("fusermount3 not found: apt-get install fuse3")
    return build()


@pytest.mark.wall_clock
def test_bfs_runtime_falls_until_k_r_on_emussd(binary, emussd_binary, tmp_path):
    from emussd.harness import Mount

    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="rmat", scale=14, edge_factor=16, seed=1)
    local = tmp_path / "g.cave"
    engine.convert(binary, edges, local, undirected=True, renumber=True)
    k_r = 8
    with Mount(emussd_binary, tmp_path / "dev", read_latency_us=2000, alpha=2, k_r=k_r, k_w=4) as m:
        graph = m.mountpoint / "g.cave"
        shutil.copyfile(local, graph)
        before = m.stats()["ops"]["read"]["count"]
        times, reads = {}, 0
        for threads in (1, 2, 4, 8, 16):
            row = engine.run(binary, graph=graph, algorithm="bfs", variant="blocked", io_threads=threads,
                             cache_fraction=0.03, timeout=120)
            assert row["o_direct"] == 1
            times[threads] = row["runtime_s"]
            reads += row["block_reads"]
            reached = row["reached"]
        served = m.stats()["ops"]["read"]["count"] - before
    assert reached == int((reference.bfs_levels(reference.load_cave(local), 0) >= 0).sum())
    # every block read went to the device (O_DIRECT: no page cache in between)
    assert served >= reads
    # the runtime falls with the number of concurrent reads up to k_r ...
    assert times[1] > times[2] > times[4] > times[8], times
    assert times[1] / times[8] >= 0.6 * k_r, times
    # ... and not beyond: the device serves at most k_r reads at once
    assert times[16] >= 0.8 * times[8], times


def test_quick_scale_graph_on_local_disk(binary, tmp_path):
    """A few million edges, cache at 3 % of the file: seconds per run, reference results."""
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="rmat", scale=18, edge_factor=16, seed=1)
    graph = tmp_path / "g.cave"
    conv = engine.convert(binary, edges, graph, undirected=True, renumber=True)
    edges.unlink()
    assert conv["edges"] > 5_000_000
    a = reference.load_cave(graph)
    for variant in ("blocked", "nonblocked"):
        row = engine.run(binary, graph=graph, algorithm="bfs", variant=variant, io_threads=8, cache_fraction=0.03,
                         values_out=tmp_path / "bfs.csv", timeout=120)
        assert row["runtime_s"] < 30
        got = np.array([r["level"] for r in engine.read_values(tmp_path / "bfs.csv")])
        assert np.array_equal(got, reference.bfs_levels(a, 0))
    row = engine.run(binary, graph=graph, algorithm="wcc", variant="blocked", io_threads=8, cache_fraction=0.03,
                     values_out=tmp_path / "wcc.csv", timeout=120)
    got = np.array([r["component"] for r in engine.read_values(tmp_path / "wcc.csv")])
    assert np.array_equal(got, reference.wcc_labels(a))
    row = engine.run(binary, graph=graph, algorithm="pagerank", variant="blocked", io_threads=8, cache_fraction=0.03,
                     values_out=tmp_path / "pr.csv", timeout=300)
    got = np.array([r["score"] for r in engine.read_values(tmp_path / "pr.csv")])
    np.testing.assert_allclose(got, reference.pagerank(a, 10, 0.85), rtol=1e-9, atol=1e-6)

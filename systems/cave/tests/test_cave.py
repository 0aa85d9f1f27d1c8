"""CAVE against the in-memory reference, on generated graphs and small text files.

Every run is a real `cave` process reading its block file with O_DIRECT. Results must not
depend on the variant, the number of I/O threads or the cache size.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cave import engine, experiment, reference
from cave.engine import CaveError
from ssdartifact.native import googletest_failures

VARIANTS = ("nonblocked", "blocked")


def values(binary, graph, algorithm, out: Path, **opts):
    row = engine.run(binary, graph=graph, algorithm=algorithm, values_out=out, **opts)
    return row, engine.read_values(out)


def column(rows, key):
    return np.array([r[key] for r in rows])


def check_all(binary, graph: Path, a, tmp: Path, source=0, configs=None, symmetric=True):
    """BFS levels, WCC labels and PageRank equal the reference for every configuration."""
    n = a.shape[0]
    configs = configs or [dict(variant=v, io_threads=t, cache_blocks=c)
                          for v in VARIANTS for t in (1, 8) for c in (1, 100000)]
    want_bfs = reference.bfs_levels(a, source)
    want_wcc = reference.wcc_labels(a) if symmetric else None
    want_pr = reference.pagerank(a, 10, 0.85)
    for cfg in configs:
        if n == 0:  # no start vertex (test_empty_graph)
            with pytest.raises(CaveError, match="needs a start vertex"):
                engine.run(binary, graph=graph, algorithm="bfs", source=source, **cfg)
        else:
            row, got = values(binary, graph, "bfs", tmp / "bfs.csv", source=source, **cfg)
            assert row["o_direct"] == 1
            assert np.array_equal(column(got, "level"), want_bfs), cfg
            assert row["reached"] == int((want_bfs >= 0).sum())
            assert row["levels"] == int(want_bfs.max()) + 1
        if symmetric:
            row, got = values(binary, graph, "wcc", tmp / "wcc.csv", **cfg)
            assert np.array_equal(column(got, "component"), want_wcc), cfg
            assert row["components"] == len(set(want_wcc.tolist()))
        # on a directed file, only when asked for the ranks over out-lists (the reference's formula)
        row, got = values(binary, graph, "pagerank", tmp / "pr.csv", pagerank_directed=not symmetric, **cfg)
        np.testing.assert_allclose(column(got, "score"), want_pr, rtol=1e-9, atol=1e-6)
        assert row["pagerank_sum"] == pytest.approx(want_pr.sum(), rel=1e-9)


# ------------------------------------------------------------------ unit tests (C++)


def test_googletest_unit_tests_pass(binary):
    failures = googletest_failures(binary.parent, "-j2", timeout=300)
    assert not failures, failures


# ------------------------------------------------------------------ real-format files


def test_snap_edge_list_undirected(binary, tmp_path):
    text = tmp_path / "g.txt"
    text.write_text("# Directed graph (each unordered pair of nodes is saved once)\n# FromNodeId\tToNodeId\n"
                    "0\t1\n0\t2\n1\t3\n3\t4\n2 4\n5 6\n6 7\n7 5\n9 9\n4\t0\n\n% another comment\n1 0\n")
    graph = tmp_path / "g.cave"
    conv = engine.convert(binary, text, graph, format="snap", undirected=True)
    assert conv["vertices"] == 10 and conv["symmetric"] == 1 and conv["self_loops"] == 1
    assert conv["duplicates_removed"] == 2  # "1 0" repeats "0 1" once both directions are stored
    a = reference.load_text(text, "snap", undirected=True)
    assert (reference.load_cave(graph) != a).nnz == 0  # the file holds exactly the input graph
    check_all(binary, graph, a, tmp_path)
    row, got = values(binary, graph, "wcc", tmp_path / "w.csv")
    assert row["components"] == 4  # {0..4}, {5,6,7}, {8}, {9}
    assert column(got, "component").tolist() == [0, 0, 0, 0, 0, 5, 5, 5, 8, 9]


def test_adjacency_list_directed(binary, tmp_path):
    text = tmp_path / "g.adj"
    text.write_text("0 1 2\n1 3\n2 3 4\n3\n4 0\n5 0\n")
    graph = tmp_path / "g.cave"
    conv = engine.convert(binary, text, graph, format="adjacency")
    assert conv["vertices"] == 6 and conv["symmetric"] == 0
    a = reference.load_text(text, "adjacency")
    check_all(binary, graph, a, tmp_path, symmetric=False)
    row, got = values(binary, graph, "bfs", tmp_path / "b.csv")
    assert column(got, "level").tolist() == [0, 1, 1, 2, 2, -1]  # 5 only has an out-edge
    with pytest.raises(CaveError, match="--algorithm wcc needs a symmetric graph.*--undirected") as e:
        engine.run(binary, graph=graph, algorithm="wcc")
    assert e.value.returncode == 2
    # PageRank on out-lists is not PageRank: refused, with what to do, before anything runs (issue 42)
    with pytest.raises(CaveError) as e:
        engine.run(binary, graph=graph, algorithm="pagerank", values_out=tmp_path / "refused.csv")
    assert e.value.returncode == 2
    assert str(e.value) == (f"cave: error: --algorithm pagerank needs a graph converted with --undirected, and {graph} "
                            "is directed: PageRank sums over in-edges, and the file holds out-edges only. Convert the "
                            "input again with `cave convert ... --undirected`, or give --pagerank-directed for ranks "
                            "over the out-edges (each vertex scored from the vertices it points to, divided by their "
                            "out-degrees)")
    assert not (tmp_path / "refused.csv").exists()


def test_renumbering_is_first_seen_order(binary, tmp_path):
    text = tmp_path / "g.txt"
    text.write_text("100 7\n7 55\n55 100\n3 100\n")
    graph = tmp_path / "g.cave"
    assert engine.convert(binary, text, graph, undirected=True, renumber=True)["vertices"] == 4
    a = reference.load_text(text, "snap", undirected=True, renumber=True)
    assert (reference.load_cave(graph) != a).nnz == 0
    assert sorted(a[3].indices.tolist()) == [0]  # 3 -> id 3, linked to 100 -> id 0


# ------------------------------------------------------------------ generated graphs


@pytest.mark.parametrize("model,opts", [
    ("ba", dict(vertices=3000, m=3)),
    ("rmat", dict(scale=12, edge_factor=8)),
    ("road", dict(rows=40, cols=60)),
])  # fmt: skip
def test_generated_graphs_match_reference(binary, tmp_path, model, opts):
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model=model, seed=3, **opts)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    a = reference.load_cave(graph)
    assert (a != reference.load_text(edges, "snap", undirected=True, renumber=True)).nnz == 0
    check_all(binary, graph, a, tmp_path, configs=[
        dict(variant="nonblocked", io_threads=1, cache_blocks=2),
        dict(variant="blocked", io_threads=8, cache_blocks=2),
        dict(variant="nonblocked", io_threads=8, cache_fraction=1.0),
    ])  # fmt: skip


def test_hub_over_many_blocks_and_pagerank_bits_do_not_depend_on_threads(binary, tmp_path):
    text = tmp_path / "hub.txt"
    rng = np.random.default_rng(5)
    lines = [f"0 {v}" for v in range(1, 3500)] + [f"{u} {v}" for u, v in rng.integers(0, 5000, size=(4000, 2))]
    text.write_text("\n".join(lines) + "\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, undirected=True)
    assert engine.info(binary, graph)["max_degree"] >= 3499  # 4 edge blocks
    outs = []
    for v in VARIANTS:
        for t in (1, 8):
            _, got = values(binary, graph, "pagerank", tmp_path / f"pr{v}{t}.csv",
                            variant=v, io_threads=t, cache_blocks=3)
            outs.append(column(got, "score"))
    assert all(np.array_equal(o, outs[0]) for o in outs)  # bit for bit
    check_all(binary, graph, reference.load_cave(graph), tmp_path,
              configs=[dict(variant="blocked", io_threads=4, cache_blocks=1)])


# ------------------------------------------------------------------ property-based


@st.composite
def graphs(draw):
    hub = draw(st.booleans())
    n = draw(st.integers(1100, 1400)) if hub else draw(st.integers(0, 60))
    m = draw(st.integers(0, 3 * n + 1)) if n else 0
    edges = [(draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))) for _ in range(min(m, 80))] if n else []
    if hub:
        edges += [(0, v) for v in range(1, draw(st.integers(1025, n - 1)))]
    return n, edges


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(g=graphs(), source_frac=st.floats(0, 0.999), threads=st.sampled_from([1, 3, 8]),
       cache=st.sampled_from([1, 2, 1000]))
def test_property_random_graphs(binary, tmp_path, g, source_frac, threads, cache):
    n, edges = g
    text = tmp_path / "g.adj"
    # adjacency format so that isolated vertices (and the empty graph) are represented
    adj = {v: [] for v in range(n)}
    for u, v in edges:
        adj[u].append(v)
    text.write_text("".join(f"{v} {' '.join(map(str, adj[v]))}\n" for v in range(n)))
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, format="adjacency", undirected=True)
    a = reference.load_text(text, "adjacency", undirected=True)
    assert a.shape[0] == n
    source = int(source_frac * n) if n else 0
    configs = [dict(variant=v, io_threads=threads, cache_blocks=cache) for v in VARIANTS]
    check_all(binary, graph, a, tmp_path, source=source, configs=configs)
    if n:
        row, got = values(binary, graph, "dfs", tmp_path / "d.csv", source=source, io_threads=threads,
                          cache_blocks=cache, dfs_threshold=2)
        order = column(got, "order")
        reach = reference.bfs_levels(a, source) >= 0
        assert np.array_equal(order >= 0, reach)
        assert sorted(order[order >= 0].tolist()) == list(range(int(reach.sum())))


def test_empty_graph(binary, tmp_path):
    text = tmp_path / "empty.txt"
    text.write_text("# no edges at all\n")
    graph = tmp_path / "g.cave"
    assert engine.convert(binary, text, graph)["vertices"] == 0
    i = engine.info(binary, graph)
    assert (i["vertices"], i["edges"], i["estimated_diameter"]) == (0, 0, None)
    assert engine.run(binary, graph=graph, algorithm="wcc")["components"] == 0
    assert engine.run(binary, graph=graph, algorithm="pagerank")["pagerank_sum"] == 0
    # no vertex to start from: refused before running, with or without --source
    for algorithm, source in [("bfs", None), ("bfs", 0), ("dfs", 0), ("dfs", 7), ("randomwalk", None)]:
        with pytest.raises(CaveError, match=f"--algorithm {algorithm} needs a start vertex, "
                                            "but .*g.cave has no vertices") as e:
            engine.run(binary, graph=graph, algorithm=algorithm, source=source)
        assert e.value.returncode == 2
    # vertices but no edges: every vertex is its own component, nothing is read
    text.write_text("0\n1\n2\n")
    engine.convert(binary, text, graph, format="adjacency", undirected=True)
    row = engine.run(binary, graph=graph, algorithm="wcc")
    assert (row["vertices"], row["components"], row["block_reads"]) == (3, 3, 0)
    assert engine.run(binary, graph=graph, algorithm="pagerank")["pagerank_sum"] == pytest.approx(3 * 0.15)
    row = engine.run(binary, graph=graph, algorithm="randomwalk", walks=10)
    assert (row["steps"], row["dead_ends"]) == (0, 10)


# ------------------------------------------------------------------ random walk, DFS


def test_random_walks_follow_edges_and_stop_at_dead_ends(binary, tmp_path):
    text = tmp_path / "g.adj"
    # directed: 3 and 6 are sinks; 7 is isolated
    text.write_text("0 1 2\n1 2 3\n2 0 4\n3\n4 5 6\n5 4\n6\n7\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, format="adjacency")
    a = reference.load_text(text, "adjacency")
    deg = reference.degrees(a)
    results = []
    for v in VARIANTS:
        for t in (1, 8):
            row, got = values(binary, graph, "randomwalk", tmp_path / "rw.csv", variant=v, io_threads=t, walks=50,
                              walk_length=20, seed=7)
            total = 0
            for w in got:
                path = w["path"]
                assert len(path) - 1 == w["steps"] <= 20
                for x, y in zip(path, path[1:]):
                    assert a[x, y] == 1, (x, y)
                if w["steps"] < 20:  # stopped early: only at a dead end
                    assert deg[path[-1]] == 0
                total += w["steps"]
            assert row["steps"] == total
            assert row["dead_ends"] == sum(1 for w in got if w["steps"] < 20)
            results.append([w["path"] for w in got])
    assert all(r == results[0] for r in results)  # same walks for every variant and thread count
    _, other = values(binary, graph, "randomwalk", tmp_path / "rw8.csv", walks=50, walk_length=20, seed=8)
    assert [w["path"] for w in other] != results[0]  # the seed matters


def test_dfs_order_is_not_depth_first_even_with_one_thread(binary, tmp_path):
    """README: a vertex is marked when it is pushed (Algorithm 7 line 11, the authors' dfs.cpp).
    From 0 on edges 0-1, 0-2, 0-3, 1-3, vertex 0 pushes and marks 1, 2, 3; 3 is popped first
    and does not push 1 again, so 2 comes next, although a depth-first order continues from 3
    to its unvisited neighbour 1 (0, 3, 1, 2)."""
    text = tmp_path / "g.txt"
    text.write_text("0 1\n0 2\n0 3\n1 3\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, undirected=True)
    _, got = values(binary, graph, "dfs", tmp_path / "d.csv", io_threads=1)
    order = column(got, "order")
    assert np.argsort(order).tolist() == [0, 3, 2, 1]


def test_pseudo_dfs_visits_each_reachable_vertex_once(binary, tmp_path):
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="ba", vertices=20000, m=3, seed=1)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    a = reference.load_cave(graph)
    reach = reference.bfs_levels(a, 5) >= 0
    for t in (1, 8):
        row, got = values(binary, graph, "dfs", tmp_path / "d.csv", source=5, io_threads=t, cache_fraction=0.03)
        order = column(got, "order")
        assert np.array_equal(order >= 0, reach)
        assert sorted(order[order >= 0].tolist()) == list(range(int(reach.sum())))
        assert row["reached"] == reach.sum()
        if t == 8:
            assert row["dfs_splits"] > 0  # the stack was split among threads


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("args,message", [
    (["run", "--graph", "g", "--algorithm", "sssp"],
     "--algorithm must be one of bfs|wcc|pagerank|randomwalk|dfs, got 'sssp'"),
    (["run", "--graph", "g", "--algorithm", "bfs", "--io-threads", "x"],
     "--io-threads needs a whole number in [1, 4096]"),
    (["run", "--graph", "g", "--algorithm", "bfs", "--cache-fraction", "2"], "--cache-fraction must be in [1e-09, 1]"),
    (["run", "--graph", "g", "--algorithm", "bfs", "--io-engine", "aio"], "--io-engine must be one of threads|uring"),
    (["run", "--graph", "g", "--algorithm", "bfs", "--variant", "fast"], "--variant must be one of nonblocked|blocked"),
    (["run", "--graph", "g", "--algorithm", "bfs", "--walks", "5"], "--walks applies only to --algorithm randomwalk"),
    (["run", "--algorithm", "bfs"], "`cave run` needs --graph"),
    (["generate", "--model", "er", "--output", "x"], "--model must be one of ba|rmat|road"),
    (["convert", "--input", "x", "--output", "y", "--format", "metis"], "--format must be one of snap|adjacency"),
    (["info"], "`cave info` needs --graph"),
    (["explode"], "unknown command 'explode'"),
])  # fmt: skip
def test_bad_arguments_exit_2_with_a_clear_message(binary, args, message):
    proc = subprocess.run([str(binary), *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("cave: error: ")
    assert message in proc.stderr, proc.stderr


def test_bad_source_and_bad_file(binary, tmp_path):
    text = tmp_path / "g.txt"
    text.write_text("0 1\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph)
    with pytest.raises(CaveError, match=r"--source must be a vertex id in \[0, 1\], got 5"):
        engine.run(binary, graph=graph, algorithm="bfs", source=5)
    junk = tmp_path / "junk.cave"
    junk.write_bytes(b"x" * 8192)
    with pytest.raises(CaveError, match="not a CAVE graph file") as e:
        engine.run(binary, graph=junk, algorithm="bfs")
    assert e.value.returncode == 1
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n2 three\n")
    with pytest.raises(CaveError, match=r"bad.txt:2: expected a vertex id"):
        engine.convert(binary, bad, tmp_path / "b.cave")


# ------------------------------------------------------------------ O_DIRECT, counters


def _resident_pages(path: Path) -> int:
    """Pages of `path` in the page cache (mincore)."""
    size = path.stat().st_size
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        assert addr not in (None, ctypes.c_void_p(-1).value)
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = ctypes.create_string_buffer(pages)
        assert libc.mincore(ctypes.c_void_p(addr), size, vec) == 0
        libc.munmap(ctypes.c_void_p(addr), size)
        return sum(b & 1 for b in vec.raw)
    finally:
        os.close(fd)


def _evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def test_reads_bypass_the_page_cache(binary, tmp_path):
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="rmat", scale=13, edge_factor=8, seed=2)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    _evict(graph)
    if _resident_pages(graph) != 0:
        pytest.skip("this file system keeps evicted pages resident; cannot observe the page cache")
    row = engine.run(binary, graph=graph, algorithm="pagerank", iterations=2, cache_blocks=4)
    assert row["block_reads"] > row["edge_blocks"]  # the whole graph was read, more than once
    assert _resident_pages(graph) == 0  # ... and none of it went through the page cache
    with open(graph, "rb") as f:  # control: a buffered read does fill the page cache
        f.read()
    assert _resident_pages(graph) > 0


def test_graph_file_is_opened_with_o_direct(binary, tmp_path):
    """/proc/<pid>/fdinfo of a running `cave run` shows O_DIRECT (octal 040000) on the graph's fd."""
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="road", rows=200, cols=200, seed=1)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    proc = subprocess.Popen([str(binary), "run", "--graph", str(graph), "--algorithm", "pagerank",
                             "--iterations", "200", "--cache-blocks", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    flags = None
    try:
        deadline = time.monotonic() + 20
        while flags is None and proc.poll() is None and time.monotonic() < deadline:
            for fd in Path(f"/proc/{proc.pid}/fd").iterdir():
                try:
                    if Path(os.readlink(fd)) == graph:
                        info = Path(f"/proc/{proc.pid}/fdinfo/{fd.name}").read_text()
                        flags = int(next(x for x in info.splitlines() if x.startswith("flags:")).split()[1], 8)
                except (FileNotFoundError, ProcessLookupError):
                    pass
            time.sleep(0.005)
    finally:
        proc.kill()
        proc.wait()
    assert flags is not None, "did not see the graph file open in the running process"
    assert flags & os.O_DIRECT


def test_counters_and_timeline(binary, tmp_path):
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="rmat", scale=13, edge_factor=8, seed=4)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    tl = tmp_path / "t.csv"
    row = engine.run(binary, graph=graph, algorithm="bfs", variant="nonblocked", io_threads=4, cache_blocks=8,
                     timeline_out=tl, timeline_ms=5)
    assert row["block_reads"] == row["cache_misses"] > 0
    assert row["bytes_read"] == 4096 * row["block_reads"]
    # every vertex with neighbours looks its list up
    assert row["cache_hits"] + row["cache_misses"] >= row["reached"] - 1
    assert row["cache_blocks"] == 8 and row["cache_bytes"] == 8 * 4096
    assert 0 <= row["lock_wait_pct"] <= 100 and row["lock_acquisitions"] >= row["cache_hits"] + row["cache_misses"]
    assert row["cpu_user_s"] + row["cpu_sys_s"] > 0
    samples = engine.read_timeline(tl)
    assert samples and [s["t_s"] for s in samples] == sorted(s["t_s"] for s in samples)
    assert sum(s["reads"] for s in samples) == row["block_reads"]
    assert all(s["cpu_pct"] >= 0 for s in samples)
    # a cache holding every block reads each block once
    full = engine.run(binary, graph=graph, algorithm="pagerank", iterations=3, cache_fraction=1.0, io_threads=4)
    assert full["block_reads"] == full["edge_blocks"]


def test_io_uring_engine(binary, tmp_path):
    edges = tmp_path / "e.txt"
    engine.generate(binary, edges, model="ba", vertices=5000, m=4, seed=1)
    graph = tmp_path / "g.cave"
    engine.convert(binary, edges, graph, undirected=True, renumber=True)
    want = engine.run(binary, graph=graph, algorithm="bfs", io_threads=4, values_out=tmp_path / "a.csv")
    try:
        got = engine.run(binary, graph=graph, algorithm="bfs", io_threads=4, io_engine="uring",
                         values_out=tmp_path / "b.csv")
    except CaveError as e:
        assert "--io-engine threads" in str(e)  # built without liburing, or io_uring refused: says what to do
        pytest.skip(f"io_uring not usable here: {e}")
    assert got["reached"] == want["reached"] and got["o_direct"] == 1
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_info_diameter_and_sizes(binary, tmp_path):
    text = tmp_path / "path.txt"
    text.write_text("".join(f"{i} {i + 1}\n" for i in range(50)))
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, undirected=True)
    i = engine.info(binary, graph)
    assert i["estimated_diameter"] == 50  # a path: the double sweep is exact
    assert (i["vertices"], i["edges"], i["undirected_edges"]) == (51, 100, 50)
    assert i["file_bytes"] == graph.stat().st_size == 4096 * i["blocks"]
    assert i["blocks"] == 1 + i["vertex_blocks"] + i["edge_blocks"]


# ------------------------------------------------------------------ experiment driver


def test_experiment_functions_write_tidy_rows(binary, tmp_path):
    p = {"graph": {"name": "tiny", "generator": "rmat", "scale": 11, "edge_factor": 8, "seed": 1},
         "graph_dir": tmp_path / "graphs", "device_dir": tmp_path / "dev", "device": "local", "algorithm": "bfs",
         "io_threads": [1, 2], "repetitions": 2}  # fmt: skip
    rows = experiment.concurrency_sweep(p, binary)
    assert len(rows) == 4 and all(set(r) == set(experiment.CONCURRENCY_COLUMNS) for r in rows)
    assert {r["system"] for r in rows} == {"CAVE_blocked"} and len({r["reached"] for r in rows}) == 1
    cached = sorted((tmp_path / "graphs").glob("*.cave"))
    assert len(cached) == 1 and len(list((tmp_path / "dev").glob("*.cave"))) == 1
    rows = experiment.cache_sweep({**p, "io_threads": 2, "cache_fractions": [0.01, 0.5], "repetitions": 1}, binary)
    systems = [r["system"] for r in rows]
    assert systems.count("CAVE") == 2 and systems.count("CAVE_blocked") == 2
    assert systems.count(experiment.REFERENCE_SYSTEM) == 1
    assert len({r["reached"] for r in rows}) == 1  # the reference reaches the same vertices
    assert sorted((tmp_path / "graphs").glob("*.cave")) == cached  # converted once
    tl = experiment.timeline({**p, "io_threads": 2, "timeline_ms": 5}, binary)
    assert tl and all(set(r) == set(experiment.TIMELINE_COLUMNS) for r in tl)
    table = experiment.dataset_table({"datasets": [p["graph"]], "graph_dir": tmp_path / "graphs"}, binary)
    assert table[0]["vertices"] > 0 and table[0]["estimated_diameter"] > 0
    out = tmp_path / "r.csv"
    experiment.write_csv(rows, experiment.CACHE_COLUMNS, out)
    assert out.read_text().splitlines()[0] == ",".join(experiment.CACHE_COLUMNS)
    with pytest.raises(experiment.ExperimentError, match="generator must be one of"):
        experiment.prepare_graph(binary, {"name": "x", "generator": "er"}, tmp_path)


def test_fio_reference_reports_bandwidth_and_cpu_as_caves(tmp_path):
    """fio's CPU is summed over its jobs and normalized as CAVE's cpu_pct (per online core)."""
    graph = tmp_path / "g.cave"
    graph.write_bytes(bytes(range(256)) * (4 << 12))  # 4 MiB
    before = graph.read_bytes()
    measured = experiment.fio_randread(graph, jobs=2, runtime_s=0.5)
    assert measured["read_mib_s"] > 0
    assert 0 < measured["cpu_pct"] <= 100
    assert graph.read_bytes() == before and sorted(tmp_path.iterdir()) == [graph], "fio only reads the file"
    graph.write_bytes(b"x" * 100)
    with pytest.raises(experiment.ExperimentError, match="fewer than one 4 KiB block"):
        experiment.fio_randread(graph, jobs=1, runtime_s=0.5)

"""Damaged block files: every run either answers correctly for the bytes as they are or stops
with a clear error (exit 1, naming the file, the block and the value), never with a signal,
a hang or a silently wrong answer (issue 18, item 1).

The oracle of the fuzz test is the independent numpy parser `reference.load_cave`, which
applies the checks of README "Checks on read": where it accepts a damaged file (the damage
hit padding, or changed an id into another valid id), the engine must accept it too and give
the reference's answers on the graph the file now holds; where it refuses, the engine must
refuse with a message.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cave import engine, reference

BLOCK = 4096
RUNS = [  # (algorithm, variant): every algorithm on both data paths
    ("bfs", "nonblocked"), ("bfs", "blocked"), ("wcc", "nonblocked"), ("wcc", "blocked"), ("pagerank", "nonblocked"),
    ("pagerank", "blocked"), ("randomwalk", "nonblocked"), ("randomwalk", "blocked"), ("dfs", "nonblocked"),
]  # fmt: skip


def cave(binary, *args, timeout=20):
    """Runs the tool; a hang fails the test through the timeout."""
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def run_args(graph, algorithm, variant, **opts):
    args = ["run", "--graph", graph, "--algorithm", algorithm, "--variant", variant]
    for k, v in opts.items():
        args += ["--" + k.replace("_", "-"), v]
    return args


def overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def assert_refused(proc, path: Path, *fragments: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr)  # a signal would be negative
    assert proc.stderr.startswith("cave: error: ") and str(path) in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# ------------------------------------------------------------------ the issue's reproduction


def test_issue_reproduction_is_a_clear_error_for_every_algorithm(binary, tmp_path):
    """`0 1`, `1 2` converted undirected; bytes 8192..8195 := 00 00 00 70 (vertex 0's first
    neighbour becomes 0x70000000). This crashed every algorithm and `info` with SIGSEGV."""
    text = tmp_path / "g.txt"
    text.write_text("0 1\n1 2\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, undirected=True)
    overwrite(graph, 8192, bytes([0x00, 0x00, 0x00, 0x70]))
    what = ("edge block 0 (file block 2, byte 8192) holds neighbour id 1879048192 in the list of vertex 0, "
            "but the graph has 3 vertices", "convert the input again")  # fmt: skip
    for algorithm, variant in RUNS:
        for threads in (1, 4):
            assert_refused(cave(binary, *run_args(graph, algorithm, variant, io_threads=threads)), graph, *what)
    assert_refused(cave(binary, "run", "--graph", graph, "--algorithm", "bfs", "--timeline-out", tmp_path / "t.csv"),
                   graph, *what)  # the timeline's sampler thread stops too
    assert_refused(cave(binary, "info", "--graph", graph), graph, *what)


# ------------------------------------------------------------------ each check, by hand


@pytest.fixture
def small(binary, tmp_path) -> Path:
    """3 vertices, 4 stored edges in one edge block: vertex 0 -> [1], 1 -> [0, 2], 2 -> [1]."""
    text = tmp_path / "g.txt"
    text.write_text("0 1\n1 2\n")
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, undirected=True)
    return graph


def record(v: int) -> int:
    return BLOCK + 8 * v


@pytest.mark.parametrize("damage,fragments", [
    (lambda p: p.write_bytes(p.read_bytes()[:-BLOCK]),
     ["describes 3 blocks (12288 bytes) but the file has 8192 bytes"]),
    (lambda p: p.write_bytes(p.read_bytes() + b"\0" * 100), ["but the file has 12388 bytes"]),
    (lambda p: overwrite(p, 0, struct.pack("<i", 600)), ["num_vertex_blocks 1 does not hold num_vertices 600"]),
    (lambda p: overwrite(p, 0, struct.pack("<i", -1)), ["a negative count (num_vertices -1"]),
    (lambda p: overwrite(p, 4, struct.pack("<iii", 2**22 + 3, 1, 2**22 + 1)), ["more than the format can address"]),
    (lambda p: overwrite(p, 28, struct.pack("<I", 3)), ["unknown flag bits 3"]),
    (lambda p: overwrite(p, 32, struct.pack("<Q", 5)), ["the degrees in the vertex records sum to 4 but",
                                                        "num_edges = 5"]),
    (lambda p: overwrite(p, record(1), struct.pack("<II", 5000, 0)),
     ["the record of vertex 1 in vertex block 0 (file block 1, byte 4104) puts its 5000 neighbours at edge block 0 "
      "offset 0, past the end of the 1 edge blocks"]),
    (lambda p: overwrite(p, record(1), struct.pack("<II", 2, (5 << 10) | 1)), ["past the end of the 1 edge blocks"]),
    (lambda p: overwrite(p, record(2), struct.pack("<II", 1, 1023)),
     ["but its last list ends at slot 1024: the lists leave a gap"]),
    (lambda p: overwrite(p, record(2), struct.pack("<II", 1, 0)),
     ["put 4 list entries in edge block 0 (file block 2) but "
      "its last list ends at slot 3: two lists overlap"]),
    (lambda p: overwrite(p, 2 * BLOCK + 4 * 3, struct.pack("<I", 0xFFFFFFFF)),
     ["edge block 0 (file block 2, byte 8204) holds neighbour id 4294967295 in the list of vertex 2"]),
    (lambda p: overwrite(p, 2 * BLOCK + 4 * 2, struct.pack("<I", 3)),
     ["edge block 0 (file block 2, byte 8200) holds neighbour id 3 in the list of vertex 1, "
      "but the graph has 3 vertices (ids 0 to 2)"]),
])  # fmt: skip
def test_each_check_names_the_file_the_place_and_the_value(binary, small, damage, fragments):
    damage(small)
    with pytest.raises(ValueError):
        reference.load_cave(small)  # the independent parser refuses it too
    for algorithm, variant in [("bfs", "nonblocked"), ("pagerank", "blocked")]:
        assert_refused(cave(binary, *run_args(small, algorithm, variant, io_threads=2)), small, *fragments)
    assert_refused(cave(binary, "info", "--graph", small), small, *fragments)


def test_list_crossing_a_block_is_refused(binary, tmp_path):
    """A list of at most 1024 neighbours lies inside one edge block (README "File format")."""
    text = tmp_path / "g.adj"
    text.write_text("0 " + " ".join(map(str, range(1, 1100))) + "\n")  # 0 -> 1099 ids: edge blocks 0 and 1
    graph = tmp_path / "g.cave"
    engine.convert(binary, text, graph, format="adjacency")
    overwrite(graph, record(0), struct.pack("<II", 1000, 30))  # 1000 entries from offset 30: crosses into block 1
    overwrite(graph, 32, struct.pack("<Q", 1000))
    assert_refused(cave(binary, *run_args(graph, "bfs", "nonblocked")), graph,
                   "a list of at most 1024 neighbours must lie inside one edge block")
    overwrite(graph, record(0), struct.pack("<II", 1099, 5))
    overwrite(graph, 32, struct.pack("<Q", 1099))
    assert_refused(cave(binary, "info", "--graph", graph), graph,
                   "a list of more than 1024 neighbours must start at offset 0")


# ------------------------------------------------------------------ fuzz


@pytest.fixture(scope="module")
def fuzz_base(binary, tmp_path_factory):
    """A small valid graph with every kind of list: a hub over two edge blocks (its last
    block shared with short lists), short lists, isolated vertices. 1200 vertices, 8 blocks."""
    rng = np.random.default_rng(18)
    lines = [f"0 {v}" for v in range(1, 1100)] + [f"{u} {v}" for u, v in rng.integers(1, 1150, size=(700, 2))]
    directory = tmp_path_factory.mktemp("fuzz")
    text = directory / "g.txt"
    text.write_text("\n".join(lines) + "\n1199 1199\n")
    graph = directory / "base.cave"
    engine.convert(binary, text, graph, undirected=True)
    return graph.read_bytes()


INTERESTING = [0, 1, 1199, 1200, 1201, 0x7FFFFFFF, 0x70000000, 0xFFFFFFFF, 1 << 10, (1 << 10) | 1023]


def mutate(data: bytes, seed: int) -> bytes:
    """One deterministic damage per seed: truncation or extension, bit flips or random bytes
    in the parts the engine reads (metadata fields, vertex records, edge blocks), a word
    replaced by an edge-case value, or random bytes anywhere (padding included)."""
    rng = np.random.default_rng(seed)
    out = bytearray(data)
    n, _, nvb = struct.unpack_from("<iii", data)
    regions = [(0, 40), (BLOCK, BLOCK + 8 * n), (BLOCK * (1 + nvb), len(data))]
    kind = seed % 5
    if kind == 0:
        if rng.random() < 0.75:
            return bytes(out[: int(rng.integers(0, len(out)))])
        return bytes(out) + rng.bytes(int(rng.integers(1, 2 * BLOCK)))
    lo, hi = regions[int(rng.integers(len(regions)))]
    if kind == 1:
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(lo, hi))
            out[pos] ^= 1 << int(rng.integers(8))
    elif kind == 2:
        pos = int(rng.integers(lo, hi - 3)) & ~3
        r = rng.random()  # another valid id (the damage the checks cannot see), an edge case, or anything
        value = (int(rng.integers(0, n)) if r < 0.4 else int(rng.choice(INTERESTING)) if r < 0.7
                 else int(rng.integers(0, 2**32)))
        out[pos : pos + 4] = struct.pack("<I", value)
    elif kind == 3:
        pos = int(rng.integers(lo, hi))
        out[pos : pos + 8] = rng.bytes(8)
        del out[len(data) :]
    else:
        for _ in range(int(rng.integers(1, 17))):
            out[int(rng.integers(len(out)))] = int(rng.integers(256))
    return bytes(out)


def check_mutant(binary, path: Path, seed: int) -> str:
    """Runs one algorithm (chosen by the seed) and `info` on the damaged file; returns
    'refused' or 'accepted'."""
    algorithm, variant = RUNS[seed % len(RUNS)]
    opts = dict(io_threads=(1, 4)[seed // len(RUNS) % 2], cache_blocks=(1, 2, 8)[seed % 3])
    values = path.with_suffix(".values.csv")
    if algorithm == "randomwalk":
        opts.update(walks=20, walk_length=30)
    proc = cave(binary, *run_args(path, algorithm, variant, values_out=values, **opts))
    info = cave(binary, "info", "--graph", path)
    assert proc.returncode >= 0 and info.returncode >= 0, f"seed {seed}: killed by a signal\n{proc.stderr}{info.stderr}"
    try:
        a = reference.load_cave(path)
    except ValueError:
        assert_refused(proc, path)
        assert_refused(info, path)
        return "refused"
    # the reference accepts the file: the engine must too, and answer for the graph it holds
    assert info.returncode == 0, f"seed {seed}: {info.stderr}"
    row = engine.parse_csv(info.stdout)[0]
    degree = reference.degrees(a)
    assert (row["vertices"], row["edges"], row["max_degree"]) == (a.shape[0], a.nnz, int(degree.max(initial=0)))
    flags = struct.unpack_from("<I", path.read_bytes(), 28)[0]
    if algorithm == "wcc" and not flags & 1:
        assert proc.returncode == 2 and "needs a symmetric graph" in proc.stderr, proc.stderr
        return "accepted"
    if algorithm == "pagerank" and not flags & 1:  # a directed file: refused unless asked for out-edge ranks
        assert proc.returncode == 2 and "needs a graph converted with --undirected" in proc.stderr, proc.stderr
        return "accepted"
    assert proc.returncode == 0, f"seed {seed}: {proc.stderr}"
    got = engine.read_values(values)
    if algorithm == "bfs":
        assert [r["level"] for r in got] == reference.bfs_levels(a, 0).tolist(), seed
    elif algorithm == "wcc" and (a != a.T).nnz == 0:  # a damaged id can leave the symmetric flag wrong
        assert [r["component"] for r in got] == reference.wcc_labels(a).tolist(), seed
    elif algorithm == "pagerank":
        np.testing.assert_allclose([r["score"] for r in got], reference.pagerank(a), rtol=1e-9, atol=1e-6)
    elif algorithm == "randomwalk":
        for walk in got:
            path_ = walk["path"]
            assert all(a[x, y] for x, y in zip(path_, path_[1:])), seed
            assert walk["steps"] == 30 or degree[path_[-1]] == 0, seed
    elif algorithm == "dfs":
        reached = reference.bfs_levels(a, 0) >= 0
        assert [r["order"] >= 0 for r in got] == reached.tolist(), seed
    return "accepted"


def fuzz(binary, base: bytes, directory: Path, seeds: range) -> dict:
    outcomes = {"refused": 0, "accepted": 0}
    for seed in seeds:
        path = directory / f"m{seed}.cave"
        path.write_bytes(mutate(base, seed))
        outcomes[check_mutant(binary, path, seed)] += 1
        path.unlink()
    return outcomes


def test_fuzz_damaged_files(binary, fuzz_base, tmp_path):
    outcomes = fuzz(binary, fuzz_base, tmp_path, range(200))
    # both outcomes occur, so the oracle is exercised on each side
    assert outcomes["refused"] > 100 and outcomes["accepted"] > 10, outcomes


@pytest.mark.e2e
def test_fuzz_damaged_files_many_seeds(binary, fuzz_base, tmp_path):
    outcomes = fuzz(binary, fuzz_base, tmp_path, range(180, 3180))
    assert outcomes["refused"] > 1500 and outcomes["accepted"] > 150, outcomes

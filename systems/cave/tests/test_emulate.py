"""cave run --emulate: the emulated SSD inside the process. Without the option every output is
the same as before; with it, BFS's speedup with k_r workers is the one an emussd mount of the
same device gives (wall clock, end-to-end phase)."""

from __future__ import annotations

import shutil
import statistics

import pytest

from cave import engine

DEVICE = {"read_latency_us": 2000, "alpha": 1, "k_r": 4, "k_w": 1}
SPEC = ",".join(f"{key}={value}" for key, value in DEVICE.items())


@pytest.fixture(scope="module")
def graph(binary, tmp_path_factory):
    """Lab 3's speedup graph (labs/3-graph-traversal/lab.yaml): Barabasi-Albert, 3000 vertices, m 8."""
    folder = tmp_path_factory.mktemp("emulate")
    engine.generate(binary, folder / "g.txt", model="ba", vertices=3000, m=8, seed=3)
    engine.convert(binary, folder / "g.txt", folder / "g.cave", undirected=True)
    return folder / "g.cave"


def test_the_same_answers_with_and_without_emulation(binary, graph, tmp_path):
    for algorithm in ("bfs", "wcc"):
        plain, emulated = tmp_path / f"{algorithm}-plain.csv", tmp_path / f"{algorithm}-emulated.csv"
        a = engine.run(binary, graph=graph, algorithm=algorithm, io_threads=4, cache_blocks=8, values_out=plain)
        b = engine.run(binary, graph=graph, algorithm=algorithm, io_threads=4, cache_blocks=8, values_out=emulated,
                       emulate="read_latency_us=10,alpha=1,k_r=4,k_w=1")
        assert plain.read_bytes() == emulated.read_bytes()
        key = "reached" if algorithm == "bfs" else "components"
        assert a[key] == b[key] and a["block_reads"] > 0


def test_a_bad_device_is_refused(binary, graph):
    with pytest.raises(engine.CaveError, match="--emulate: k_r must be an integer in"):
        engine.run(binary, graph=graph, algorithm="bfs", emulate="read_latency_us=2000,alpha=1,k_r=0,k_w=1")


@pytest.mark.e2e
@pytest.mark.wall_clock
def test_bfs_speedup_with_emulation_is_the_mounts(binary, graph, tmp_path):
    """BFS with 1 and k_r workers, interleaved, on an emussd mount and with --emulate, at the time
    dilation the calibration gives the device: the speedups within 10 % of each other."""
    from emussd import capacity  # noqa: PLC0415
    from emussd.harness import Mount, build, fuse_available  # noqa: PLC0415

    if not fuse_available() or shutil.which("fusermount3") is None:
        pytest.skip("/dev/fuse or fusermount3 is absent: the comparison needs an emussd mount")
    emussd = build()
    dilation = capacity.dilation(DEVICE, capacity.calibration(emussd, progress=print)).factor
    spec = f"{SPEC},time_dilation={dilation}"
    seconds = {(where, n): [] for where in ("mount", "library") for n in (1, DEVICE["k_r"])}
    with Mount(emussd, tmp_path / "dev", **DEVICE, time_dilation=dilation) as mount:
        on_mount = mount.mountpoint / "g.cave"
        shutil.copyfile(graph, on_mount)
        for _ in range(2):
            for where, n in seconds:
                row = engine.run(binary, graph=on_mount if where == "mount" else graph, algorithm="bfs", io_threads=n,
                                 cache_blocks=8, emulate=None if where == "mount" else spec, timeout=120)
                seconds[where, n].append(row["runtime_s"])
    speedup = {where: statistics.median(seconds[where, 1]) / statistics.median(seconds[where, DEVICE["k_r"]])
               for where in ("mount", "library")}
    print(seconds, speedup)
    assert speedup["library"] == pytest.approx(speedup["mount"], rel=0.1), (speedup, seconds)

"""The Figure 3.5 bufferpool (pio.writeback_app): argument checks, the read/write
mix, concurrent write-backs, the data landing in the file, and the sweep rows."""

import errno
import mmap
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from pio import model, writeback_app as app
from ssdartifact import REPO_ROOT

PAGE = 4096


def _supports_direct_io(directory: Path) -> bool:
    probe = directory / "direct-io-probe"
    probe.write_bytes(bytes(PAGE))
    buffer = mmap.mmap(-1, PAGE)
    try:
        fd = os.open(probe, os.O_RDONLY | os.O_DIRECT)
        try:
            return os.preadv(fd, [buffer], 0) == PAGE
        finally:
            os.close(fd)
    except OSError:
        return False
    finally:
        buffer.close()
        probe.unlink()


@pytest.fixture
def io_dir(tmp_path):
    """tmp_path if its file system takes O_DIRECT, else a scratch directory in the repository (removed after)."""
    if _supports_direct_io(tmp_path):
        yield tmp_path
        return
    scratch = REPO_ROOT / "scratch" / f"test-writeback-{os.getpid()}"
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        if not _supports_direct_io(scratch):
            pytest.skip("neither tmp_path nor scratch/ supports O_DIRECT")
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def data_file(io_dir):
    return app.prepare(io_dir, pages=64, page_size=PAGE, sparse=True)


def _run(path, **overrides):
    arguments = dict(read_fraction=0.5, write_batch=1, page_size=PAGE, duration_s=5.0, seed=1)
    arguments.update(overrides)
    return app.run(path, **arguments)


# --- argument checks ---------------------------------------------------------

@pytest.mark.parametrize(("overrides", "message"), [
    ({"read_fraction": 1.0}, "read_fraction"),
    ({"read_fraction": -0.1}, "read_fraction"),
    ({"write_batch": 0}, "write_batch"),
    ({"write_batch": 2.0}, "write_batch"),
    ({"page_size": 1000}, "page_size"),
    ({"page_size": 0}, "page_size"),
    ({"duration_s": 0}, "duration_s"),
    ({"max_operations": 0}, "max_operations"),
    ({"write_batch": 65}, "fewer than write_batch"),  # the file has 64 pages
])
def test_run_rejects_bad_arguments(data_file, overrides, message):
    with pytest.raises(ValueError, match=message):
        _run(data_file, **overrides)


def test_run_rejects_missing_or_ragged_file(io_dir):
    with pytest.raises(ValueError, match="prepare"):
        _run(io_dir / "absent.data")
    ragged = io_dir / "ragged.data"
    ragged.write_bytes(bytes(PAGE + 512))
    with pytest.raises(ValueError, match="whole number"):
        _run(ragged)


def test_prepare_rejects_bad_arguments(io_dir):
    with pytest.raises(ValueError, match="pages"):
        app.prepare(io_dir, pages=0, page_size=PAGE)
    with pytest.raises(ValueError, match="page_size"):
        app.prepare(io_dir, pages=4, page_size=512)
    with pytest.raises(ValueError, match="not a directory"):
        app.prepare(io_dir / "missing", pages=4, page_size=PAGE)


def test_prepare_sizes_the_file_both_ways(io_dir):
    dense = app.prepare(io_dir, pages=3, page_size=PAGE)
    assert dense.name == app.DATA_FILE and dense.read_bytes() == bytes(3 * PAGE)
    resized = app.prepare(io_dir, pages=5, page_size=PAGE, sparse=True)  # wrong size: rebuilt
    assert resized.stat().st_size == 5 * PAGE


@pytest.mark.parametrize("overrides", [
    {"batches": [2, 4]},            # no baseline
    {"batches": [1, 1, 2]},
    {"batches": [1, 0]},
    {"alpha": 0.5},
    {"k_w": 0},
    {"read_fraction": 1.5},
    {"repeats": 0},
])
def test_sweep_rejects_bad_arguments_before_any_io(io_dir, overrides):
    arguments = dict(batches=[1, 2], read_fraction=0.5, pages=16, page_size=PAGE, duration_s=0.05,
                     seed=0, alpha=2.0, k_w=8)
    arguments.update(overrides)
    with pytest.raises(ValueError):
        app.sweep(io_dir, **arguments)
    assert not (io_dir / app.DATA_FILE).exists()


def test_file_system_without_direct_io_is_reported(data_file, monkeypatch):
    def refuse(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        return real_open(path, flags, *args)

    real_open = os.open
    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(RuntimeError, match="does not support direct I/O"):
        _run(data_file, max_operations=10)


# --- behaviour -----------------------------------------------------------------

@pytest.mark.parametrize("read_fraction", [0.0, 0.3, 0.5, 0.9])
def test_read_write_mix_follows_read_fraction(data_file, read_fraction):
    result = _run(data_file, read_fraction=read_fraction, write_batch=4, max_operations=4000, seed=7)
    assert result["operations"] == 4000 == result["reads"] + result["writes"]
    # binomial standard deviation at n = 4000 is at most 0.008; allow about 4 of them
    assert result["reads"] / result["operations"] == pytest.approx(read_fraction, abs=0.03)
    # every full batch evicts exactly write_batch distinct pages; leftovers are flushed after the clock
    assert 0 <= result["final_flush_pages"] < 4
    assert result["batches"] * 4 + result["final_flush_pages"] <= result["writes"]
    assert result["seconds"] > 0 and result["ops_per_s"] == pytest.approx(4000 / result["seconds"])


def test_run_stops_at_duration(data_file):
    started = time.perf_counter()
    result = _run(data_file, duration_s=0.2)
    assert 0.2 <= result["seconds"] < 0.5 and time.perf_counter() - started < 1.0
    assert result["operations"] > 0


def test_a_timed_run_ends_with_whole_eviction_cycles(data_file, monkeypatch):
    """The deadline passes long before 32 writes (each read takes 2 ms): the run goes on to the
    first eviction, so no counted write is left without its write-back inside the clock."""
    real_read = app.read_page

    def slow_read(*arguments):
        time.sleep(0.002)
        return real_read(*arguments)

    monkeypatch.setattr(app, "read_page", slow_read)
    result = _run(data_file, read_fraction=0.5, write_batch=32, duration_s=0.01, seed=5)
    assert result["batches"] == 1 and result["final_flush_pages"] == 0
    assert result["seconds"] > 0.01 and result["writes"] >= 32


class _SlowWrites:
    """Wraps os.pwrite: each call sleeps 50 ms and records how many calls overlap."""

    def __init__(self, real):
        self.real, self.lock = real, threading.Lock()
        self.active = self.max_active = 0
        self.spans: list[tuple[float, float]] = []

    def __call__(self, fd, data, offset):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        start = time.perf_counter()
        time.sleep(0.05)
        try:
            return self.real(fd, data, offset)
        finally:
            with self.lock:
                self.active -= 1
                self.spans.append((start, time.perf_counter()))


@pytest.mark.parametrize("write_batch", [1, 4])
def test_write_backs_of_a_batch_are_in_flight_together(data_file, monkeypatch, write_batch):
    slow = _SlowWrites(os.pwrite)
    monkeypatch.setattr(os, "pwrite", slow)
    result = _run(data_file, read_fraction=0.0, write_batch=write_batch, max_operations=5 * write_batch, seed=3)
    batches = result["batches"]
    assert batches >= 1 and len(slow.spans) == batches * write_batch + result["final_flush_pages"]
    assert slow.max_active == write_batch
    # every write of a batch started before any of them ended: all were in flight together
    # (overlap, not wall time, so a busy machine cannot make this test fail or pass by luck)
    first_batch = sorted(slow.spans)[:write_batch]
    assert max(start for start, _ in first_batch) < min(end for _, end in first_batch)


def test_written_data_lands_in_the_file(io_dir):
    path = app.prepare(io_dir, pages=16, page_size=PAGE, sparse=True)
    result = _run(path, read_fraction=0.2, write_batch=3, max_operations=300, seed=11)
    assert result["final_flush_pages"] > 0  # the flush after the clock must land too
    content = path.read_bytes()
    written = {}
    for page in range(16):
        block = content[page * PAGE:(page + 1) * PAGE]
        if block == bytes(PAGE):
            continue
        page_number, write_number = app.RECORD.unpack_from(block)
        assert page_number == page
        assert block == app.RECORD.pack(page, write_number) * (PAGE // app.RECORD.size)  # the whole page
        written[page] = write_number
    assert len(written) == 16  # 16 pages and ~240 writes: every page was written
    assert max(written.values()) == result["writes"]  # the last write is in the file
    assert len(set(written.values())) == 16


def test_sweep_rows(io_dir):
    rows = app.sweep(io_dir, batches=[1, 4, 16], read_fraction=0.5, pages=64, page_size=PAGE, duration_s=0.15,
                     seed=5, alpha=2.8, k_w=8, sparse=True)
    assert [row["write_batch"] for row in rows] == [1, 4, 16]
    for row in rows:
        assert ["device", *row] == list(app.COLUMNS)  # the workflow adds the device
        assert row["operations"] > 0 and row["ops_per_s"] == pytest.approx(row["operations"] / row["seconds"])
        assert (row["read_fraction"], row["alpha"], row["k_w"]) == (0.5, 2.8, 8)
    assert rows[0]["speedup"] == 1.0 and rows[0]["model_speedup"] == 1.0
    assert rows[1]["speedup"] == pytest.approx(rows[1]["ops_per_s"] / rows[0]["ops_per_s"])
    assert rows[1]["model_speedup"] == model.speedup_batchable_writes(0.5, 2.8, 4)
    assert rows[2]["model_speedup"] == model.speedup_batchable_writes(0.5, 2.8, 8)  # capped at k_w
    assert rows[2]["model_speedup"] > rows[1]["model_speedup"] > 1.0


def test_a_stalled_round_does_not_move_the_repeated_sweep(io_dir, monkeypatch):
    """Rounds (1, 4): the second round's batch 1 ran through a stall of the machine (half its
    throughput). A single round would report its speedup of 5; three report the median round's."""
    throughput = iter([100.0, 250.0, 50.0, 250.0, 100.0, 255.0])

    def scripted(data_file, *, write_batch, **_):
        ops_per_s = next(throughput)
        return {"operations": int(ops_per_s), "seconds": 1.0, "ops_per_s": ops_per_s}

    monkeypatch.setattr(app, "run", scripted)
    rows = app.sweep(io_dir, batches=[1, 4], read_fraction=0.5, pages=16, page_size=PAGE, duration_s=1.0,
                     seed=0, alpha=2.0, k_w=8, sparse=True, repeats=3)
    assert [row["ops_per_s"] for row in rows] == [100.0, 250.0]
    assert [row["speedup"] for row in rows] == [1.0, 2.55]
    assert [row["operations"] for row in rows] == [250, 755] and rows[0]["seconds"] == 3.0


def test_cli_prints_csv(io_dir, capsys):
    app.main([str(io_dir), "--batches", "1", "2", "--duration", "0.05", "--pages", "16", "--sparse",
              "--alpha", "2", "--k-w", "8"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ",".join(app.COLUMNS) and len(lines) == 3
    assert lines[1].startswith(f"{io_dir.name},1,") and lines[2].startswith(f"{io_dir.name},2,")


# --- on a device in this process (emussd.library.Device's interface) --------------------------

class RecordingDevice:
    """Stands for an emulated device in the process: records each page charged to it, sleeps not."""

    def __init__(self):
        self.charged, self.lock = [], threading.Lock()

    def serve(self, op, nbytes, arrival_ns):
        assert arrival_ns <= time.monotonic_ns()  # taken before the I/O, on the model's clock
        with self.lock:
            self.charged.append((op, nbytes))


def test_every_page_io_is_charged_to_the_device(data_file):
    device = RecordingDevice()
    result = _run(data_file, write_batch=4, max_operations=400, seed=3, device=device)
    reads = device.charged.count(("read", PAGE))
    writes = device.charged.count(("write", PAGE))
    assert len(device.charged) == reads + writes
    assert reads == result["reads"]
    assert writes == 4 * result["batches"] + result["final_flush_pages"]  # one charge per page written back


def test_a_device_does_not_change_the_operations(data_file):
    """Same seed, same operation sequence with or without a device (only the timing may differ)."""
    keys = ("operations", "reads", "writes", "batches", "final_flush_pages")
    plain = _run(data_file, write_batch=4, max_operations=300, seed=5)
    charged = _run(data_file, write_batch=4, max_operations=300, seed=5, device=RecordingDevice())
    assert {key: plain[key] for key in keys} == {key: charged[key] for key in keys}


def test_with_a_device_a_file_system_without_direct_io_is_used_buffered(data_file, monkeypatch):
    """The device's model sets the timing, so a file system that refuses O_DIRECT (tmpfs before
    Linux 6.6, a container's) serves; without a device it is still refused (above)."""
    def refuse(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        return real_open(path, flags, *args)

    real_open = os.open
    monkeypatch.setattr(os, "open", refuse)
    device = RecordingDevice()
    result = _run(data_file, max_operations=20, device=device)
    assert result["operations"] == 20 and len(device.charged) >= 20


def test_the_sweep_passes_the_device_to_every_run(io_dir):
    device = RecordingDevice()
    rows = app.sweep(io_dir, batches=[1, 2], read_fraction=0.5, pages=32, page_size=PAGE, duration_s=0.05, seed=1,
                     alpha=2.0, k_w=2, sparse=True, device=device)
    assert len(rows) == 2 and device.charged

"""ace.io_replay: the simulator's I/O log read back (or refused, naming the line) and run on a file,
every phase's pages issued at once."""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest

from ace import io_replay, sim
from pio import writeback_app

PAGE = 4096


@pytest.mark.parametrize("text, message", [
    ("R 1 2\nX 3\n", ":2: an I/O phase is 'R' or 'W'"),
    ("W\n", ":1: an I/O phase"),
    ("R 1 -2\n", ":1: an I/O phase"),
])
def test_a_malformed_log_is_refused_naming_the_line(tmp_path, text, message):
    (tmp_path / "log").write_text(text)
    with pytest.raises(ValueError, match=message):
        io_replay.read_log(tmp_path / "log")


def test_a_log_longer_than_allowed_is_refused(tmp_path):
    (tmp_path / "log").write_text("R 1\n" * 5)
    with pytest.raises(ValueError, match="more than 4 I/O phases"):
        io_replay.read_log(tmp_path / "log", max_phases=4)


def test_the_simulators_schedule_runs_on_a_file_page_for_page(tmp_path):
    binary = sim.build()
    log = tmp_path / "ace.io"
    row = sim.run(binary, policy="lru", ace=True, n_w=4, pool_pages=8, synthetic=True, ops=200, pages=64, read_pct=0,
                  io_log=log)
    phases = io_replay.read_log(log)
    assert sum(len(p) for op, p in phases if op == "W") == row["pages_written"]
    assert sum(1 for op, _ in phases if op == "W") == row["write_batches"]
    assert sum(len(p) for op, p in phases if op == "R") == row["misses"]
    data = writeback_app.prepare(tmp_path, 64, PAGE, sparse=True)
    try:
        done = io_replay.replay(phases, data, PAGE)
    except RuntimeError as error:  # tmp_path's file system refuses O_DIRECT
        pytest.skip(str(error))
    assert (done["pages_read"], done["pages_written"]) == (row["misses"], row["pages_written"])
    assert done["phases"] == len(phases) and done["seconds"] > 0


class RecordingDevice:
    """Stands for an emulated device in the process (emussd.library.Device): records each page."""

    def __init__(self):
        self.charged, self.lock = [], threading.Lock()

    def serve(self, op, nbytes, arrival_ns):
        assert arrival_ns <= time.monotonic_ns()  # taken before the I/O, on the model's clock
        with self.lock:
            self.charged.append((op, nbytes))


def test_with_a_device_every_page_is_charged_to_it(tmp_path, monkeypatch):
    """Each page read or written is charged once, on a file system with or without O_DIRECT (the
    device's model, not the file, sets the timing)."""
    phases = [("R", [1, 2, 3]), ("W", [4, 5]), ("R", [6]), ("W", [7, 8, 9, 10])]
    data = writeback_app.prepare(tmp_path, 16, PAGE, sparse=True)
    real_open = os.open

    def refuse(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(RuntimeError, match="direct I/O"):  # without a device: refused, as before
        io_replay.replay(phases, data, PAGE)
    device = RecordingDevice()
    done = io_replay.replay(phases, data, PAGE, device=device)
    assert (done["pages_read"], done["pages_written"]) == (4, 6)
    assert sorted(device.charged) == sorted([("read", PAGE)] * 4 + [("write", PAGE)] * 6)

"""ace.io_replay: the simulator's I/O log read back (or refused, naming the line) and run on a file,
every phase's pages issued at once."""

from __future__ import annotations

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

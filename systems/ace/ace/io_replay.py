"""The bufferpool simulator's I/O, run on a device: `ace-sim --io-log FILE` writes every I/O
phase of a run as it happens ("R <page> ..." for pages read at once, "W <page> ..." for pages
written at once, in order); replay() issues each phase's pages at once, one thread per page, with
direct I/O on one file, and waits for all of them before the next phase, as the simulator's
clock assumes (systems/ace/sim/README.md, "The model"). The simulator counts rounds of an ideal
device; this measures what a real (or emulated) device takes for the same schedule, so that ACE's
speedup can be checked against the model's on a device (lab 2 of labs/ does).

Pages map to the file's pages modulo its size; the data written is zeros (an emulated device
times I/O by its model, not by the data).

With `device` (an emulated device in this process, e.g. emussd.library.Device), the file is an
ordinary one and each page is charged to the device after its I/O (`device.serve(op, page_size,
arrival_ns)`, which sleeps until the device would have served it): no FUSE mount is needed.
Without it nothing changes."""

from __future__ import annotations

import mmap
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ssdartifact.directio import open_direct, read_page, write_page

MAX_PHASES = 1_000_000  # a log longer than this is refused: it would run for hours on a 2 ms device


def read_log(path: Path, max_phases: int = MAX_PHASES) -> list[tuple[str, list[int]]]:
    """The phases of an I/O log as (op, pages); ValueError naming the line when it is malformed."""
    phases = []
    with open(path, encoding="ascii", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            fields = line.split()
            if not fields:
                continue
            if fields[0] not in ("R", "W") or len(fields) < 2 or not all(f.isdigit() for f in fields[1:]):
                raise ValueError(f"{path}:{number}: an I/O phase is 'R' or 'W' and page numbers, "
                                 f"not {line.strip()[:80]!r}")
            if len(phases) >= max_phases:
                raise ValueError(f"{path}: more than {max_phases} I/O phases")
            phases.append((fields[0], [int(f) for f in fields[1:]]))
    return phases


def _on_device(io, op: str, device):
    """`io` as it is without a device; with one, each page charged to it after the I/O, as of the
    moment before (time.monotonic_ns: the model's clock)."""
    if device is None:
        return io

    def io_on_device(fd: int, buffer: mmap.mmap, offset: int, page_size: int) -> None:
        arrival = time.monotonic_ns()
        io(fd, buffer, offset, page_size)
        device.serve(op, page_size, arrival)

    return io_on_device


def _open(data_file: Path, page_size: int, probe: mmap.mmap, device) -> int:
    """open_direct; with a device, buffered I/O where the file system refuses O_DIRECT, since the
    device's model, not the file, sets the timing then."""
    try:
        return open_direct(data_file, page_size, probe)
    except RuntimeError:
        if device is None:
            raise
        return os.open(data_file, os.O_RDWR)


def replay(phases: list[tuple[str, list[int]]], data_file: Path, page_size: int, device=None) -> dict:
    """Run the phases on `data_file` (a whole number of pages, on a file system with direct I/O);
    returns seconds (all phases, threads started beforehand), phases, pages_read, pages_written.
    With `device`, each page is charged to it (the module's doc)."""
    pages = Path(data_file).stat().st_size // page_size
    if pages < 1:
        raise ValueError(f"{data_file} holds no whole page of {page_size} bytes")
    width = max((len(p) for _, p in phases), default=1)
    buffers = [mmap.mmap(-1, page_size) for _ in range(width)]  # page-aligned, one per page in flight
    fd = _open(Path(data_file), page_size, buffers[0], device)
    ios = {"R": _on_device(read_page, "read", device), "W": _on_device(write_page, "write", device)}
    done = {"R": 0, "W": 0}
    try:
        with ThreadPoolExecutor(max_workers=width, thread_name_prefix="replay") as pool:
            barrier = threading.Barrier(width + 1)  # start every thread before the clock (writeback_app does too)
            started = [pool.submit(barrier.wait) for _ in range(width)]
            barrier.wait()
            for future in started:
                future.result()
            start = time.perf_counter()
            for op, numbers in phases:
                io = ios[op]
                futures = [pool.submit(io, fd, buffers[i], (page % pages) * page_size, page_size)
                           for i, page in enumerate(numbers)]
                for future in futures:
                    future.result()
                done[op] += len(numbers)
            seconds = time.perf_counter() - start
    finally:
        os.close(fd)
        for buffer in buffers:
            buffer.close()
    return {"seconds": seconds, "phases": len(phases), "pages_read": done["R"], "pages_written": done["W"]}

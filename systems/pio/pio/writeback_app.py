"""A bufferpool with unbatchable reads and batchable write-backs (thesis Figure 3.5, T660-667).

The thesis checks the PIO model on a "sample application with unbatchable reads
and batchable writes (a bufferpool that batches writes of dirty pages and
flushes them concurrently during eviction)", varying the number of write-backs
issued at once and comparing with an application that evicts one page at a
time. This module is that application, doing real direct I/O on one file:

* a read is a synchronous read of a random page from the device (unbatchable:
  the application waits for it before going on). Reads always go to the
  device, even for a page that is dirty in memory, so that every read costs one
  device read as in PIO; the pool is a workload generator, not a coherent cache;
* a write dirties a random page held in memory (a page already dirty is
  dirtied again and takes no new slot);
* when ``write_batch`` distinct pages are dirty they are evicted: all of their
  write-backs are issued at once, one per thread of a persistent pool of
  ``write_batch`` threads (``os.pwrite`` releases the GIL), and the application
  waits for all of them before going on.

Only the operation loop is timed. When the time is up the loop goes on to the
next eviction, so a timed run holds whole eviction cycles and every write it
counts was written back inside it: a run that stopped at the deadline would
count up to ``write_batch - 1`` writes without their write-back, a fifth of a
short run's writes at large batches (20 % too high a speedup on a slow emulated
device). A run cut by ``max_operations`` instead writes its leftover dirty
pages back after the clock stops (``final_flush_pages`` says how many), so that
every write lands in the file.

Every written page is filled with 16-byte records ``(page number, write number)``
(two little-endian uint64, write numbers counting the run's writes from 1), so
what landed in the file can be checked.

With ``device`` (an emulated device in this process, e.g. emussd.library.Device),
the file is an ordinary one and each page read or written is then charged to the
device (``device.serve(op, page_size, arrival_ns)``), which sleeps until the
device would have served it: no FUSE mount is needed. Without it nothing changes.
"""

from __future__ import annotations

import argparse
import csv
import mmap
import os
import random
import statistics
import struct
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ssdartifact.directio import open_direct, read_page, write_page

from .model import speedup_batchable_writes

DATA_FILE = "writeback_app.data"
PAGE_ALIGNMENT = 4096  # page sizes must be multiples of this: aligned for every logical block size up to 4 KiB
RECORD = struct.Struct("<QQ")  # (page number, write number), repeated over a written page
_ZERO_CHUNK = 1 << 20

COLUMNS = {
    "device": "declared device name (configs/devices.yaml)",
    "write_batch": "write-backs issued at once when the pool evicts (dirty pages per eviction)",
    "operations": "application operations (reads + writes) done in the timed loops",
    "seconds": "measured seconds of the timed loops (whole eviction cycles: each ends after an eviction)",
    "ops_per_s": "application operations per second (operations / seconds; the median run's with repeats)",
    "speedup": "ops_per_s over ops_per_s of write_batch = 1 (evicting one page at a time) in the same sweep "
               "(the median of the rounds' with repeats)",
    "model_speedup": "PIO prediction S_PIO(read_fraction, alpha, min(write_batch, k_w)) for batchable writes "
                     "(empty when the measured alpha < 1: the model assumes writes cost at least a read)",
    "read_fraction": "probability that an operation is a read (f_r); the rest are writes",
    "alpha": "the device's write/read cost ratio given to the model (the workflow: measured alpha_cost)",
    "k_w": "the device's write concurrency given to the model (the workflow: measured k_w)",
}


def _check_page_size(page_size: int) -> None:
    if not isinstance(page_size, int) or page_size <= 0 or page_size % PAGE_ALIGNMENT:
        raise ValueError(f"page_size must be a positive multiple of {PAGE_ALIGNMENT} bytes (direct I/O alignment), "
                         f"got {page_size!r}")


def _check_positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def prepare(directory: Path, pages: int, page_size: int, *, sparse: bool = False) -> Path:
    """Create ``directory/writeback_app.data`` of ``pages * page_size`` bytes unless it already has that size.

    With ``sparse`` the file is only extended (ftruncate), which is enough for
    an emulated device that times I/O by its model, not by the data; otherwise
    zeros are written with ordinary buffered writes so that a real device holds
    every page.
    """
    _check_positive_int("pages", pages)
    _check_page_size(page_size)
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a directory")
    path = directory / DATA_FILE
    size = pages * page_size
    if path.is_file() and path.stat().st_size == size:
        return path
    with open(path, "wb") as handle:  # truncates a file of the wrong size
        if sparse:
            os.ftruncate(handle.fileno(), size)
        else:
            zeros = bytes(_ZERO_CHUNK)
            left = size
            while left:
                left -= handle.write(zeros[:min(left, _ZERO_CHUNK)])
            handle.flush()
            os.fsync(handle.fileno())
    return path


def charged(io, op: str, device):
    """`io` (read_page or write_page) as it is without a device; with one, each page charged to it
    after the I/O, as of the moment before (time.monotonic_ns: the model's clock)."""
    if device is None:
        return io

    def io_on_device(fd: int, buffer: mmap.mmap, offset: int, page_size: int) -> None:
        arrival = time.monotonic_ns()
        io(fd, buffer, offset, page_size)
        device.serve(op, page_size, arrival)

    return io_on_device


def open_pages(data_file: Path, page_size: int, probe: mmap.mmap, device) -> int:
    """open_direct; with a device, buffered I/O where the file system refuses O_DIRECT (tmpfs
    before Linux 6.6), since the device's model, not the file, sets the timing then."""
    try:
        return open_direct(data_file, page_size, probe)
    except RuntimeError:
        if device is None:
            raise
        return os.open(data_file, os.O_RDWR)


def run(data_file: Path, *, read_fraction: float, write_batch: int, page_size: int, duration_s: float,
        seed: int, max_operations: int | None = None, device=None) -> dict:
    """Run the bufferpool on ``data_file`` for ``duration_s`` seconds (or ``max_operations``, whichever comes first).

    Returns operations, reads, writes, batches (full evictions in the timed
    loop), seconds (timed loop only), ops_per_s and final_flush_pages (dirty
    pages written back after the clock stopped). With ``device``, each page
    I/O is charged to it (the module's doc).
    """
    if not isinstance(read_fraction, (int, float)) or not 0.0 <= read_fraction < 1.0:
        raise ValueError(f"read_fraction must be in [0, 1) (some writes are needed to batch), got {read_fraction!r}")
    _check_positive_int("write_batch", write_batch)
    _check_page_size(page_size)
    if not isinstance(duration_s, (int, float)) or not duration_s > 0:
        raise ValueError(f"duration_s must be > 0, got {duration_s!r}")
    if max_operations is not None:
        _check_positive_int("max_operations", max_operations)
    data_file = Path(data_file)
    if not data_file.is_file():
        raise ValueError(f"{data_file} does not exist: call prepare() first")
    size = data_file.stat().st_size
    if size % page_size:
        raise ValueError(f"{data_file} has {size} bytes, not a whole number of {page_size}-byte pages")
    pages = size // page_size
    if pages < write_batch:
        raise ValueError(f"{data_file} has {pages} pages, fewer than write_batch={write_batch}: "
                         "a batch could never fill")

    rng = random.Random(seed)
    read_buffer = mmap.mmap(-1, page_size)
    slots = [mmap.mmap(-1, page_size) for _ in range(write_batch)]  # page-aligned, one per dirty page
    records_per_page = page_size // RECORD.size
    fd = open_pages(data_file, page_size, read_buffer, device)
    read, write = charged(read_page, "read", device), charged(write_page, "write", device)
    try:
        with ThreadPoolExecutor(max_workers=write_batch, thread_name_prefix="writeback") as pool:
            # Start all write_batch threads now (each waits at the barrier, so none is idle
            # and the pool must spawn the next), keeping thread creation out of the timed loop.
            barrier = threading.Barrier(write_batch + 1)
            started = [pool.submit(barrier.wait) for _ in range(write_batch)]
            barrier.wait()
            for future in started:
                future.result()

            dirty: dict[int, int] = {}  # page -> slot holding its dirty contents

            def flush() -> None:
                futures = [pool.submit(write, fd, slots[slot], page * page_size, page_size)
                           for page, slot in dirty.items()]
                for future in futures:  # wait for all; re-raise the first failure
                    future.result()
                dirty.clear()

            operations = reads = writes = batches = 0
            start = time.perf_counter()
            deadline = start + duration_s
            now = start
            # past the deadline only to finish the eviction cycle (nothing dirty: the cycle is whole)
            while (now < deadline or dirty) and (max_operations is None or operations < max_operations):
                page = rng.randrange(pages)
                if rng.random() < read_fraction:
                    read(fd, read_buffer, page * page_size, page_size)
                    reads += 1
                else:
                    writes += 1
                    slot = dirty.setdefault(page, len(dirty))
                    slots[slot][:] = RECORD.pack(page, writes) * records_per_page
                    if len(dirty) == write_batch:
                        flush()
                        batches += 1
                operations += 1
                now = time.perf_counter()
            seconds = now - start
            final_flush_pages = len(dirty)
            if dirty:
                flush()
    finally:
        os.close(fd)
        read_buffer.close()
        for slot in slots:
            slot.close()
    return {"operations": operations, "reads": reads, "writes": writes, "batches": batches, "seconds": seconds,
            "ops_per_s": operations / seconds if seconds > 0 else 0.0, "final_flush_pages": final_flush_pages}


def sweep(directory: Path, *, batches: list[int], read_fraction: float, pages: int, page_size: int,
          duration_s: float, seed: int, alpha: float | None, k_w: int, sparse: bool = False,
          prepare_in: Path | None = None, repeats: int = 1, device=None) -> list[dict]:
    """Prepare the data file once, run the bufferpool for every write batch (same seed, so the
    same operation sequence) and return one tidy row per batch (columns: ``COLUMNS``).

    With `repeats` > 1 every batch runs that many times, in rounds (1, b, c, 1, b, c, ...), and a
    row gives the median: of ops_per_s, and of each round's speedup over that round's batch 1.
    A round's batches run close together in time, so a stall of the machine (a busy or
    time-shared host) spoils one round, not the result: on a slow CI host one second-long run
    of batch 1 gave 3.05 where the model and every other run gave 2.5-2.6.

    `prepare_in` is where the file is created when that is not `directory` itself: an
    emulated device's backing directory, so the file is not laid out through the device.
    `device`: an emulated device in this process that each page I/O is charged to (run())."""
    batches = list(batches)
    if not batches:
        raise ValueError("batches must not be empty")
    for batch in batches:
        _check_positive_int("every write batch", batch)
    if len(set(batches)) != len(batches):
        raise ValueError(f"batches must not repeat, got {batches}")
    if 1 not in batches:
        raise ValueError(f"batches must contain 1 (evicting one page at a time is the speedup baseline), got {batches}")
    _check_positive_int("k_w", k_w)
    _check_positive_int("repeats", repeats)
    # The model checks alpha and read_fraction; ask it before any I/O so a bad argument fails at once.
    # alpha None: the device's writes are cheaper than its reads, where the PIO model does not apply.
    model = {batch: None if alpha is None else speedup_batchable_writes(read_fraction, alpha, min(batch, k_w))
             for batch in batches}
    data_file = Path(directory) / prepare(Path(prepare_in or directory), pages, page_size, sparse=sparse).name
    rounds = []
    for _ in range(repeats):
        results = {batch: run(data_file, read_fraction=read_fraction, write_batch=batch, page_size=page_size,
                              duration_s=duration_s, seed=seed, device=device) for batch in batches}
        if not results[1]["ops_per_s"] > 0:
            raise RuntimeError("write_batch = 1 completed no operation: no speedup baseline")
        rounds.append(results)
    return [{"write_batch": batch, "operations": sum(r[batch]["operations"] for r in rounds),
             "seconds": sum(r[batch]["seconds"] for r in rounds),
             "ops_per_s": statistics.median(r[batch]["ops_per_s"] for r in rounds),
             "speedup": statistics.median(r[batch]["ops_per_s"] / r[1]["ops_per_s"] for r in rounds),
             "model_speedup": model[batch], "read_fraction": read_fraction, "alpha": alpha, "k_w": k_w}
            for batch in batches]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pio.writeback_app", description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="directory on the device under test (needs O_DIRECT)")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16],
                        help="write-backs issued at once per eviction; must include 1 (default: 1 2 4 8 16)")
    parser.add_argument("--read-fraction", type=float, default=0.5, help="f_r (default 0.5, as in Figure 3.5)")
    parser.add_argument("--alpha", type=float, required=True, help="the device's PIO alpha (for model_speedup)")
    parser.add_argument("--k-w", type=int, required=True, help="the device's PIO k_w (for model_speedup)")
    parser.add_argument("--pages", type=int, default=65536, help="pages in the data file (default 65536)")
    parser.add_argument("--page-size", type=int, default=4096, help="bytes per page (default 4096)")
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per batch size (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sparse", action="store_true",
                        help="create the data file with ftruncate (only for emulated devices)")
    args = parser.parse_args(argv)
    rows = sweep(args.directory, batches=args.batches, read_fraction=args.read_fraction, pages=args.pages,
                 page_size=args.page_size, duration_s=args.duration, seed=args.seed, alpha=args.alpha,
                 k_w=args.k_w, sparse=args.sparse)
    writer = csv.DictWriter(sys.stdout, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows({"device": args.directory.name, **row} for row in rows)


if __name__ == "__main__":
    main()

"""Trace converters to restore-sim's page-trace format, and trace statistics.

Page-trace format (what restore-sim --trace reads): CSV with the header `page,op` (or
`page,op,timestamp`), one request per line, `page` a dense id 0..P-1, `op` R or W, `timestamp`
empty or a non-negative decimal number (the source trace's clock, kept for reference). Every
trace is read with lines of at most MAX_LINE_BYTES, as restore-sim reads it.

Converters (each returns the statistics of what it wrote, see `trace_stats`):
  convert_postgres(src, dst)  our patched PostgreSQL's buffer trace, lines
                              `pid,tablespace,database,relfilenode,fork,block,op` (op R =
                              ReadBuffer, W = MarkBufferDirty); (tablespace, database,
                              relfilenode, fork, block) -> dense page ids in order of first use.
  convert_snia(src, dst)      SNIA IOTTA block traces in the MSR Cambridge CSV layout
                              `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`
                              (Type Read/Write, Offset and Size in bytes).
  convert_thesios(src, dst)   Google Thesios I/O traces (CSV with a header; the columns used are
                              file_offset, request_io_size_bytes, op_type and, when present,
                              filename and start_time).
Block requests become 4 KiB pages (page_size): a request covering bytes [offset, offset+size)
becomes one page request per page it touches, pages offset // page_size ..
(offset + size - 1) // page_size, in order, each with the request's op; a page is identified by
(device or file, block number) and mapped to dense ids in order of first use. Size 0 counts as
one page.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path
from typing import Iterator

from ssdartifact.quoting import quoted

PAGE_SIZE = 4096
# The longest line of a trace, in bytes before its line break: a file without line breaks is
# refused at its first 4 KiB instead of read whole into memory (restore-sim's kMaxTraceLine).
MAX_LINE_BYTES = 4096
# A timestamp as the page trace keeps it: empty, or digits with at most one '.' (restore-sim's
# valid_timestamp); a converter refuses any other rather than write a trace restore-sim refuses.
TIMESTAMP = re.compile(r"(?=.*[0-9])[0-9]*\.?[0-9]*|")

STATS_COLUMNS = ["trace", "unique_pages", "operations", "reads", "writes", "read_pct"]  # Table 6.5
FREQUENCY_COLUMNS = ["trace", "access_count", "pages"]  # Fig 6.7


class TraceFormatError(ValueError):
    """A line of an input trace does not have the expected format (message names file and line)."""


class _Writer:
    def __init__(self, dst: Path, with_timestamp: bool = False):
        self.dst = Path(dst)
        self.tmp = self.dst.with_name(self.dst.name + ".tmp")
        self.handle = open(self.tmp, "w", newline="")
        self.handle.write("page,op,timestamp\n" if with_timestamp else "page,op\n")
        self.ids: dict = {}
        self.counts: Counter = Counter()
        self.reads = self.writes = 0

    def add(self, key, op: str, timestamp=None):
        page = self.ids.setdefault(key, len(self.ids))
        self.counts[page] += 1
        if op == "R":
            self.reads += 1
        else:
            self.writes += 1
        self.handle.write(f"{page},{op}\n" if timestamp is None else f"{page},{op},{timestamp}\n")

    def close(self) -> dict:
        self.handle.close()
        self.tmp.replace(self.dst)  # complete files only
        return _stats(self.dst.name, self.counts, self.reads, self.writes)


def _lines(path) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of a trace file, without its line break, read with a bounded
    length. A byte that is not UTF-8 is kept as an escape (\\xff), which no field accepts."""
    with open(path, "rb") as handle:
        for number, line in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                raise TraceFormatError(f"{path}:{number}: a line longer than {MAX_LINE_BYTES} bytes; a trace has "
                                       "one short request per line")
            yield number, line.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", errors="backslashreplace")


def _timestamp(text: str, column: str, src, n) -> str:
    """A source trace's timestamp (its column `column`) as the page trace keeps it."""
    if not TIMESTAMP.fullmatch(text):
        raise TraceFormatError(f"{src}:{n}: {column} must be a non-negative decimal number, got {quoted(text)}")
    return text


def _stats(name: str, counts: Counter, reads: int, writes: int) -> dict:
    ops = reads + writes
    return {"trace": name, "unique_pages": len(counts), "operations": ops, "reads": reads, "writes": writes,
            "read_pct": 100.0 * reads / ops if ops else 0.0}


def _pages(offset: int, size: int, page_size: int) -> range:
    first = offset // page_size
    last = (offset + max(size, 1) - 1) // page_size
    return range(first, last + 1)


def convert_postgres(src, dst) -> dict:
    out = _Writer(dst)
    for n, line in _lines(src):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        cells = line.split(",")
        if len(cells) != 7 or cells[6] not in ("R", "W"):
            raise TraceFormatError(f"{src}:{n}: expected pid,tablespace,database,relfilenode,fork,block,op "
                                   f"with op R or W, got {quoted(line)}")
        try:
            key = (int(cells[1]), int(cells[2]), int(cells[3]), cells[4], int(cells[5]))
        except ValueError:
            raise TraceFormatError(f"{src}:{n}: tablespace, database, relfilenode and block must be integers: "
                                   f"{quoted(line)}") from None
        out.add(key, cells[6])
    return out.close()


def _op(text: str, src, n) -> str:
    t = text.strip().lower()
    if t in ("read", "r", "diskread"):
        return "R"
    if t in ("write", "w", "diskwrite"):
        return "W"
    raise TraceFormatError(f"{src}:{n}: the request type must be Read or Write, got {quoted(text)}")


def convert_snia(src, dst, page_size: int = PAGE_SIZE) -> dict:
    out = _Writer(dst, with_timestamp=True)
    for n, line in _lines(src):
        cells = next(csv.reader([line]), [])
        if not cells or cells[0].startswith("#"):
            continue
        if n == 1 and [c.strip().lower() for c in cells[:6]] == SNIA_HEADER:
            continue  # a header line, by its names only
        if len(cells) < 6:
            raise TraceFormatError(f"{src}:{n}: expected Timestamp,Hostname,DiskNumber,Type,Offset,Size"
                                   f"[,ResponseTime], got {len(cells)} fields")
        op = _op(cells[3], src, n)
        try:
            offset, size = int(cells[4]), int(cells[5])
        except ValueError:
            raise TraceFormatError(f"{src}:{n}: Offset and Size must be integers (bytes)") from None
        timestamp = _timestamp(cells[0].strip(), "Timestamp", src, n)
        for page in _pages(offset, size, page_size):
            out.add((cells[1], cells[2], page), op, timestamp)
    return out.close()


def convert_thesios(src, dst, page_size: int = PAGE_SIZE) -> dict:
    out = _Writer(dst, with_timestamp=True)
    reader = csv.DictReader(line for _, line in _lines(src))
    needed = {"file_offset", "request_io_size_bytes", "op_type"}
    if reader.fieldnames is None or not needed <= set(reader.fieldnames):
        raise TraceFormatError(f"{src}: a Thesios trace needs the columns {sorted(needed)}, "
                               f"got {quoted(reader.fieldnames)}")
    for n, row in enumerate(reader, 2):
        op = _op(row["op_type"], src, n)
        try:
            offset, size = int(row["file_offset"]), int(row["request_io_size_bytes"])
        except ValueError:
            raise TraceFormatError(f"{src}:{n}: file_offset and request_io_size_bytes must be integers") from None
        timestamp = _timestamp(row.get("start_time") or "", "start_time", src, n)
        for page in _pages(offset, size, page_size):
            out.add((row.get("filename", ""), page), op, timestamp)
    return out.close()


# The page trace's header, by exact name only (restore-sim's read_trace accepts the same).
PAGE_TRACE_HEADERS = ("page,op", "page,op,timestamp")
SNIA_HEADER = ["timestamp", "hostname", "disknumber", "type", "offset", "size"]


def read_page_trace(path):
    """Yields (page, op) of a page trace; a line that is not `page,op[,timestamp]` (or the header,
    as the first line) is an error naming it."""
    first = True
    for n, line in _lines(path):
        if not line or line.startswith("#"):
            continue
        if first:
            first = False
            if line in PAGE_TRACE_HEADERS:
                continue
        cells = line.split(",")
        if (len(cells) not in (2, 3) or not re.fullmatch(r"[0-9]{1,10}", cells[0]) or int(cells[0]) >= 1 << 31
                or cells[1].upper() not in ("R", "W") or not TIMESTAMP.fullmatch(cells[2] if len(cells) == 3 else "")):
            raise TraceFormatError(f"{path}:{n}: expected page,op[,timestamp] (page a whole number below 2^31, op R "
                                   "or W, timestamp empty or a non-negative decimal number; a header only as "
                                   f"{' or '.join(PAGE_TRACE_HEADERS)}), got {quoted(line)}")
        yield int(cells[0]), cells[1].upper()


def trace_stats(path) -> dict:
    """Table 6.5's columns of a page trace: unique pages and operations (plus reads, writes)."""
    counts, reads, writes = Counter(), 0, 0
    for page, op in read_page_trace(path):
        counts[page] += 1
        if op == "R":
            reads += 1
        else:
            writes += 1
    return _stats(Path(path).name, counts, reads, writes)


def frequency_distribution(path) -> list[dict]:
    """Fig 6.7: how many pages were accessed exactly k times, for every k that occurs."""
    counts = Counter(page for page, _ in read_page_trace(path))
    histogram = Counter(counts.values())
    name = Path(path).name
    return [{"trace": name, "access_count": k, "pages": histogram[k]} for k in sorted(histogram)]

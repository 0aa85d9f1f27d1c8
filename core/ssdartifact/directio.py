"""Pages read and written with direct I/O (O_DIRECT), the way a database's bufferpool does:
page-aligned buffers (an mmap), whole pages, and a clear error when a file system refuses
direct I/O. Used by PIO's write-back application and by ACE's I/O replay."""

from __future__ import annotations

import errno
import mmap
import os
from pathlib import Path


def _direct_io_error(path: Path, error: OSError) -> RuntimeError:
    return RuntimeError(f"the file system of {path.parent} does not support direct I/O (O_DIRECT): {error}. "
                        "Use a directory on a block-device file system or an emulated SSD mounted with direct_io.")


def open_direct(path: Path, page_size: int, probe: mmap.mmap) -> int:
    """Open for direct reads and writes and read page 0 once, since some file
    systems accept O_DIRECT at open and refuse it only at the first I/O."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    except OSError as error:
        if error.errno == errno.EINVAL:
            raise _direct_io_error(path, error) from error
        raise
    try:
        read_page(fd, probe, 0, page_size)
    except OSError as error:
        os.close(fd)
        if error.errno == errno.EINVAL:
            raise _direct_io_error(path, error) from error
        raise
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_page(fd: int, buffer: mmap.mmap, offset: int, page_size: int) -> None:
    # preadv into the page-aligned mmap: os.pread would allocate an unaligned buffer, which O_DIRECT refuses.
    done = os.preadv(fd, [buffer], offset)
    if done != page_size:
        raise OSError(errno.EIO, f"short direct read at offset {offset}: {done} of {page_size} bytes")


def write_page(fd: int, buffer: mmap.mmap, offset: int, page_size: int) -> None:
    done = os.pwrite(fd, buffer, offset)
    if done != page_size:
        raise OSError(errno.EIO, f"short direct write at offset {offset}: {done} of {page_size} bytes")

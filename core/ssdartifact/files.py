"""Small file helpers: hashing and atomic writes, so that no half-written
result ever looks complete."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def _read_umask() -> int:
    """The process's umask (read once, at import, before any worker thread exists)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temporary file in the same directory, then rename over the target."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; results are shared files: the usual mode under the umask.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))

"""containers/.cache: the fetched inputs, the base's root file system and build logs (gitignored,
archivable), one process at a time per image, and each build's scratch folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from pathlib import Path

from .catalog import CONTAINERS

CACHE = CONTAINERS / ".cache"  # fetched inputs, the base rootfs, build logs; gitignored, archivable


@contextlib.contextmanager
def exclusive(name: str):
    """One process at a time for `name` (parallel workflow jobs may ask for the same image)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def scratch(name: str):
    """A scratch folder for one build, removed after it (its layer tars are large)."""
    work = CACHE / "work" / f"{name}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)  # no copy: the cache and the context are on one file system
    except OSError:
        shutil.copy2(source, target)

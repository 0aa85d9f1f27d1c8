"""Re-resolving the locks from the mirror (`make images-lock`): the base's package set, an
image's .debs and its Python wheels.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from . import ContainerError, cache, rel, say, write_readable
from .base import BOOTSTRAP, VARIANT, base_tag, bootstrap, ensure_base, rerun_as_root, source_date_epoch
from .build import ensure_image
from .catalog import BASE_DIR, image_dir, mirror_of, parent_of, settings
from .engine import docker
from .lockfiles import parse_python_lock, python_lock_text, write_lock
from .mirror import resolve


def lock(name: str) -> Path:
    """Re-resolve a lock from the mirror: the base's package set, or an image's .debs and Python wheels."""
    base = settings()["base"]
    mirror, suite = mirror_of(base), base["suite"]
    if name == "base":
        path = BASE_DIR / "packages.lock"
        if base["source"] == "registry":
            say("base.source is registry: the base is pinned by its digest; nothing to lock")
            return path
        if os.geteuid() != 0:
            rerun_as_root("lock", "base")
            return path
        scratch = cache.CACHE / "base" / f".lock-{os.getpid()}" / "rootfs.tar"
        debs = bootstrap(base, scratch, source_date_epoch() if path.exists() else int(time.time()))
        changed = write_lock(path, debs, f"The packages of the base image ({BOOTSTRAP} --variant={VARIANT}).",
                             mirror, suite)
        final = cache.CACHE / "base" / base_tag(base).split(":")[1] / "rootfs.tar"
        if not changed and not final.exists():  # keep this rootfs: the lock, hence its date, is the same
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(scratch, final)
        shutil.rmtree(scratch.parent, ignore_errors=True)
        say(f"{rel(path)}: {len(debs)} packages, {'updated' if changed else 'unchanged'}")
        return path
    directory = image_dir(name)
    wanted = wanted_packages(directory / "packages.txt")
    above = parent_of(name)
    below = ensure_image(above) if above else ensure_base()  # what is installed already
    status = docker("run", "--rm", "--network", "none", below, "cat", "/var/lib/dpkg/status")
    debs = resolve(wanted, status, base)
    path = directory / "packages.lock"
    changed = write_lock(path, debs, f"Every .deb containers/{name} adds to {above or 'the base'}: the closure of "
                         "packages.txt.", mirror, suite)
    say(f"{rel(path)}: {len(debs)} packages, {'updated' if changed else 'unchanged'}")
    if (directory / "python.lock").exists():  # the image opts into the project's Python environment
        _lock_python(directory / "python.lock")
    return path


def wanted_packages(path: Path) -> list[str]:
    if not path.exists():
        raise ContainerError(f"{rel(path)} is missing: list the Debian packages the image needs, one a line")
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def _lock_python(path: Path) -> None:
    text = python_lock_text()
    changed = not path.exists() or path.read_text() != text
    if changed:
        write_readable(path, text)
    say(f"{rel(path)}: {len(parse_python_lock(text))} packages, {'updated' if changed else 'unchanged'}")

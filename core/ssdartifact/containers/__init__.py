"""Container images of the systems, built hermetically (DESIGN.md, "Hermetic container builds").

The base is Debian 12 made with mmdebstrap (minbase), so no registry is needed. On it, the
parent (configs/containers.yaml `parent:`, containers/python) adds Python and the project's
locked environment, and every system's image adds its own .debs on top of the parent. Every
input is fetched and checked on the host: the .debs pinned in containers/<name>/packages.lock
(verified by sha256) and the wheels of python.lock (uv.lock's, verified by pip's
--require-hashes). An image is one layer on its parent, made by one `docker run --network none`
with its inputs bind-mounted read-only, so no input stays in the image (the RUN --mount=type=bind
of BuildKit, which this engine lacks).

Images are bit-reproducible. The base's root file system comes from mmdebstrap with
SOURCE_DATE_EPOCH, the base lock's date. Each install runs with that date, and its layer is
written with file times clamped to it (imagearchive). So the same locks give the same image ID
on any machine.

Tags are keys: the base's is a hash of its lock, an image's a hash of its directory (package
list, locks), its recipe and its parent's tag. An image is rebuilt exactly when one of those
changes, and locks are refreshed only on request (`make images-lock`).

The modules, from the ground up, one concern each (each imports only those before it):

  catalog     the images configs/containers.yaml declares, what each extends, how tags are keyed
  cache       containers/.cache: fetched inputs, one process at a time per image, scratch folders
  lockfiles   packages.lock and python.lock: their lines, read and written
  engine      the docker command: run it, inspect an image, load an archive
  mirror      the Debian mirror: reach it, apt on it with a private configuration, fetch locked .debs
  wheels      the wheels of python.lock, fetched (or built from an sdist) on the host
  base        the base image: its tag, its root file system from mmdebstrap
  build       an image's layer: its install script, its tag, building it
  relock      re-resolving the locks (`make images-lock`)
  save        docker save to tarballs with their sha256 (`make images-save`)
  hardened    the hardened `docker run` of a workflow step, and giving its outputs back
  __main__    the command line (`python -m ssdartifact.containers`; its help lists the commands)

This file holds what they all share: the error they raise and how they speak.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ssdartifact import REPO_ROOT
from ssdartifact.files import atomic_write_text


class ContainerError(RuntimeError):
    """Something stops a build; the message says what to do next."""


def write_readable(path: Path, text: str) -> None:
    atomic_write_text(path, text)
    path.chmod(0o644)  # committed locks and archived checksums are for everyone to read (mkstemp gives 0600)


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def say(message: str) -> None:
    print(f"containers: {message}", file=sys.stderr, flush=True)

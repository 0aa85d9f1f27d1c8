"""The external systems' sources, pinned in configs/sources.yaml by sha256: a repository's commit
(GitHub's `git archive` of it) or a release tarball at its address (Spark's, on PyPI).

    tarball = sources.fetch("graphchi", downloads)   # a verified <repo>-<commit>.tar.gz
    tree = sources.unpack("graphchi", tarball, into)  # into/<repo>-<commit>/

A tarball is used only when its sha256 is the pinned one, wherever it came from: its address (the
commit's archive on GitHub, or the release's) when that is reachable, otherwise the local folder
of tarballs (the environment's SSD_SOURCES, else the file's `local_folder`). A tarball with
another sha256 is never kept, so nothing unpinned or unverified is ever built.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import REPO_ROOT, config
from .files import sha256_file

SOURCES_ENV = "SSD_SOURCES"
# GitHub serves a commit's `git archive` (top folder <name>-<commit>/) at this address.
ARCHIVE_URL = "https://codeload.github.com/{repository}/tar.gz/{commit}"
DOWNLOAD_TIMEOUT_S = 60


class SourceError(RuntimeError):
    """No tarball with the pinned sha256 could be found: the message says where we looked."""


@dataclass(frozen=True)
class Pin:
    name: str
    sha256: str
    license: str
    repository: str | None = None   # owner/name on GitHub, with `commit`: the commit's `git archive`
    commit: str | None = None
    release_url: str | None = None  # or a release's tarball, whose top folder is `top_folder`
    top_folder: str | None = None
    archive_name: str | None = None  # a part of the commit's tree, not its whole archive: local only

    @property
    def top_directory(self) -> str:
        return self.top_folder or f"{self.repository.split('/')[1]}-{self.commit}"

    @property
    def archive(self) -> str:
        if self.archive_name:
            return self.archive_name
        return self.release_url.rsplit("/", 1)[1] if self.release_url else f"{self.top_directory}.tar.gz"

    @property
    def url(self) -> str | None:
        """Where it is downloaded from; None for a part of a commit's tree, which no server offers."""
        if self.archive_name:
            return None
        return self.release_url or ARCHIVE_URL.format(repository=self.repository, commit=self.commit)

    @property
    def what(self) -> str:
        return f"{self.repository} at {self.commit[:12]}" if self.commit else self.archive


def pin(name: str) -> Pin:
    systems = config.load("sources.yaml")["systems"]
    if name not in systems:
        raise SourceError(f"configs/sources.yaml pins no source named {name!r}; it pins {', '.join(sorted(systems))}")
    return Pin(name=name, **systems[name])


def local_folder() -> Path:
    """SSD_SOURCES when set, else configs/sources.yaml's local_folder (relative to the repository)."""
    chosen = os.environ.get(SOURCES_ENV) or config.load("sources.yaml")["local_folder"]
    return (REPO_ROOT / chosen).resolve()


def where_from(name: str, downloads: Path) -> tuple[str | None, str]:
    """Where `fetch` would take the pinned tarball from, without fetching it: (a place, "") when an
    earlier fetch or the local folder has it with the pinned sha256 or GitHub answers, else
    (None, what was tried). A check before a run that builds it (check-config)."""
    wanted = pin(name)
    tried = []
    for candidate in (Path(downloads) / wanted.archive, local_folder() / wanted.archive):
        if candidate.is_file() and sha256_file(candidate) == wanted.sha256:
            return str(candidate), ""
        tried.append(f"{candidate}: " + ("another sha256" if candidate.is_file() else "no such file"))
    try:
        if wanted.url:
            with urllib.request.urlopen(urllib.request.Request(wanted.url, method="HEAD"), timeout=10):
                return wanted.url, ""
    except (urllib.error.URLError, OSError) as error:
        tried.append(f"{wanted.url}: {getattr(error, 'reason', error)}")
    return None, (f"no source of {name} ({wanted.what}): " + "; ".join(tried) +
                  f". Put {wanted.archive} in a folder and point {SOURCES_ENV} at it, or set local_folder in "
                  "configs/sources.yaml")


def how_to_supply(profile: str) -> str:
    """The command that runs `profile` with the pinned tarballs from a folder (each the archive that
    `where_from` names), for a run that found them neither here nor at their addresses."""
    command = f"{SOURCES_ENV}=<folder with the tarballs> make reproduce"
    return command if profile == "quick" else f"{command} PROFILE={profile}"


def fetch(name: str, downloads: Path, say=print) -> Path:
    """downloads/<archive>, with the pinned sha256: kept from an earlier fetch, downloaded, or
    copied from the local folder."""
    wanted = pin(name)
    downloads = Path(downloads)
    target = downloads / wanted.archive
    if target.is_file() and sha256_file(target) == wanted.sha256:
        return target
    downloads.mkdir(parents=True, exist_ok=True)
    tried = []
    with tempfile.TemporaryDirectory(dir=downloads, prefix=".fetch-") as scratch:
        candidate = Path(scratch) / wanted.archive
        try:
            if not wanted.url:
                raise OSError("no address: a part of the commit's tree, kept in a local folder")
            with urllib.request.urlopen(wanted.url, timeout=DOWNLOAD_TIMEOUT_S) as response, \
                    open(candidate, "wb") as handle:
                shutil.copyfileobj(response, handle)
            tried.append(_accepted(candidate, wanted, wanted.url))
        except (urllib.error.URLError, OSError) as error:
            tried.append(f"{wanted.url or wanted.archive}: {getattr(error, 'reason', error)}")
        if tried[-1] is None:
            say(f"{name}: downloaded {wanted.url}")
        else:
            local = local_folder() / wanted.archive
            if local.is_file():
                shutil.copyfile(local, candidate)
                tried.append(_accepted(candidate, wanted, str(local)))
            else:
                tried.append(f"{local}: no such file")
        if tried[-1] is None:
            os.replace(candidate, target)
            return target
    raise SourceError(
        f"no source of {name} ({wanted.what}) with the pinned sha256 "
        f"{wanted.sha256[:16]}…: " + "; ".join(tried) +
        f". Put {wanted.archive} (" + _what_the_tarball_is(wanted) + f") in a folder and point "
        f"{SOURCES_ENV} at it, or set local_folder in configs/sources.yaml.")


def _what_the_tarball_is(wanted: Pin) -> str:
    if wanted.archive_name:
        return f"part of {wanted.repository}'s tree at {wanted.commit[:12]}, made with `git archive`"
    return "the commit's `git archive`, as GitHub serves it" if wanted.commit else f"from {wanted.url}"


def _accepted(candidate: Path, wanted: Pin, origin: str) -> str | None:
    """None when the candidate has the pinned sha256; otherwise why it was refused."""
    got = sha256_file(candidate)
    if got == wanted.sha256:
        return None
    candidate.unlink()
    return f"{origin} has sha256 {got[:16]}…, not the pinned one: refused"


def unpack(name: str, tarball: Path, into: Path) -> Path:
    """Extract a fetched tarball into `into` (emptied first) and return its top folder."""
    wanted = pin(name)
    into = Path(into)
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(tarball) as archive:  # sha256-checked; the data filter where Python has it
        archive.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    tree = into / wanted.top_directory
    if not tree.is_dir():
        raise SourceError(f"{tarball.name} has no top folder {wanted.top_directory}/")
    return tree

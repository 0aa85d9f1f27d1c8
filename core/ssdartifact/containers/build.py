"""An image: the one layer it adds on the image it extends (its install script), the tag that
keys it, and building it in a container with no network from inputs fetched on the host.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import subprocess
import tarfile
import time
from pathlib import Path

from ssdartifact.files import sha256_file
from ssdartifact.imagearchive import Config, normalize_layer

from . import ContainerError, cache, catalog, rel, say
from .base import base_tag, ensure_base, source_date_epoch
from .cache import exclusive, link, scratch
from .catalog import REFRESH, image_dir, image_entry, lineage, parent_of, settings, tag_key
from .engine import docker, image_exists, load
from .lockfiles import parse_lock, python_lock_text
from .mirror import fetch_debs
from .wheels import fetch_wheels, staged_python_lock


def tree_files(directory: Path) -> dict[str, str]:
    """relative path -> sha256 of every file of an image directory (its build context before inputs)."""
    return {str(path.relative_to(directory)): sha256_file(path)
            for path in sorted(directory.rglob("*")) if path.is_file()}


def image_tag(name: str, parent: str | None = None, directory: Path | None = None) -> str:
    """ssd-artifact/<name>:<12 hex>, a hash of what makes the image: its directory (package list,
    locks; the fetched inputs are fixed by the locks' hashes), the install it runs, its environment
    and its parent's tag. It changes exactly when the image's bytes may."""
    directory = directory or image_dir(name)
    if parent is None:
        above = parent_of(name)
        parent = image_tag(above) if above else base_tag()
    entry = image_entry(name)
    recipe = {'from': parent, 'files': tree_files(directory),
              'run': [INSTALL_ENV, install_script(directory, entry["finish"])], 'env': entry["env"],
              'workdir': entry["workdir"]}
    return f"{catalog.REPOSITORY}/{name}:{tag_key(recipe)}"


def ensure_image(name: str) -> str:
    """The image's tag; builds the base, the parent and the image first when missing."""
    directory = image_dir(name)
    above = parent_of(name)
    below = ensure_image(above) if above else ensure_base()
    tag = image_tag(name, below, directory)
    if image_exists(tag):
        return tag
    with exclusive(name):
        if not image_exists(tag):  # another process may have built it while we waited
            _build(name, directory, below, tag)
    return tag


# An image's one layer: its locked .debs and, for an image with a python.lock (the parent), a venv of
# its wheels, installed from /inputs (mounted read-only, so nothing is copied in and nothing is
# left behind). The variables make the files repeatable: SOURCE_DATE_EPOCH (dpkg's and useradd's
# dates, TeX's format dumps with FORCE_SOURCE_DATE, and hash-based .pyc in Python's byte-compiling) and
# a fixed string hashing, in Python (the order of a set in a .pyc follows it) and in Perl (TeX Live's
# scripts add to its file database, ls-R, in a hash's order, and which of two files of one name a TeX
# format is made from follows ls-R's order). The files removed are the ones that
# differ anyway (logs with times, ldconfig's cache of inode numbers, apt's binary caches with file
# times): those mmdebstrap removes from the base, and apt's.
INSTALL_ENV = ("export DEBIAN_FRONTEND=noninteractive SOURCE_DATE_EPOCH={epoch} FORCE_SOURCE_DATE=1 PYTHONHASHSEED=0 "
               "PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0")


# apt as root throughout: with its sandbox user (_apt), whether _apt may read the mounted .debs (the host
# folder's permissions) would decide what apt does to /var/cache/apt/archives/partial, hence the layer
INSTALL_DEBS = ("apt-get install --yes --no-install-recommends -o APT::Sandbox::User=root "
                "-o DPkg::Options::=--force-unsafe-io /inputs/debs/*.deb")


INSTALL_PYTHON = ("python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-index "
                  "--find-links /inputs/python/wheels --require-hashes --no-deps --only-binary :all: "
                  "--no-cache-dir --disable-pip-version-check -r /inputs/python/python.lock")


# Java's trust store (ca-certificates-java, in cave's image) holds each certificate with the time it was
# added; no step has a network, so Java needs none, and it is removed.
CLEANUP = ("rm -f /var/log/dpkg.log /var/log/alternatives.log /var/log/apt/history.log /var/log/apt/term.log "
           "/var/log/apt/eipp.log.xz /var/cache/ldconfig/aux-cache /var/cache/apt/*.bin")


def install_script(directory: Path, finish: str = "") -> str:
    """What the image's layer runs (without the date, which the base tag already keys): its installs,
    then its entry's `finish` (configs/containers.yaml: what an image's packages leave that is not
    repeatable), then the cleanup every image gets."""
    lock = directory / "packages.lock"
    steps = [*([INSTALL_DEBS] if lock.exists() and parse_lock(lock.read_text(), rel(lock)) else []),
             *([INSTALL_PYTHON] if (directory / "python.lock").exists() else []), *([finish] if finish else []),
             CLEANUP]
    return " && ".join(steps)


def _build(name: str, directory: Path, below: str, tag: str) -> None:
    started = time.monotonic()
    base = settings()["base"]
    python_lock = directory / "python.lock"
    if python_lock.exists() and python_lock.read_text() != python_lock_text():
        raise ContainerError(f"{rel(python_lock)} differs from uv.lock; refresh it with `{REFRESH}`")
    with exclusive("inputs"):  # images share the .deb and wheel stores
        debs = fetch_debs(directory / "packages.lock", base)
        wheels = fetch_wheels(python_lock) if python_lock.exists() else {}
    entry = image_entry(name)
    if not debs and not wheels and not any(entry[key] for key in ("env", "workdir", "finish")):  # all is below
        say(f"{tag}: {below} has every package of containers/{name}")
        docker("tag", below, tag)
        return
    log = cache.CACHE / "logs" / f"{name}.build.log"
    say(f"building {tag} on {below} (log {rel(log)})")
    with scratch(name) as work:
        inputs = work / "inputs"  # debs/ and python/ (python.lock and its wheels), linked from the stores
        (inputs / "debs").mkdir(parents=True)
        for path in debs:
            link(path, inputs / "debs" / path.name)
        if wheels:
            (inputs / "python" / "wheels").mkdir(parents=True)
            (inputs / "python" / "python.lock").write_text(staged_python_lock(python_lock.read_text(), wheels))
            for path in wheels.values():
                link(path, inputs / "python" / "wheels" / path.name)
        epoch = source_date_epoch()
        install = install_script(directory, entry["finish"])
        script = f"{INSTALL_ENV.format(epoch=epoch)} && {install}"
        container = f"ssd-artifact-build-{name}-{os.getpid()}"
        try:
            docker("run", "--name", container, "--network", "none", "--volume", f"{inputs}:/inputs:ro", below,
                   "sh", "-euc", script, log=log)
            committed = docker("commit", container)
        finally:
            subprocess.run(["docker", "rm", "--force", container], capture_output=True)
        installed = time.monotonic()
        try:
            layer, image = _top_layer(committed, below, work)
        finally:
            subprocess.run(["docker", "rmi", committed], capture_output=True)
        if layer is None:
            raise ContainerError(f"installing containers/{name} changed no file of {below}: give it packages "
                                 "of its own, or put its env and workdir on the image it extends")
        diff_id = normalize_layer(layer, work / "layer.tar", epoch)
        load(tag, image.with_top(diff_id, f"{install} (containers/{name})", entry["env"], entry["workdir"]),
              {diff_id: work / "layer.tar"})
    say(f"built {tag} in {time.monotonic() - started:.0f} s (installing {installed - started:.0f} s)")


def build_all(names: list[str]) -> list[tuple[str, str]]:
    """Each image's tag, building what is missing: the images that extend the same one side by side,
    as many at a time as the machine has cores (an install waits on dpkg's writes as much as on a core),
    each after the images it extends."""
    tags = {}
    depths = sorted({len(lineage(name)) for name in names})
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for depth in depths:
            level = [name for name in names if len(lineage(name)) == depth]
            tags.update(zip(level, pool.map(ensure_image, level), strict=True))
    return [(name, tags[name]) for name in names]


def _top_layer(committed: str, below: str, work: Path) -> tuple[Path | None, Config]:
    """The layer `docker commit` added on `below`, as a tar (None when the container changed no
    file: docker then adds no layer), and the committed image's config: read from `docker save`,
    which writes every layer of the image (those of `below` are dropped)."""
    known = set(json.loads(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", below)))
    saving = subprocess.Popen(["docker", "save", committed], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    layers, image = [], None
    with tarfile.open(fileobj=saving.stdout, mode="r|") as archive:
        for member in archive:
            if member.name.endswith("/layer.tar") and member.isreg():
                path = work / f"saved-{len(layers)}.tar"
                digest = hashlib.sha256()
                with archive.extractfile(member) as data, open(path, "wb") as out:
                    while chunk := data.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                if f"sha256:{digest.hexdigest()}" in known:
                    path.unlink()
                else:
                    layers.append(path)
            elif "/" not in member.name and member.name.endswith(".json") and member.name != "manifest.json":
                image = Config.of_commit(archive.extractfile(member).read(), source_date_epoch())
    error = saving.stderr.read().decode(errors="replace")
    if saving.wait() != 0 or image is None or len(layers) > 1:
        raise ContainerError(f"docker save {committed} gave {len(layers)} new layers, not 1 "
                             f"(its config {'found' if image else 'missing'}): {error.strip()[-2000:]}")
    return (layers[0] if layers else None), image

"""The images configs/containers.yaml declares, what each extends, and how their tags are named."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ssdartifact import REPO_ROOT, config

from . import ContainerError

CONTAINERS = REPO_ROOT / "containers"
BASE_DIR = CONTAINERS / "base"
REFRESH = "make images-lock"
REPOSITORY = "ssd-artifact"  # the tags' repository: <REPOSITORY>/<name>:<key>


def settings() -> dict:
    return config.load("containers.yaml")


def mirror_of(base: dict) -> str:
    return (base.get("snapshot") or base["mirror"]).rstrip("/")


def image_entry(name: str) -> dict:
    """An image's entry of configs/containers.yaml `images:` as {path, from, env, workdir}."""
    images = settings()["images"]
    if name not in images:
        raise ContainerError(f"no image {name!r} in configs/containers.yaml; known: {', '.join(images)}")
    entry = images[name]
    defaults = {"from": settings()["parent"], "env": {}, "workdir": "", "finish": ""}
    return {**defaults, "path": entry} if isinstance(entry, str) else {**defaults, **entry}


def image_dir(name: str) -> Path:
    return REPO_ROOT / image_entry(name)["path"]


def parent_of(name: str) -> str | None:
    """The image `name` extends: the one its entry names (`from:`), else the shared parent
    (configs/containers.yaml `parent:`); None for the parent itself, which extends the base."""
    above = image_entry(name)["from"]
    return None if name == settings()["parent"] else above


def lineage(name: str) -> list[str]:
    """`name` and the images it extends, down to the one on the base: what its bytes depend on."""
    chain = [name]
    while (above := parent_of(chain[-1])) is not None:
        if above in chain:
            raise ContainerError(f"configs/containers.yaml: images extend each other: {' -> '.join([*chain, above])}")
        chain.append(above)
    return chain


def tag_key(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]

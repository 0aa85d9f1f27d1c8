"""Docker images written byte for byte: what BuildKit's `rewrite-timestamp` does, for an engine without it.

Docker's image ID is the sha256 of the image's config, which lists the sha256 of every layer's
tar. A layer made by `docker commit` carries build-time file times, and the config carries
creation dates, a container ID and the builder's version. So the same files give a different
ID every time. Here a layer's tar is rewritten with every file time clamped to
SOURCE_DATE_EPOCH and no owner names. The config is written from its parts with that date
everywhere. Then the two are loaded with `docker load`. Given the same files, the ID is the same
on every machine. The files themselves are made the same by the caller: a reproducible bootstrap,
and installs that honour SOURCE_DATE_EPOCH.

The engine here (Docker 20.10, no buildx) has neither `rewrite-timestamp` nor
SOURCE_DATE_EPOCH support in its builder (both came in BuildKit 0.11-0.13).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO


class _Hashing(io.RawIOBase):
    """A write-only file that hashes what goes through it."""

    def __init__(self, target: BinaryIO):
        self.target, self.sha256 = target, hashlib.sha256()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha256.update(data)
        return self.target.write(data)


def normalize_layer(source: Path, target: Path, epoch: int) -> str:
    """Copy a layer's tar with every time clamped to `epoch`, numeric owners only and no other
    metadata than the file's (extended attributes kept: file capabilities live there). Entries keep
    their order: Docker writes a layer in name order, with each hard link after its target.
    Returns the new tar's digest, "sha256:<hex>", which is the layer's diff ID."""
    with tarfile.open(source) as tar_in, open(target, "wb") as raw:
        hashing = _Hashing(raw)
        with tarfile.open(fileobj=hashing, mode="w|", format=tarfile.PAX_FORMAT) as tar_out:
            for member in tar_in:
                clean = tarfile.TarInfo(member.name)
                for name in ("type", "mode", "uid", "gid", "size", "linkname", "devmajor", "devminor"):
                    setattr(clean, name, getattr(member, name))
                clean.mtime = min(int(member.mtime), epoch)
                clean.pax_headers = {key: value for key, value in member.pax_headers.items()
                                     if key.startswith("SCHILY.xattr.")}
                tar_out.addfile(clean, tar_in.extractfile(member) if member.isreg() else None)
    return f"sha256:{hashing.sha256.hexdigest()}"


def iso(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Config:
    """An image's config (the Docker image spec's, v1.2), written in one canonical form. The
    command is always `bash`, the base's; an image sets its environment and working directory."""
    epoch: int
    env: list[str]
    workdir: str = ""
    diff_ids: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)  # what made each layer, bottom first

    @classmethod
    def of_commit(cls, data: bytes, epoch: int) -> Config:
        """The config `docker commit` wrote, with its dates, container and builder dropped."""
        document = json.loads(data)
        runtime = document.get("config") or {}
        return cls(epoch, runtime.get("Env") or [], runtime.get("WorkingDir") or "", document["rootfs"]["diff_ids"],
                   [entry.get("created_by", "") for entry in document.get("history", [])
                    if not entry.get("empty_layer")])

    def with_top(self, diff_id: str, created_by: str, env: dict[str, str], workdir: str | None) -> Config:
        """This image with its top layer replaced by `diff_id`, and `env` set over its environment."""
        merged = dict(item.split("=", 1) for item in self.env) | env
        return Config(self.epoch, [f"{key}={value}" for key, value in merged.items()], workdir or self.workdir,
                      [*self.diff_ids[:-1], diff_id], [*self.history[:-1], created_by])

    def to_bytes(self) -> bytes:
        runtime = {"Env": self.env, "Cmd": ["bash"]} | ({"WorkingDir": self.workdir} if self.workdir else {})
        document = {"architecture": "amd64", "os": "linux", "created": iso(self.epoch), "config": runtime,
                    "rootfs": {"type": "layers", "diff_ids": self.diff_ids},
                    "history": [{"created": iso(self.epoch), "created_by": text} for text in self.history]}
        return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()

    @property
    def image_id(self) -> str:
        return f"sha256:{hashlib.sha256(self.to_bytes()).hexdigest()}"


def write_archive(out: BinaryIO, config: Config, tag: str, new_layers: dict[str, Path]) -> None:
    """A `docker load` archive of the image: its config, a manifest naming every layer, and the
    files of `new_layers` (diff ID -> tar) only. The engine takes a layer it already has (the
    parent's) from its store without opening the file, so the parent's layers need not be sent."""
    data = config.to_bytes()
    manifest = [{"Config": "config.json", "RepoTags": [tag],
                 "Layers": [f"{diff_id.split(':')[1]}/layer.tar" for diff_id in config.diff_ids]}]
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        for name, content in (("config.json", data), ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(content), config.epoch
            archive.addfile(info, io.BytesIO(content))
        for diff_id, path in new_layers.items():
            info = archive.gettarinfo(str(path), arcname=f"{diff_id.split(':')[1]}/layer.tar")
            with open(path, "rb") as handle:
                archive.addfile(info, handle)

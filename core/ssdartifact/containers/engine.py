"""The docker command: run it (with an error that quotes it), inspect an image, load an archive."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from ssdartifact.imagearchive import Config, write_archive

from . import ContainerError, rel


@functools.cache
def check_docker() -> None:
    if shutil.which("docker") is None:
        problem = "the docker command is not on PATH"
    else:
        result = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
        if result.returncode == 0:
            return
        problem = ((result.stderr or result.stdout).strip().splitlines() or ["docker info failed"])[-1]
    raise ContainerError(f"docker is not installed or its daemon is not running: {problem}; "
                         "use runtime: native or start Docker")


def docker(*args: str, log: Path | None = None, env: dict | None = None) -> str:
    """Run a docker command; its output, or an error quoting it."""
    check_docker()
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as handle:
            result = subprocess.run(["docker", *args], stdout=handle, stderr=subprocess.STDOUT,
                                    env={**os.environ, **(env or {})})
        output = log.read_text(errors="replace")
    else:
        result = subprocess.run(["docker", *args], capture_output=True, text=True)
        output = result.stdout + result.stderr
    if result.returncode != 0:
        tail = "\n".join(output.splitlines()[-25:])
        raise ContainerError(f"docker {args[0]} failed ({result.returncode})"
                             + (f"; full log {rel(log)}" if log else "") + f":\n{tail}")
    return result.stdout.strip() if not log else ""


def image_exists(tag: str) -> bool:
    check_docker()
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def image_id(tag: str) -> str:
    if not image_exists(tag):
        raise ContainerError(f"image {tag} is not built; run `make images`")
    return docker("image", "inspect", "--format", "{{.Id}}", tag)


def load(tag: str, image: Config, new_layers: dict[str, Path]) -> None:
    """`docker load` the image; its ID must be the hash of the config written, or something changed it."""
    check_docker()
    loading = subprocess.Popen(["docker", "load", "--quiet"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    try:
        write_archive(loading.stdin, image, tag, new_layers)
    finally:
        loading.stdin.close()
    output = loading.stdout.read().decode(errors="replace")
    if loading.wait() != 0:
        raise ContainerError(f"docker load of {tag} failed:\n{output.strip()[-3000:]}")
    if image_id(tag) != image.image_id:
        raise ContainerError(f"docker load gave {tag} the id {image_id(tag)}, not the hash of its config "
                             f"{image.image_id}: does this engine rewrite configs on load?")

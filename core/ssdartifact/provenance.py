"""Provenance sidecars: every result file X gets X.json saying which code, config,
inputs, tools and host produced it, so a figure can be chained back by sha256
through its CSVs to the raw output of a run."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from . import REPO_ROOT
from .files import atomic_write_text, sha256_file


def _git(*args: str) -> str | None:
    try:
        result = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return result.stdout.strip()


# Set inside a workflow step's container to "<image tag>@<image id>" (steps.runtime).
RUNTIME_ENV = "SSD_ARTIFACT_IMAGE"
# Set inside a step's container to the name of the machine that runs it: in a container the host
# name is the container's (its random short ID), not the machine's.
HOST_ENV = "SSD_ARTIFACT_HOST"


def runtime_facts() -> dict[str, Any]:
    """Where this process runs: natively, or in which image (tag and id) and container for the docker runtime."""
    identity = os.environ.get(RUNTIME_ENV)
    if not identity:
        return {"kind": "native"}
    tag, _, image_id = identity.partition("@")
    return {"kind": "docker", "image": tag, "image_id": image_id, "container_id": container_id()}


def container_id(mountinfo: str | None = None) -> str | None:
    """The ID of the Docker container this process runs in: Docker mounts the container's own
    /etc/hostname from /var/lib/docker/containers/<ID>/ (the host name is only its first 12
    characters, or whatever --hostname said); None outside a container."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8")
        except OSError:
            return None
    found = re.search(r"/containers/([0-9a-f]{64})/hostname ", mountinfo)
    return found[1] if found else None


def git_state() -> dict[str, Any]:
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": _git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def host_facts() -> dict[str, Any]:
    """The machine's name, kernel and size. In a step's container the kernel, processor count and
    memory are the machine's; its name is passed in (HOST_ENV)."""
    memory = None
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        pass
    return {
        "hostname": os.environ.get(HOST_ENV) or socket.gethostname(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memory_bytes": memory,
    }


def tool_versions(extra: dict[str, str] | None = None) -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for package in ("snakemake", "pandas", "jsonschema", "pyyaml"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    versions.update(extra or {})
    return versions


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def shown(path: str | Path) -> str:
    path = Path(path).resolve()
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def write_sidecar(
    output: str | Path,
    *,
    produced_by: str,
    inputs: Iterable[str | Path] = (),
    configs: dict[str, str] | None = None,
    device: dict | None = None,
    started: str,
    columns: dict[str, str] | None = None,
    tools: dict[str, str] | None = None,
    runtime: dict[str, Any] | None = None,
) -> Path:
    """Write <output>.json next to an output that is already complete."""
    output = Path(output)
    record = {
        "output": shown(output),
        "sha256": sha256_file(output),
        "produced_by": produced_by,
        "git": git_state(),
        "configs": configs or {},
        "device": device,
        "runtime": runtime or runtime_facts(),
        "tools": tool_versions(tools),
        "host": host_facts(),
        "started": started,
        "finished": now(),
        "inputs": {shown(path): sha256_file(path) for path in inputs},
        "columns": columns or {},
    }
    sidecar = output.with_name(output.name + ".json")
    atomic_write_text(sidecar, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return sidecar


RUNS = REPO_ROOT / "results" / "runs"  # one record per profile: the last workflow run that ran jobs


def record_run(profile: str, *, finished: bool) -> Path:
    """results/runs/<profile>.json: when the last `make reproduce` of `profile` that had jobs to run
    started and, once it succeeded, finished, and its minutes (the guide's times come from it:
    ssdartifact.guide). Snakemake calls it from onstart and onsuccess, which run only when there is
    work, so a run with nothing to do keeps the record of the run that did it."""
    path = RUNS / f"{profile}.json"
    record = {"profile": profile, "started": now(), "git": git_state(), "host": host_facts()}
    if finished:
        try:
            started = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # its start was not recorded: no minutes, rather than wrong ones
            started = {**record, "started": None}
        record = {**started, "finished": now()}
        if record["started"]:
            took = dt.datetime.fromisoformat(record["finished"]) - dt.datetime.fromisoformat(record["started"])
            record["minutes"] = round(took.total_seconds() / 60, 1)
    atomic_write_text(path, json.dumps(record, indent=2) + "\n")
    return path

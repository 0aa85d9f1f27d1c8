"""Where and how a step runs.

A rule states where its steps run: its input `image` (workflow/rules/common.smk, image()) names its
system's image, and its run block calls its step through `in_its_image` (common.smk), which hands
it the job (`running`): the image, the rule's declared outputs and logs, its threads and memory.
Snakemake has no Docker runtime of its own and hands a run: block's job to no function it calls.
With `runtime: docker` a step (`@in_image`) is called again inside the job's image
(`python -m steps run NAME`, its arguments as JSON on standard input), hardened (ssdartifact.containers.hardened,
docker_run_command): the repository read-only but for the job's declared outputs and logs and the
step's own scratch (`writes`), the job's threads and memory as its limits.

Commands run through `run_logged`, the one place that decides how a tool is started: with the
environment that makes generated PDFs reproducible, from the repository root, its output in the
rule's log, and on failure an error that quotes the end of that log.

Devices are opened through `open_device`, which hands the core an emussd emulator for an
emulated device; `device_facts` gives a device's alpha and k (measured or declared).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import socket
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from emussd.device import EMULATED_ROOT  # where an emulated SSD is mounted, and its calibration cached
from ssdartifact import REPO_ROOT, config, devices, provenance

# Generated PDFs (R figures, LaTeX) carry this fixed date, so their bytes depend only on their inputs.
REPRODUCIBLE_ENV = {"SOURCE_DATE_EPOCH": "1735689600", "FORCE_SOURCE_DATE": "1"}


class StepFailed(RuntimeError):
    """A tool exited non-zero, or a step's inputs do not allow it to run; the message says why."""


# How this run executes its steps; set once by the workflow (configure) from the profile.
RUNTIME = {"kind": "native"}
IN_CONTAINER = provenance.RUNTIME_ENV  # set inside a step's container: its image tag and id
STEPS = {}  # every step that may run in an image, by name (`python -m steps run NAME ...`)


def configure(runtime: str) -> None:
    RUNTIME["kind"] = runtime


@dataclass(frozen=True)
class Job:
    """What a step in a container may use: its rule's image, declared outputs and logs, threads and memory."""
    image: str
    outputs: tuple[str, ...]
    threads: int
    mem_mb: int | None


_JOB = threading.local()  # the job whose run: block this thread runs (Snakemake runs jobs in threads)


@contextlib.contextmanager
def running(job: Job):
    """The steps called inside run for `job` (a rule's run block: common.smk, in_its_image)."""
    _JOB.current = job
    try:
        yield job
    finally:
        _JOB.current = None


def current_job() -> Job:
    job = getattr(_JOB, "current", None)
    if job is None:
        raise StepFailed("a step in docker mode runs for a workflow job (its declared outputs are all it may write): "
                         "run it through the workflow (make reproduce RUNTIME=docker), not by itself")
    return job


# What a step that opens a device writes besides the device: emussd's mounts and calibration, and
# the locks that keep one experiment per device at a time.
DEVICE_SCRATCH = (EMULATED_ROOT, devices.DEVICE_LOCKS)


def in_image(devices: tuple[str, ...] = (), capabilities: tuple[str, ...] = (),
             block_devices: bool = False, writes: tuple[str | Path, ...] = (), kept: tuple[str, ...] = ()):
    """Run the step in its job's image (the rule's, `running`) when the runtime is docker, with the
    devices and capabilities it needs (e.g. FUSE).

    `writes`: what the step writes besides its job's declared outputs and logs (its scratch and
    build caches, paths in the repository); a step with `devices` opens a declared device, and
    also writes the declared file devices and DEVICE_SCRATCH. `kept`: the keyword arguments that
    name folders the step writes and keeps across runs (a resumable campaign's raw results, which
    cannot be outputs: Snakemake deletes those before a job). Everything else of the repository is
    read-only in its container.
    With block_devices, the declared raw block devices are passed in too, after their safety
    checks ran here on the host: inside the container the host's mounts are not visible.
    A step is called with keyword arguments only (the rule's named inputs, outputs and params)."""
    def wrap(function):
        if function.__name__ in STEPS:
            raise RuntimeError(f"two steps are named {function.__name__}")
        STEPS[function.__name__] = function

        @functools.wraps(function)
        def step(**kwargs):
            if RUNTIME["kind"] == "native" or os.environ.get(IN_CONTAINER):
                return function(**kwargs)
            passed = (*devices, *(d["path"] for d in declared_block_devices())) if block_devices else devices
            scratch = [REPO_ROOT / path for path in (*writes, *(kwargs[name] for name in kept))]
            scratch += [*DEVICE_SCRATCH, *devices_bind_paths()] if devices else []
            return _run_in_container(function.__name__, kwargs, passed, capabilities, scratch)
        return step
    return wrap


def declared_block_devices() -> list[dict]:
    # in_image's parameter `devices` hides the module of that name inside its closure
    return devices.declared_block_devices()


def _run_in_container(name: str, kwargs: dict, devices, capabilities, scratch: list[Path]) -> None:
    from ssdartifact.containers import build, engine, hardened  # noqa: PLC0415 (only the docker runtime needs it)

    job = current_job()
    tag = build.ensure_image(job.image)
    identity = f"{tag}@{engine.image_id(tag)}"
    # on standard input, not the command line: one argument may hold at most 128 KiB (Linux's
    # MAX_ARG_STRLEN), and the claims or the inventory a step gets are half that already
    call = json.dumps({k: _plain(v) for k, v in kwargs.items()})
    # An output's folder, not the file: outputs are written beside themselves and renamed into place.
    writable = sorted({(REPO_ROOT / path).parent for path in job.outputs} | set(scratch))
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)  # as the host user: `docker run -v` would make it as root
    command = hardened.docker_run_command(
        tag, ["python", "-m", "steps", "run", name], repo_root=REPO_ROOT, stdin=True, writable=writable,
        devices=devices, cap_add=capabilities, cpus=job.threads, memory_mb=job.mem_mb or DEFAULT_MEMORY_MB,
        env={IN_CONTAINER: identity, provenance.HOST_ENV: socket.gethostname()},
        labels={"ssd-artifact.step": name, "ssd-artifact.repository": str(REPO_ROOT)})
    try:
        result = subprocess.run(command, input=call, capture_output=True, text=True)
    finally:
        hardened.give_back(writable)
    if result.returncode != 0:
        raise StepFailed(f"step {name} in image {tag} exited with {result.returncode}:\n"
                         f"{(result.stdout + result.stderr)[-3000:]}")


# A step's memory limit in docker mode when its rule declares none (resources: mem_mb): the largest of
# Snakemake's own defaults (its guess from the inputs' size is at least 1000 MB, too little for a
# PostgreSQL build or a JVM, and would cap a measurement's own memory budgets). On a cluster a rule
# run here before declares what it used (memory_as_measured).
DEFAULT_MEMORY_MB = 8000


def run_registered(name: str, call: str) -> None:
    """Inside a step's container: the step `name` with the keyword arguments of `call` (JSON)."""
    if name not in STEPS:
        raise StepFailed(f"no step named {name!r}; steps: {', '.join(sorted(STEPS))}")
    STEPS[name](**json.loads(call))


def _plain(value):
    """Snakemake's file lists are list subclasses with extra state: pass plain lists and strings
    (a list of records, such as ACE's run points, stays a list of records)."""
    return [v if isinstance(v, dict) else str(v) for v in value] if isinstance(value, list) else value


def devices_bind_paths() -> list[Path]:
    """The declared file devices' directories, which a step that opens a device writes (inside the
    repository or not), each checked here, on the host (devices.file_directory). One that is not
    there is not passed in: `docker run -v` would make it, and the step that opens its device
    refuses it by name (check-config refused it already if the profile uses it)."""
    paths = []
    for device in config.load("devices.yaml")["devices"]:
        if device["kind"] == "file":
            try:
                paths.append(devices.file_directory(device))
            except devices.DeviceError:
                continue
    return paths


def run_logged(command: list[str], log: str) -> None:
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as handle:
        result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                                env={**os.environ, **REPRODUCIBLE_ENV})
    if result.returncode != 0:
        tail = "\n".join(Path(log).read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise StepFailed(f"{' '.join(command)} exited with {result.returncode}; end of {log}:\n{tail}")


def open_device(name: str, needed_bytes: int, *, emussd_binary: str | Path | None = None,
                stats_out: str | Path | None = None, saturating: bool = False):
    """The declared device `name` opened for an experiment (ssdartifact.devices.opened); an
    emulated one is mounted with `emussd_binary` (see emussd.device.emulation for `saturating`)."""
    emulator = None
    if emussd_binary:
        from emussd.device import Emulator  # noqa: PLC0415 (only emulated devices need it)

        emulator = Emulator(Path(emussd_binary), Path(stats_out) if stats_out else None, saturating)
    return devices.opened(name, needed_bytes, emulator=emulator)


def device_facts(name: str, alpha_k: list[str], block_size: int) -> dict:
    """A device's alpha, k_r and k_w at one block size: measured when this profile characterizes
    the device (alpha_k: its alpha_k.csv), else declared (an emulated device)."""
    from pio.characterize import measured_device  # noqa: PLC0415

    device = devices.declaration(name)
    facts = {"device_kind": device["kind"], "device_preset": device.get("preset")}
    if alpha_k:
        measured = measured_device(alpha_k[0], name, block_size=block_size)
        return {**facts, **{k: measured[k] for k in ("alpha", "k_r", "k_w")}, "source": "measured"}
    if device["kind"] != "emulated":
        raise StepFailed(f"device {name!r}: its alpha and k are measured by the characterization, which this "
                         "profile does not run on it; add the device to the profile's characterize.devices")
    return {**facts, **{k: device[k] for k in ("alpha", "k_r", "k_w")}, "source": "declared"}


def config_hashes(*names: str) -> dict[str, str]:
    """The sidecar's `configs`: each named file of configs/ with its hash."""
    return {f"configs/{name}": config.config_hash(name) for name in names}

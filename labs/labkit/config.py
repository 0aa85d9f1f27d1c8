"""A lab's settings: its lab.yaml (hidden ranges, points, tolerances, limits), with an instructor's
overrides, and what every grader shares (the sandbox's limits per kind of call, the error for a
grading the machine cannot do)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import sandbox
from .sandbox import Limits


class GradingError(RuntimeError):
    """The grader cannot grade (its setup, not the submission): exit 2 with this message."""


def load(lab_dir: Path, override: Path | None = None) -> dict:
    """lab.yaml, with the top-level keys of `override` (a YAML file) replacing its own."""
    import yaml  # noqa: PLC0415

    config = yaml.safe_load((Path(lab_dir) / "lab.yaml").read_text(encoding="utf-8"))
    if override is not None:
        extra = yaml.safe_load(Path(override).read_text(encoding="utf-8"))
        if not isinstance(extra, dict):
            raise ValueError(f"{override}: the overrides must be a YAML mapping of lab.yaml's keys")
        config = {**config, **extra}
    return config


def limits(config: dict) -> dict[str, Limits]:
    """lab.yaml's `limits`: per kind of call, wall-clock and CPU seconds and megabytes of memory
    (address space; `rss_mb`, when given, resident memory watched while the call runs)."""
    return {name: Limits(spec["wall_s"], spec["cpu_s"], spec["memory_mb"] << 20, rss_bytes=spec.get("rss_mb", 0) << 20)
            for name, spec in config["limits"].items()}


@contextmanager
def workspace(work_root: Path, lab: int) -> Iterator[tuple[Path, Path]]:
    """A private folder for one grading (removed after, whatever the submission left in it; named
    by the grader's process, so that a class's grading removes what a killed one left): yields
    (root, root/work), `work` being the folder the submission runs in. While it lasts, what the
    grader writes is private (umask 077): the calls' own user (labkit.sandbox) may pass through
    `root` and read only what sandbox.share() opens to it."""
    Path(work_root).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"lab{lab}-{os.getpid()}-", dir=work_root))
    mask = os.umask(0o077)
    try:
        os.chmod(root, 0o711 if sandbox.own_user() else 0o700)  # the calls' user passes through, lists nothing
        sandbox.prepare_folder(root / "work")
        yield root, root / "work"
    finally:
        os.umask(mask)
        sandbox.remove_tree(root)


SUBMISSION_BYTES = 16 << 20  # a submission's files in all
SUBMISSION_FILES = 1000


def copy_submission(submission: Path, root: Path) -> Path:
    """The submission's regular files copied into the workspace (root/submission), where the calls
    may read them whatever the original folder's permissions, and cannot change the original.
    Never through a link (a link to the key would otherwise be read by the grader); links, devices
    and FIFOs are left out, and so is anything past SUBMISSION_FILES files or SUBMISSION_BYTES."""
    target = root / "submission"
    target.mkdir()
    copied, size = 0, 0
    stack = [(Path(submission), target)]
    while stack:
        source, into = stack.pop()
        with os.scandir(source) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    (into / entry.name).mkdir()
                    stack.append((Path(entry.path), into / entry.name))
                elif stat.S_ISREG(info.st_mode) and copied < SUBMISSION_FILES \
                        and size + info.st_size <= SUBMISSION_BYTES:
                    fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                    with os.fdopen(fd, "rb") as handle:
                        data = handle.read(SUBMISSION_BYTES - size)
                    (into / entry.name).write_bytes(data)
                    copied, size = copied + 1, size + len(data)
    sandbox.share(target, root)
    return target

"""A lab's settings: its lab.yaml (hidden ranges, points, tolerances, limits), with an instructor's
overrides, and what every grader shares (the sandbox's limits per kind of call, the error for a
grading the machine cannot do)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    """lab.yaml's `limits`: per kind of call, wall-clock and CPU seconds and megabytes of memory."""
    return {name: Limits(spec["wall_s"], spec["cpu_s"], spec["memory_mb"] << 20)
            for name, spec in config["limits"].items()}


@contextmanager
def workspace(work_root: Path, lab: int) -> Iterator[tuple[Path, Path]]:
    """A private folder for one grading (removed after): yields (root, root/work), `work` being the
    folder the submission runs in; only the grader's user may enter `root`."""
    Path(work_root).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"lab{lab}-", dir=work_root) as tmp:
        root = Path(tmp)
        os.chmod(root, 0o700)
        (root / "work").mkdir()
        yield root, root / "work"

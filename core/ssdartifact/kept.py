"""A campaign's finished runs, each kept as JSON as soon as it is measured, so that an interrupted
campaign resumes where it stopped. A kept run is named by the run's key and a digest of the
context it was measured under (the code, the settings, the device): a change of context measures
every run again instead of mixing runs measured two ways."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .files import atomic_write_text


class KeptRuns:
    def __init__(self, folder: str | Path, context: object):
        """`context`: anything JSON can encode that a kept run is valid only under."""
        self.folder = Path(folder)
        self.context = hashlib.sha256(json.dumps(context, sort_keys=True, default=str).encode()).hexdigest()[:10]

    def path(self, key: str) -> Path:
        return self.folder / f"{self.context}-{key}.json"

    def get(self, key: str) -> dict | None:
        """The kept run, or None when it was not measured under this context (or its file is
        damaged: a run is kept atomically, so only a hand-edited or truncated copy is, and it is
        measured again rather than trusted)."""
        try:
            return json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def keep(self, key: str, record: dict) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path(key), json.dumps(record, indent=1) + "\n")
        return self.path(key)


def key_of(value: object) -> str:
    """A short key for a run described by `value` (anything JSON can encode)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]

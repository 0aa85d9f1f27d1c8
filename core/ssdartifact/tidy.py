"""Tidy CSV writing: one row per measurement, documented columns, deterministic bytes."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Iterable, Mapping

from .files import atomic_write_text


def format_value(value: object) -> str:
    """Shortest round-tripping text for floats, so equal numbers give equal bytes everywhere."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NA"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if value is None:
        return "NA"
    return str(value)


def write_csv(path: str | Path, columns: Mapping[str, str], rows: Iterable[Mapping[str, object]]) -> None:
    """Write rows (dicts keyed by column) atomically; `columns` maps each column to its description."""
    names = list(columns)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        unknown = set(row) - set(names)
        if unknown:
            raise ValueError(f"{path}: row has undocumented column(s) {sorted(unknown)}")
        writer.writerow([format_value(row.get(name)) for name in names])
    atomic_write_text(path, buffer.getvalue())

"""sha256 manifests of the deterministic outputs: `make checksums` writes one,
`make verify` compares the current outputs against it, names every file that differs, and says
which runtime made the files it checked (their provenance sidecars)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from . import REPO_ROOT
from .files import atomic_write_text, sha256_file


def write_manifest(manifest: Path, paths: list[str]) -> None:
    lines = [f"{sha256_file(REPO_ROOT / p)}  {p}" for p in sorted(set(paths))]
    atomic_write_text(manifest, "\n".join(lines) + "\n")


def add_to_manifest(manifest: Path, paths: list[str]) -> None:
    """Record (or update) the sha256 of `paths` and keep every other entry: new outputs join a
    manifest without rebuilding the whole profile that `write_manifest` needs."""
    entries = read_manifest(manifest) if manifest.exists() else {}
    entries.update({p: sha256_file(REPO_ROOT / p) for p in paths})
    atomic_write_text(manifest, "".join(f"{digest}  {p}\n" for p, digest in sorted(entries.items())))


def read_manifest(manifest: Path) -> dict[str, str]:
    entries = {}
    for number, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{manifest}:{number}: not a '<sha256>  <path>' line: {line!r}")
        entries[path] = digest
    return entries


def differences(manifest: Path, expected_files: list[str]) -> list[str]:
    """One line per file that is missing, differs from the manifest, or is not in it."""
    entries = read_manifest(manifest)
    problems = [f"not in the manifest: {path} (run `make checksums` and commit it)"
                for path in sorted(set(expected_files) - set(entries))]
    problems += [f"in the manifest but no longer produced: {path} (run `make checksums`)"
                 for path in sorted(set(entries) - set(expected_files))]
    for path, expected in entries.items():
        target = REPO_ROOT / path
        if not target.exists():
            problems.append(f"missing: {path}")
        elif (actual := sha256_file(target)) != expected:
            problems.append(f"changed: {path} (expected {expected[:12]}, found {actual[:12]})")
    return problems


def made_by(paths: list[str]) -> Counter:
    """How many of `paths` each runtime made, as their sidecars (<path>.json) record it: "native",
    "docker <image tag>", or "no sidecar" (an output that records no provenance of its own)."""
    made = Counter()
    for path in paths:
        try:
            runtime = json.loads((REPO_ROOT / f"{path}.json").read_text(encoding="utf-8"))["runtime"]
        except (OSError, ValueError, KeyError):
            made["no sidecar"] += 1
            continue
        made[" ".join(filter(None, (runtime.get("kind"), runtime.get("image"))))] += 1
    return made

"""sha256 manifests of the deterministic outputs: `make checksums` writes one,
`make verify` compares the current outputs against it, names every file that differs, and says
which runtime made the files it checked (their provenance sidecars). Before it builds anything,
verify also finds every output changed since the run that made it (`changed_since_made`), so that
no changed file is used to build another."""

from __future__ import annotations

import functools
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


# Where the workflow writes its outputs, each with its sidecar (<output>.json).
OUTPUT_FOLDERS = ("results", "figures/generated", "paper/generated")
RAW = "results/raw/"  # raw tool output: never edited, and without sidecars of its own


def sidecars() -> dict[str, dict]:
    """Every output made in this tree that has a sidecar: its path -> the sidecar's record. A copy
    of another tree's results (results/e2e/) records another path, and is left out."""
    found = {}
    for folder in OUTPUT_FOLDERS:
        for sidecar in sorted((REPO_ROOT / folder).rglob("*.json")):
            output = sidecar.with_suffix("")
            if not output.is_file():
                continue
            try:
                record = json.loads(sidecar.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            path = output.relative_to(REPO_ROOT).as_posix()
            if isinstance(record, dict) and record.get("output") == path and "sha256" in record:
                found[path] = record
    return found


def changed_since_made(manifest: Path) -> list[str]:
    """Before anything is built: one line per output that is not what the run that made it wrote.
    A deterministic output that exists is compared with the manifest; every output with a sidecar
    with the sha256 its sidecar recorded; the raw files a result was made from with the sha256 its
    sidecar recorded for each (the chain figure -> CSV -> raw). An output made again since a later
    one was made from it is not a change: Snakemake remakes the later one."""
    digest = functools.cache(lambda path: sha256_file(REPO_ROOT / path))
    made = sidecars()
    after_the_run = "so it was changed after the run that made it"
    problems = {}
    for path, expected in (read_manifest(manifest) if manifest.exists() else {}).items():
        if not (REPO_ROOT / path).is_file() or (found := digest(path)) == expected:
            continue
        why = after_the_run
        if made.get(path, {}).get("sha256") == found:
            why = ("but is what its step wrote: it was made by other code or from other inputs than the "
                   "manifest's (if that is meant, `make checksums` records it)")
        problems[path] = (f"changed: {path} differs from {manifest} (expected {expected[:12]}, "
                          f"found {found[:12]}), {why}")
    for path, record in made.items():
        if path not in problems and (found := digest(path)) != (recorded := record["sha256"]):
            problems[path] = (f"changed: {path} is not what its step wrote (its sidecar records {recorded[:12]}, "
                              f"found {found[:12]}), {after_the_run}")
        for source, recorded in record.get("inputs", {}).items():
            if source.startswith(RAW) and source not in problems and (REPO_ROOT / source).is_file() \
                    and (found := digest(source)) != recorded:
                problems[source] = (f"changed: {source} differs from the sha256 recorded when {path} was made from "
                                    f"it ({recorded[:12]}, found {found[:12]}): a raw output is never edited")
    return [problems[path] for path in sorted(problems)]

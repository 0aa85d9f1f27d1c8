"""The guide's generated numbers (docs/ and the README): as showyourwork does with its variables, every number a
page gives about a run is written by the artifact, not typed, so no page can disagree with the run
it comes from.

In a page a generated number is a marker, invisible when Markdown is rendered:

    the quick profile took <!--n:quick.reproduce_min-->31<!--/n--> minutes

`docs/numbers.json` records every number: its value as the pages show it, the result files it was
computed from (with one sha256 of them) and how. `update` recomputes the numbers
from a results tree and rewrites every marker; `problems` says where a page is out of date: a
marker whose value is not the recorded one, a marker no number defines, or a recorded number
whose result files, present in the results tree, are no longer those it was computed from.
The numbers themselves are defined by the layer that knows the results (steps.guide).
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import REPO_ROOT, files

DOCS = REPO_ROOT / "docs"
NUMBERS = DOCS / "numbers.json"
MARKER = re.compile(r"<!--n:(?P<name>[A-Za-z0-9_.:-]+)-->(?P<value>.*?)<!--/n-->", re.S)


class GuideError(Exception):
    """A number cannot be computed, or a page names a number nobody defines."""


@dataclass(frozen=True)
class Number:
    """How one number is computed: `sources`, glob patterns relative to a results tree's root (the
    repository's, or a copy's) of the files it is computed from, and `compute(root) -> str`, the
    value as the pages show it."""
    sources: tuple[str, ...]
    how: str
    compute: Callable[[Path], str]

    def files(self, root: Path) -> list[Path]:
        return sorted({path for pattern in self.sources for path in root.glob(pattern) if path.is_file()})

    def digest(self, root: Path) -> str:
        """One sha256 of the source files (their paths under root and their contents)."""
        lines = [f"{path.relative_to(root)} {files.sha256_file(path)}" for path in self.files(root)]
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def markers(text: str) -> list[tuple[str, str]]:
    """Every (name, value) marker of a page, in order."""
    return [(match["name"], match["value"]) for match in MARKER.finditer(text)]


def pages(docs: Path = DOCS) -> list[Path]:
    """The guide's pages, and the README beside their folder (its times are generated too)."""
    readme = docs.parent / "README.md"
    return sorted(docs.rglob("*.md")) + ([readme] if readme.exists() else [])


def load(path: Path = NUMBERS) -> dict:
    if not path.exists():
        return {"numbers": {}}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise GuideError(f"{path} is not valid JSON ({error}): regenerate it with `make guide`") from error


def compute(definitions: dict[str, Number], root: Path, recorded: dict) -> dict:
    """The numbers of `definitions` computed from the results tree `root`; a number whose result
    files are not there keeps its recorded entry (a profile or a test run that was not rerun)."""
    numbers = {}
    for name, number in sorted(definitions.items()):
        if number.files(root):
            try:
                value = number.compute(root)
            except (KeyError, ValueError, IndexError, OSError, ElementTree.ParseError) as error:
                raise GuideError(f"number {name}: cannot compute it from {', '.join(number.sources)} "
                                 f"({error!r})") from error
            numbers[name] = {"value": value, "sources": list(number.sources), "how": number.how,
                             "sha256": number.digest(root)}
        elif name in recorded.get("numbers", {}):
            numbers[name] = recorded["numbers"][name]
    return {"numbers": numbers}


def rewrite(text: str, numbers: dict) -> str:
    """The page with every marker's value set to its recorded number (a number not computed yet
    keeps the value it shows: `problems` reports it)."""
    def value(match: re.Match) -> str:
        entry = numbers["numbers"].get(match["name"])
        return match[0] if entry is None else f"<!--n:{match['name']}-->{entry['value']}<!--/n-->"
    return MARKER.sub(value, text)


def update(definitions: dict[str, Number], root: Path, docs: Path = DOCS,
           stale: Callable[[str], bool] = lambda name: False) -> list[Path]:
    """Recompute the numbers of `definitions` from `root` (the others stay as recorded, but for those
    `stale` drops) and rewrite the pages; the pages changed."""
    recorded = load(docs / NUMBERS.name)
    numbers = compute(definitions, root, recorded)
    kept = {name: entry for name, entry in recorded["numbers"].items() if not stale(name)}
    numbers["numbers"] = {**kept, **numbers["numbers"]}
    changed = []
    rewritten = {page: rewrite(page.read_text(encoding="utf-8"), numbers) for page in pages(docs)}
    files.atomic_write_text(docs / NUMBERS.name, json.dumps(numbers, indent=1, sort_keys=True) + "\n")
    for page, text in rewritten.items():
        if text != page.read_text(encoding="utf-8"):
            files.atomic_write_text(page, text)
            changed.append(page)
    return changed


def problems(definitions: dict[str, Number], docs: Path = DOCS, root: Path | None = None,
             only: Callable[[str], bool] = lambda name: True,
             unpaged: Callable[[str], bool] = lambda name: False) -> list[str]:
    """Where the guide is out of date: with its recorded numbers (always), and with the results
    tree `root` (when given): a recorded number whose result files there differ from those it
    was computed from. `only`: the numbers to look at (all by default); `unpaged`: the numbers
    recorded whether or not a page shows them (each claim's)."""
    recorded = load(docs / NUMBERS.name)["numbers"]
    found = []
    used = set()
    for page in pages(docs):
        for name, value in markers(page.read_text(encoding="utf-8")):
            used.add(name)
            if not only(name):
                continue
            where = page.relative_to(docs.parent) if docs.parent in page.parents else page
            if name not in definitions:
                found.append(f"{where}: the marker {name!r} names no number (define it in steps.guide.NUMBERS)")
            elif name not in recorded:
                found.append(f"{where}: the number {name!r} was never computed: run `make guide` after a run "
                             f"that writes {', '.join(definitions[name].sources)}")
            elif value != recorded[name]["value"]:
                found.append(f"{where}: {name} shows {value!r} where docs/numbers.json has "
                             f"{recorded[name]['value']!r}: run `make guide` (pages are not edited by hand)")
    for name in sorted(name for name in set(recorded) - used if only(name) and not unpaged(name)):
        found.append(f"docs/numbers.json: {name} is used by no page")
    if root is not None:
        for name, entry in sorted(recorded.items()):
            number = definitions.get(name)
            changed = number is not None and number.files(root) and number.digest(root) != entry.get("sha256")
            if (name in used or unpaged(name)) and only(name) and changed:
                found.append(f"docs: {name} ({entry['value']}) comes from other {', '.join(entry['sources'])} than "
                             f"those in {root}: run `make guide` to take this run's numbers")
    return found

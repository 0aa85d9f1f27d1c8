"""Chapter 5's graphs: the real datasets of configs/datasets.yaml's `downloads`, fetched and
checked against their pinned sha256, and Table 5.1's description of every graph a profile uses
(the generated ones, deterministic since they come from seeds, and the real ones fetched)."""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

from ssdartifact import REPO_ROOT, config, files

from . import experiment, plan

GRAPHS = REPO_ROOT / "scratch" / "cave" / "graphs"  # generated graphs, converted once per spec
DOWNLOADS = REPO_ROOT / "scratch" / "cave" / "downloads"  # the real datasets' edge lists
TABLE_5_1_COLUMNS = ["dataset", "graph_size", "stands_for", "source", "vertices", "edges", "stored_edges",
                     "estimated_diameter", "file_bytes", "size_mib"]


class DatasetError(RuntimeError):
    """A downloaded dataset does not match its pinned sha256."""


def fetch(name: str) -> dict:
    """One real dataset, fetched into DOWNLOADS unless it is there, and a record of it. An
    unreachable source is not an error: the record says so (status "unreachable" and a message),
    and Table 5.1 leaves the dataset out. A pinned sha256 that does not match is."""
    entry = config.load("datasets.yaml")["downloads"][name]
    target = DOWNLOADS / Path(entry["url"]).name
    target.parent.mkdir(parents=True, exist_ok=True)
    result = {"name": name, "url": entry["url"], "format": entry["format"], "path": os.path.relpath(target, REPO_ROOT)}
    try:
        if not target.exists():
            partial = target.with_suffix(".part")
            with urllib.request.urlopen(entry["url"], timeout=60) as response, open(partial, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
            partial.replace(target)
    except (urllib.error.URLError, OSError) as error:
        message = (f"dataset {name}: {entry['url']} is not reachable ({error}); Table 5.1 leaves it out. "
                   f"Download it by hand to {result['path']} and rerun to include it.")
        print(message, file=sys.stderr)
        return {**result, "status": "unreachable", "message": message}
    digest = files.sha256_file(target)
    if entry["sha256"] and digest != entry["sha256"]:
        raise DatasetError(f"dataset {name}: {target} has sha256 {digest}, but configs/datasets.yaml pins "
                           f"{entry['sha256']}: refusing to use it (delete the file to download it again)")
    return {**result, "status": "fetched", "sha256": digest, "pinned": bool(entry["sha256"]),
            "message": "" if entry["sha256"] else f"dataset {name}: sha256 {digest}, not pinned in "
                                                  "configs/datasets.yaml yet: pin it there"}


def table_5_1(binary: Path, graphs: list[str], size: str, fetched: list[dict]) -> tuple[list[dict], list[str]]:
    """Table 5.1's rows: the generated `graphs` at `size` (vertices, edges, a double-sweep lower
    bound of the diameter, the block file's size) and the real datasets of `fetched` (records of
    `fetch`); and the messages of those that were not fetched."""
    datasets = config.load("datasets.yaml")
    specs = [plan.graph_spec(datasets, name, size) for name in graphs]
    rows = experiment.dataset_table({"datasets": specs, "graph_dir": GRAPHS}, binary)
    for row, name in zip(rows, graphs):
        row.update(graph_size=size, stands_for=" ".join(datasets["generated"][name]["stands_for"]),
                   source=f"generated: {datasets['generated'][name]['generator']}, seed "
                          f"{datasets['generated'][name]['seed']}", dataset=name)
    messages = []
    for record in fetched:
        if record["status"] != "fetched":
            messages.append(record["message"])
            continue
        edges = _gunzipped(REPO_ROOT / record["path"])
        spec = {"name": record["name"], "edge_list": str(edges), "format": record["format"]}
        row = experiment.dataset_table({"datasets": [spec], "graph_dir": GRAPHS}, binary)[0]
        rows.append({**row, "graph_size": "real", "stands_for": record["name"], "source": record["url"]})
    for row in rows:
        del row["convert_s"]  # a time: the table is deterministic without it
    return rows, messages


def _gunzipped(path: Path) -> Path:
    """The edge list beside its .gz, decompressed once."""
    text = path.with_suffix("")
    if not text.exists():
        partial = text.with_suffix(".part")
        with gzip.open(path, "rb") as source, open(partial, "wb") as out:
            shutil.copyfileobj(source, out, 1 << 20)
        partial.replace(text)
    return text

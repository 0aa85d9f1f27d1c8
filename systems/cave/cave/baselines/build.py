"""Building the out-of-core graph systems the thesis compares CAVE with, from pinned sources.

    from cave.baselines import build
    tree = build.build("gridgraph")   # systems/cave/build-baselines/gridgraph-<key>/src, built

Each system's source is the tarball pinned in configs/sources.yaml (ssdartifact.sources: fetched and
sha256-checked), patched with the series in systems/cave/baselines/<system>/ (patch -p1, in the order
of its `series` file) and built with the system's own Makefile (Mosaic's runs CMake); GraphX's (Spark's release for
Python) is used in place, with Java 17 or later. <key> hashes the tarball, the patches, the make
targets and the toolchain (the compiler, or Java); a finished build has a `built.json`, and a build
without one (interrupted) starts over.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ssdartifact import files, native, sources
from ssdartifact.provenance import RUNTIME_ENV

CAVE_DIR = Path(__file__).resolve().parents[2]  # systems/cave
PATCH_ROOT = CAVE_DIR / "baselines"
BUILD_ROOT = CAVE_DIR / "build-baselines"
DOWNLOADS = BUILD_ROOT / "downloads"

# What each system's Makefiles build for the comparisons (each list one `make -j2` in the source tree),
# and where the programs land.
TARGETS = {
    "graphchi": {"make": [["example_apps/bfs", "example_apps/connectedcomponents", "example_apps/pagerank_cave"]],
                 "programs": {"bfs": "bin/example_apps/bfs", "wcc": "bin/example_apps/connectedcomponents",
                              "pagerank": "bin/example_apps/pagerank_cave"}},
    "gridgraph": {"make": [["bin/preprocess", "bin/bfs", "bin/wcc", "bin/pagerank"]],
                  "programs": {"preprocess": "bin/preprocess", "bfs": "bin/bfs", "wcc": "bin/wcc",
                               "pagerank": "bin/pagerank"}},
    # Mosaic's CPU build: its Makefile's CMake step (Release) and CPU map (python3 writes the build
    # machine's, which its threads are pinned by; patch 0002: the allowed CPUs only), then only the
    # three programs the comparisons run: its own `make` also builds its tests and four other tools,
    # half of its build's time
    "mosaic": {"make": [["-C", "src", "BUILD_MODES=Release", "cmake", "cpumaps"],
                        ["-C", "build/Release-x86_64", "grc-in-memory", "post-grc-indexer", "mosaic"]],
               "programs": {"grc": "build/Release-x86_64/tools/grc/grc-in-memory",
                            "indexer": "build/Release-x86_64/tools/post-grc/post-grc-indexer",
                            "mosaic": "build/Release-x86_64/lib/core/mosaic"}},
    "graphx": {"make": [], "programs": {"spark-submit": "deps/bin/spark-submit"}},  # nothing to compile
}
BUILD_TOOLS = {"graphchi": ("make", "g++", "patch"), "gridgraph": ("make", "g++", "patch"),
               "mosaic": ("make", "g++", "patch", "cmake", "python3"), "graphx": ("java",)}
JAVA_AT_LEAST = 17  # Spark 4's minimum


class BaselineBuildError(RuntimeError):
    pass


def patch_series(system: str) -> list[Path]:
    """The system's patches in the order of its `series` file."""
    return native.patch_series(PATCH_ROOT / system, BaselineBuildError)


def build_key(system: str) -> str:
    if system not in TARGETS:
        raise BaselineBuildError(f"no baseline named {system!r}; known: {', '.join(TARGETS)}")
    digest = hashlib.sha256(sources.pin(system).sha256.encode())
    for patch in patch_series(system):
        digest.update(patch.name.encode() + b"\0" + patch.read_bytes())
    runtime = os.environ.get(RUNTIME_ENV, "native").split("@")[0]  # a container image builds its own
    digest.update(json.dumps([TARGETS[system], toolchain(system), runtime]).encode())
    return digest.hexdigest()[:12]


def toolchain(system: str) -> str:
    """What builds or runs the system, as its first line of --version: g++, or Java for GraphX."""
    if "java" not in BUILD_TOOLS[system]:
        return native.compiler_version("g++")
    if shutil.which("java") is None:
        return "no java"
    shown = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (shown.stderr or shown.stdout).splitlines()[0] if (shown.stderr or shown.stdout) else "unknown java"


def _check_java() -> None:
    java = toolchain("graphx")
    found = re.search(r'version "(\d+)', java)
    if not found or int(found.group(1)) < JAVA_AT_LEAST:
        raise BaselineBuildError(f"GraphX (Spark 4) needs Java {JAVA_AT_LEAST} or later; found {java!r}: "
                                 "run `make setup` (Debian's openjdk-17-jre-headless)")


def build_dir(system: str) -> Path:
    return system_root(system) / build_key(system)


def system_root(system: str) -> Path:
    """Every build of `system` (one per key), apart from the other systems': in docker mode the one
    folder its build's container writes (workflow/steps/cave.py, build_cave_baseline)."""
    return BUILD_ROOT / system


def programs(system: str, tree: Path) -> dict[str, Path]:
    return {name: tree / relative for name, relative in TARGETS[system]["programs"].items()}


def build(system: str, progress=None) -> Path:
    """The patched, built source tree of `system` (built now unless a finished build exists)."""
    missing = [tool for tool in BUILD_TOOLS.get(system, ()) if shutil.which(tool) is None]
    if missing:
        raise BaselineBuildError(f"building {system} needs {', '.join(missing)}: run `make setup`")
    if system == "graphx":
        _check_java()
    say = progress or (lambda message: print(f"baselines: {message}", file=sys.stderr, flush=True))
    directory = build_dir(system)
    with native.locked(directory):
        tree = directory / "src"
        if (directory / "built.json").exists():
            return tree
        tarball = sources.fetch(system, DOWNLOADS, say=say)
        shutil.rmtree(tree, ignore_errors=True)
        unpacked = sources.unpack(system, tarball, directory / "unpack")
        os.replace(unpacked, tree)
        shutil.rmtree(directory / "unpack")
        say(f"building {system} with {len(patch_series(system))} patches in {directory.relative_to(CAVE_DIR)}")
        with open(directory / "build.log", "w") as log:
            for patch in patch_series(system):
                _run(["patch", "-p1", "--batch", "--forward", "--quiet", "-i", str(patch)], tree, log)
            for arguments in TARGETS[system]["make"]:
                _run(["make", "-j2", *arguments], tree, log)
        absent = [str(path) for path in programs(system, tree).values() if not path.is_file()]
        if absent:
            raise BaselineBuildError(f"{system}'s make left no {', '.join(absent)}")
        unrunnable = [str(path) for path in programs(system, tree).values() if not path.stat().st_mode & 0o111]
        if unrunnable:
            raise BaselineBuildError(f"{system}'s make left {', '.join(unrunnable)} not executable")
        pin = sources.pin(system)
        record = {"system": system, "key": build_key(system), "source": pin.url, "repository": pin.repository,
                  "commit": pin.commit, "source_sha256": pin.sha256,
                  "patches": {p.name: files.sha256_file(p) for p in patch_series(system)},
                  "targets": TARGETS[system]["make"], "toolchain": toolchain(system)}
        files.atomic_write_text(directory / "built.json", json.dumps(record, indent=2) + "\n")
        return tree


def built_record(system: str) -> dict:
    """built.json of the system's finished build (what a result's provenance names)."""
    return json.loads((build_dir(system) / "built.json").read_text())


def _run(command: list[str], cwd: Path, log) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    # only PATH and the C locale: a user's CXXFLAGS would change the build without changing its key
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
    result = subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=env)
    if result.returncode != 0:
        log.flush()
        tail = "\n".join(Path(log.name).read_text(errors="replace").splitlines()[-30:])
        raise BaselineBuildError(f"{' '.join(command)} failed in {cwd} (exit {result.returncode}):\n{tail}")

"""The patch series one patch at a time (patches/series, patches/README.md): every prefix of it
applies cleanly to the pinned source, builds, and runs. The series has a patch per concern so
that each can be read, reviewed and bisected alone, which only works if each prefix is a
working PostgreSQL.

Two checks: that every prefix applies with no offset or fuzz (about 10 s, unpacking only the
files the series touches), and, on demand (`make test-ace-patches`, not in CI: 38 minutes on 2
cores shared with other work, 17 of them the first full build), that every prefix builds and
runs: one full build of the first patch, then each next patch applied and the tree built again
with `make` (configured with --enable-depend, so that what a changed header affects is
recompiled too), every file the patch changes being recompiled, with no compiler warning; each
prefix's server then runs pgbench under the settings it has so far."""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from ace import build as ace_build
from ace.server import Server
from ssdartifact.files import sha256_file

# patch(1) as ace.build applies the series (which adds --quiet)
PATCH = ["patch", "-p1", "--batch", "--forward"]

# The settings a prefix's server runs with once the prefix has them (found in its guc.c):
# a list policy, ACE's batches and both prefetchers, the trace.
SETTINGS = {"buffer_replacement_policy": "lru_wsr", "ace": True, "ace_n_w": 8, "ace_prefetch": "history",
            "ace_n_e": 8, "buffer_trace_file": "trace.csv"}
SMALL_POOL = {"shared_buffers": "1MB", "fsync": False}  # 128 buffers: dirty evictions all the time


def changed_files(patch: Path) -> list[str]:
    """The files a patch changes or creates, as paths in the source tree."""
    return [match.group(1) for match in re.finditer(r"^\+\+\+ b/(\S+)$", patch.read_text(), re.MULTILINE)]


def existing_files(patch: Path) -> list[str]:
    """The files of the pinned source a patch changes (not those it creates)."""
    return [match.group(1) for match in re.finditer(r"^--- a/(\S+)$", patch.read_text(), re.MULTILINE)]


def unpack(tarball: Path, into: Path, only: set[str] | None = None) -> Path:
    """The tarball's source tree in `into` (only the files `only` names, when given)."""
    top = ace_build.source_lock()["orig"]["top_directory"]
    kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(tarball, "r|bz2") as archive:  # one pass over the stream
        for member in archive:
            if only is None or member.name.removeprefix(f"{top}/") in only:
                archive.extract(member, into, **kwargs)
    return into / top


def downloaded_tarball() -> Path:
    """The pinned source tarball if it is downloaded already (`python -m ace.build` fetches it)."""
    lock = ace_build.source_lock()["orig"]
    tarball = ace_build.DOWNLOADS / lock["file"]
    if not tarball.exists() or sha256_file(tarball) != lock["sha256"]:
        pytest.skip(f"the PostgreSQL source tarball is not downloaded ({tarball}): "
                    "`python -m ace.build cassert` fetches it")
    return tarball


def apply(patch: Path, source: Path) -> None:
    result = subprocess.run([*PATCH, "--quiet", "-i", str(patch)], cwd=source, capture_output=True, text=True)
    assert result.returncode == 0, f"{patch.name} does not apply:\n{result.stdout}{result.stderr}"


# Needs the tarball, which `make test` fetches (in its build of the server) beside the unit tests:
# so it runs with the end-to-end checks, as test_policies.py does. About 10 s (unpacking the tarball).
@pytest.mark.e2e
def test_every_prefix_of_the_series_applies_cleanly(tmp_path):
    series = ace_build.patch_series()
    needed = {path for patch in series for path in existing_files(patch)}
    source = unpack(downloaded_tarball(), tmp_path, needed)
    for patch in series:
        dry = subprocess.run([*PATCH, "--dry-run", "-i", str(patch)], cwd=source, capture_output=True, text=True)
        # GNU patch says only "checking file ..." when every hunk applies where it says, unchanged
        unclean = [line for line in (dry.stdout + dry.stderr).splitlines() if not line.startswith("checking file ")]
        assert dry.returncode == 0 and not unclean, \
            f"{patch.name} does not apply cleanly after the patches before it:\n" + "\n".join(unclean)
        apply(patch, source)


def _run(command: list[str], cwd: Path, log) -> str:
    """Run a build step; its output (make -s: warnings and errors only), which also goes to the log."""
    log.write(f"$ {' '.join(command)}\n")
    result = subprocess.run(command, cwd=cwd, env=ace_build.build_environment(), capture_output=True, text=True)
    log.write(result.stdout + result.stderr)
    log.flush()
    assert result.returncode == 0, f"{' '.join(command)} failed in {cwd}:\n{(result.stdout + result.stderr)[-4000:]}"
    return result.stdout + result.stderr


def _say(message: str) -> None:
    print(f"ace patches: {message}", flush=True)


def _smoke(install: Path, root: Path, guc_source: str) -> list[str]:
    """pgbench and a checkpoint on this prefix's server, with the settings it has; what ran."""
    settings = {**SMALL_POOL, **{name: value for name, value in SETTINGS.items() if f'{{"{name}",' in guc_source}}
    if "buffer_trace_file" in settings:
        # in the cluster's directory: the server's user writes it
        settings["buffer_trace_file"] = str(root / "trace.csv")
    with Server(install, root, settings) as server:
        server.client(["pgbench", "-i", "-q", "-s", "2", "postgres"])
        server.client(["pgbench", "-n", "-c", "4", "-t", "200", "postgres"])
        server.sql("CHECKPOINT")
        for name, value in settings.items():
            if name in SETTINGS and name != "buffer_trace_file":
                shown = server.sql(f"SHOW {name}")
                assert shown == ("on" if value is True else str(value)), f"SHOW {name}: {shown}"
        counters = server.counters() if (install / "share/postgresql/extension/pg_ace.control").exists() else None
    if counters is not None:
        assert counters["misses"] > 0 and counters["dirty_victims"] > 0
        if settings.get("ace"):
            assert counters["ace_batches"] > 0
    if "buffer_trace_file" in settings:
        assert (root / "trace.csv").stat().st_size > 0
    return sorted(set(settings) - set(SMALL_POOL)) + (["pg_ace_counters()"] if counters is not None else [])


@pytest.mark.e2e
@pytest.mark.full_matrix  # keeps it out of `make test-e2e` (CI); `make test-ace-patches` runs it
@pytest.mark.ace_patches
def test_every_prefix_of_the_series_builds_and_runs(server_root):
    series = ace_build.patch_series()
    tarball = ace_build.fetch_source()
    # under server_root (not pytest's private tree): the server's user runs the installed binaries
    source = unpack(tarball, server_root)
    install = server_root / "install"
    jobs = os.cpu_count() or 2
    flavor = [*ace_build.COMMON_CONFIGURE, *ace_build.FLAVORS["cassert"]]
    with open(server_root / "build.log", "w") as log:
        for index, patch in enumerate(series):
            started = time.monotonic()
            apply(patch, source)
            changed = changed_files(patch)
            objects = {path: source / (path.removesuffix(".c") + ".o") for path in changed if path.endswith(".c")}
            before = {path: obj.stat().st_mtime_ns for path, obj in objects.items() if obj.exists()}
            if index == 0:
                _run(["./configure", f"--prefix={install}", "--enable-depend", *flavor], source, log)
            output = _run(["make", f"-j{jobs}", "-s"], source, log)
            _run(["make", "-s", "install"], source, log)
            for module in ace_build.CONTRIB:
                if (source / "contrib" / module).is_dir():
                    output += _run(["make", f"-j{jobs}", "-s", "-C", f"contrib/{module}", "install"], source, log)
            warnings = [line for line in output.splitlines() if "warning:" in line]
            assert not warnings, f"with {patch.name}, the build warns:\n" + "\n".join(warnings)
            stale = [path for path, obj in objects.items() if not obj.exists() or
                     (path in before and obj.stat().st_mtime_ns <= before[path])]
            assert not stale, f"with {patch.name}, make did not recompile {', '.join(stale)}"
            built = time.monotonic() - started
            ran = _smoke(install, server_root / f"pg-{index + 1}",
                         (source / "src/backend/utils/misc/guc.c").read_text())
            _say(f"{patch.name}: built in {built:.0f} s ({len(objects)} changed C files recompiled), "
                 f"ran pgbench in {time.monotonic() - started - built:.0f} s "
                 f"with {', '.join(ran) or 'no new settings'}")

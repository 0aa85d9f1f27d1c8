"""Build PostgreSQL with the ACE patch series, once per source, patches and flavor.

    from ace.build import build
    install = build("release")   # systems/ace/build/release-<key>/install (bin/postgres, ...)

The source is Debian 12's postgresql-15 source package (systems/ace/source.yaml),
fetched with `apt-get source` from the mirror of configs/containers.yaml and checked
against its sha256; only its upstream tarball is used. The patches of
systems/ace/patches/series are applied with `patch -p1`, and the tree is configured,
built and installed under systems/ace/build/<flavor>-<key>/, where <key> is a hash of
the tarball, the patches, the flavor's configure flags and the compiler. A finished
build has a `built.json`; a build without one (interrupted) is redone from scratch.

Flavors: `release` (optimized, what experiments run) and `cassert` (also PostgreSQL's
assertions, what the correctness tests run).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path

import yaml
from ssdartifact import native
from ssdartifact.files import sha256_file
from ssdartifact.provenance import RUNTIME_ENV

ACE_DIR = Path(__file__).resolve().parents[1]  # systems/ace
BUILD_ROOT = ACE_DIR / "build"
DOWNLOADS = BUILD_ROOT / "downloads"
SOURCE_LOCK = ACE_DIR / "source.yaml"
PATCH_DIR = ACE_DIR / "patches"

# --without-readline and --without-icu: fewer build dependencies; psql and pgbench need neither.
COMMON_CONFIGURE = ["--without-readline", "--without-icu", "--with-zlib"]
FLAVORS = {
    "release": ["CFLAGS=-O2"],
    # assertions on (the tests' build); no -g (--enable-debug): 16 % of the build's time, for a
    # debugger no test uses
    "cassert": ["--enable-cassert", "CFLAGS=-O2"],
}
# Built and installed beside the server: the ACE counters, amcheck for the crash test, and
# pg_buffercache for the dirty pages in the pool at the start and end of a measured run.
CONTRIB = ["pg_ace", "amcheck", "pg_buffercache"]
# Built in the source tree, for the tests against a running server: pg_regress and regress.so
# (the regression suite), pg_isolation_regress and isolationtester (the isolation suite).
TEST_PROGRAMS = ["src/test/regress", "src/test/isolation"]
BUILD_TOOLS = ("make", "gcc", "bison", "flex", "patch", "perl")


class AceBuildError(RuntimeError):
    pass


def source_lock() -> dict:
    return yaml.safe_load(SOURCE_LOCK.read_text())


def patch_series() -> list[Path]:
    """The patches in the order of patches/series (comments and blank lines skipped)."""
    return native.patch_series(PATCH_DIR, AceBuildError)


def build_key(flavor: str) -> str:
    """What the build depends on: tarball, patches (in order), configure flags, compiler."""
    if flavor not in FLAVORS:
        raise AceBuildError(f"unknown flavor {flavor!r}; known: {', '.join(FLAVORS)}")
    digest = hashlib.sha256()
    digest.update(source_lock()["orig"]["sha256"].encode())
    for patch in patch_series():
        digest.update(patch.name.encode() + b"\0" + patch.read_bytes())
    # a build in a container image is that image's (its tag is a hash of its packages)
    runtime = os.environ.get(RUNTIME_ENV, "native").split("@")[0]
    digest.update(json.dumps([COMMON_CONFIGURE, FLAVORS[flavor], CONTRIB, TEST_PROGRAMS, native.compiler_version(),
                              runtime]).encode())
    return digest.hexdigest()[:12]


def build_dir(flavor: str) -> Path:
    return BUILD_ROOT / f"{flavor}-{build_key(flavor)}"


def fetch_source() -> Path:
    """The upstream tarball of source.yaml, fetched once with `apt-get source` and sha256-checked."""
    lock = source_lock()
    orig = lock["orig"]
    target = DOWNLOADS / orig["file"]
    if target.exists() and sha256_file(target) == orig["sha256"]:
        return target
    # apt_env is the one place that sets up apt against the configured mirror
    from ssdartifact.containers.catalog import mirror_of, settings  # noqa: PLC0415
    from ssdartifact.containers.mirror import apt_env  # noqa: PLC0415

    base = settings()["base"]
    env = apt_env(base, status="", sources=True)
    mirror = mirror_of(base)
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DOWNLOADS) as scratch:
        for command in (["apt-get", "update"],
                        ["apt-get", "source", "--download-only", f"{lock['package']}={lock['version']}"]):
            result = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True)
            if result.returncode != 0:
                raise AceBuildError(
                    f"{' '.join(command)} from {mirror} failed:\n{(result.stdout + result.stderr)[-2000:]}\n"
                    f"If the mirror no longer serves {lock['package']} {lock['version']}, set base.snapshot in "
                    "configs/containers.yaml to a snapshot that does, or update systems/ace/source.yaml (version, "
                    "file and sha256) to the version it serves and check that the patches still apply.")
        fetched = Path(scratch) / orig["file"]
        if not fetched.exists():
            raise AceBuildError(f"apt-get source did not produce {orig['file']}; systems/ace/source.yaml is wrong")
        got = sha256_file(fetched)
        if got != orig["sha256"]:
            raise AceBuildError(f"{orig['file']} from {mirror} has sha256 {got}, but systems/ace/source.yaml "
                                f"expects {orig['sha256']}: refusing to build from it")
        os.replace(fetched, target)
    return target


@contextmanager
def _exclusive(flavor: str):
    """One build of a flavor at a time (two test processes may ask at once)."""
    BUILD_ROOT.mkdir(parents=True, exist_ok=True)
    with open(BUILD_ROOT / f".{flavor}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def build_environment() -> dict:
    """A clean environment for configure and make: only PATH, HOME and TMPDIR of ours, and the C
    locale. Nothing else may leak in: run from `make reproduce PROFILE=quick`, PostgreSQL's make
    would see MAKELEVEL 1 (and skip generating its headers, which it does only at the top level)
    and PROFILE=quick (which it adds to CFLAGS); a user's CFLAGS or CC would change the build
    without changing its key."""
    kept = {key: os.environ[key] for key in ("PATH", "HOME", "TMPDIR") if key in os.environ}
    return {**kept, "LC_ALL": "C", "LANG": "C"}


def _run(command: list[str], cwd: Path, log) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    result = subprocess.run(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, env=build_environment())
    if result.returncode != 0:
        log.flush()
        tail = "\n".join(Path(log.name).read_text(errors="replace").splitlines()[-40:])
        raise AceBuildError(f"{' '.join(command)} failed (exit {result.returncode}); end of {log.name}:\n{tail}")


def built(flavor: str) -> Path | None:
    """The install directory of a finished build of this flavor, or None."""
    directory = build_dir(flavor)
    return directory / "install" if (directory / "built.json").exists() else None


def build(flavor: str = "release", jobs: int | None = None, progress=None) -> Path:
    """Build (if not built yet) and return the install directory (bin/, lib/, share/)."""
    missing = [tool for tool in BUILD_TOOLS if shutil.which(tool) is None]
    if missing:
        raise AceBuildError(f"building PostgreSQL needs {', '.join(missing)}: run `make setup` "
                            "(workflow/debian-packages.txt lists them)")
    say = progress or (lambda message: print(f"ace: {message}", file=sys.stderr, flush=True))
    with _exclusive(flavor):
        done = built(flavor)
        if done:
            return done
        directory = build_dir(flavor)
        shutil.rmtree(directory, ignore_errors=True)  # an interrupted build starts over
        directory.mkdir(parents=True)
        tarball = fetch_source()
        lock = source_lock()
        source = directory / "src"
        say(f"building PostgreSQL {lock['version']} ({flavor}) with {len(patch_series())} patches in "
            f"{directory.relative_to(ACE_DIR.parents[1])} (about 5 minutes on 2 cores)")
        with tarfile.open(tarball) as archive:  # sha256-checked; the data filter where Python has it
            archive.extractall(directory, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        os.replace(directory / lock["orig"]["top_directory"], source)
        install = directory / "install"
        jobs = jobs or os.cpu_count() or 2
        with open(directory / "build.log", "w") as log:
            for patch in patch_series():
                _run(["patch", "-p1", "--batch", "--forward", "--quiet", "-i", str(patch)], source, log)
            _run(["./configure", f"--prefix={install}", *COMMON_CONFIGURE, *FLAVORS[flavor]], source, log)
            _run(["make", f"-j{jobs}", "-s"], source, log)
            _run(["make", "-s", "install"], source, log)
            for module in CONTRIB:
                _run(["make", "-s", "-C", f"contrib/{module}", "install"], source, log)
            for programs in TEST_PROGRAMS:
                _run(["make", f"-j{jobs}", "-s", "-C", programs, "all"], source, log)
        record = {"flavor": flavor, "key": build_key(flavor), "version": lock["version"],
                  "source_sha256": lock["orig"]["sha256"],
                  "patches": {p.name: sha256_file(p) for p in patch_series()},
                  "configure": [*COMMON_CONFIGURE, *FLAVORS[flavor]], "compiler": native.compiler_version()}
        (directory / "built.json.tmp").write_text(json.dumps(record, indent=2) + "\n")
        os.replace(directory / "built.json.tmp", directory / "built.json")
        say(f"built {install}")
        return install


def source_tree(install: Path) -> Path:
    """The patched, built source tree of an install directory (pg_regress and the test files)."""
    return Path(install).parent / "src"


def main(argv: list[str] | None = None) -> int:
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("flavor", nargs="?", default="release", choices=sorted(FLAVORS))
    args = parser.parse_args(argv)
    try:
        print(build(args.flavor))
    except AceBuildError as error:
        print(f"ace build: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The Python wheels of a python.lock, fetched for the images' Python on the host and checked
against the lock's hashes (a package PyPI has no wheel of is built here from its sdist).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from ssdartifact import REPO_ROOT
from ssdartifact.files import sha256_file

from . import ContainerError, cache, rel, say, write_readable
from .catalog import REFRESH
from .lockfiles import Wheel, parse_python_lock

# The images' Python is Debian 12's CPython 3.11 with glibc 2.36: wheels must fit it, whatever the host.
# pip expands only the legacy manylinux2014 tag to older ones, so list manylinux_2_17..2_36 explicitly.
WHEEL_TARGET = ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                *(f"--platform=manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)),
                "--platform=manylinux2014_x86_64"]


def _pip() -> Path:
    """A pip of our own for downloading (the project's .venv has none)."""
    venv = cache.CACHE / "tools" / "pip"
    if not (venv / "bin" / "pip").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return venv / "bin" / "pip"


def _sdist_only() -> set[str]:
    """Packages of uv.lock that PyPI publishes without any wheel (connection-pool)."""
    packages = tomllib.loads((REPO_ROOT / "uv.lock").read_text())["package"]
    return {p["name"] for p in packages if "sdist" in p and not p.get("wheels")}


def _requirement_blocks(text: str, names: set[str]) -> str:
    """The lines of a python.lock (with their hashes) for the named requirements only."""
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    return "\n".join(block for block in blocks if block.split("==")[0] in names) + "\n"


def fetch_wheels(lock_path: Path) -> dict[Wheel, Path]:
    """A wheel for every requirement of a python.lock that applies to the images, from the cache.

    Missing ones are downloaded for the images' Python (WHEEL_TARGET), pip checking each against
    the lock's hashes. A package with no wheel on PyPI is downloaded as its hash-checked sdist and
    built into a wheel here on the host, kept under wheels/built/<sdist sha256>/, so the image
    never builds anything."""
    store, built = cache.CACHE / "wheels", cache.CACHE / "wheels" / "built"
    built.mkdir(parents=True, exist_ok=True)
    text = lock_path.read_text()
    wanted = [w for w in parse_python_lock(text) if w.applies]

    def pick() -> tuple[dict[Wheel, Path], list[Wheel]]:
        by_hash = {sha256_file(path): path for path in sorted(store.glob("*.whl"))}
        found, missing = {}, []
        for wheel in wanted:
            files = [by_hash[h] for h in sorted(wheel.hashes) if h in by_hash]
            files += [path for h in sorted(wheel.hashes) for path in sorted((built / h).glob("*.whl"))]
            if files:
                found[wheel] = files[0]
            else:
                missing.append(wheel)
        return found, missing

    found, missing = pick()
    if not missing:
        return found
    say(f"downloading {len(missing)} Python packages of {rel(lock_path)} from PyPI")
    requirements = cache.CACHE / "tools" / "requirements.txt"
    pip = [str(_pip()), "--disable-pip-version-check"]
    sdists = {w.name for w in missing} & _sdist_only()
    binaries = {w.name for w in missing} - sdists
    commands = []
    if binaries:
        commands.append(([*pip, "download", "--no-deps", "--require-hashes", "--only-binary", ":all:",
                          *WHEEL_TARGET, "--dest", str(store)], binaries))
    if sdists:
        commands.append(([*pip, "download", "--no-deps", "--require-hashes", "--no-binary", ":all:",
                          "--dest", str(store)], sdists))
    for command, names in commands:
        write_readable(requirements, _requirement_blocks(text, names))
        result = subprocess.run([*command, "-r", str(requirements)], capture_output=True, text=True)
        if result.returncode != 0:
            raise ContainerError(f"pip download for {rel(lock_path)} failed:\n{result.stderr.strip()[-3000:]}\n"
                                 f"If a pinned version is gone from PyPI, refresh the locks with `{REFRESH}`.")
    for sdist in sorted(path for path in store.iterdir() if path.is_file() and path.suffix != ".whl"):
        digest = sha256_file(sdist)
        if any(digest in w.hashes for w in missing if w.name in sdists) and not list((built / digest).glob("*.whl")):
            # A fixed SOURCE_DATE_EPOCH makes the wheel's zip timestamps, hence its bytes, repeatable.
            result = subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "--use-pep517", "--wheel-dir",
                                     str(built / digest), str(sdist)], capture_output=True, text=True,
                                    env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"})
            if result.returncode != 0:
                raise ContainerError(f"building a wheel from {sdist.name} failed:\n{result.stderr.strip()[-3000:]}")
    found, missing = pick()
    if missing:
        raise ContainerError(f"no file matching the hashes of {', '.join(w.name for w in missing)} after "
                             f"pip download; refresh {rel(lock_path)} with `{REFRESH}`")
    return found


def staged_python_lock(text: str, wheels: dict[Wheel, Path]) -> str:
    """python.lock for the build context: a wheel built here from an sdist gets its own hash added,
    so pip in the image still checks every file it installs."""
    for wheel, path in wheels.items():
        if path.parent.parent.name == "built":
            digest = sha256_file(path)
            text = re.sub(rf"^({re.escape(wheel.name)}=={re.escape(wheel.version)}\b.*\\)$",
                          rf"\1\n    --hash=sha256:{digest} \\", text, count=1, flags=re.M)
    return text

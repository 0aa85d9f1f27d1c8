"""The lock files: packages.lock (one pinned .deb a line) and python.lock (uv.lock's runtime
dependencies), read and written; and the Debian control files the .debs' lines come from.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ssdartifact import REPO_ROOT

from . import ContainerError, rel, write_readable
from .catalog import REFRESH

MARKER_ENV = {"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
              "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
              "implementation_name": "cpython", "platform_python_implementation": "CPython"}


@dataclass(frozen=True, order=True)
class Deb:
    """One pinned .deb: a line `name=version arch sha256 path` of a packages.lock."""
    name: str
    version: str
    arch: str
    sha256: str
    path: str  # relative to the mirror root (pool/main/...), the same on every mirror and snapshot

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def line(self) -> str:
        return f"{self.name}={self.version} {self.arch} {self.sha256} {self.path}"


def parse_lock(text: str, source: str = "packages.lock") -> list[Deb]:
    debs = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"([a-z0-9][a-z0-9+.-]*)=(\S+) (\S+) ([0-9a-f]{64}) (\S+\.deb)", line)
        if not match:
            raise ContainerError(f"{source}:{number}: not a lock line `name=version arch sha256 path`: "
                                 f"{line!r}; regenerate it with `{REFRESH}`")
        debs.append(Deb(*match.groups()))
    return debs


def lock_header(text: str) -> dict[str, str]:
    """The `# key: value` lines of a lock (resolved date, mirror)."""
    return dict(re.findall(r"^# (\w+): (.+)$", text, flags=re.M))


def format_lock(debs: list[Deb], what: str, mirror: str, suite: str) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return (f"# {what}\n# Written by `{REFRESH}`; do not edit. One line per .deb: name=version arch sha256 path.\n"
            f"# resolved: {stamp}\n# mirror: {mirror} {suite} main\n"
            + "".join(deb.line() + "\n" for deb in sorted(debs)))


def write_lock(path: Path, debs: list[Deb], what: str, mirror: str, suite: str) -> bool:
    """Write a lock unless it already pins exactly these .debs (so its date, and the image key, stay)."""
    if path.exists() and sorted(parse_lock(path.read_text(), str(path))) == sorted(debs):
        return False
    write_readable(path, format_lock(debs, what, mirror, suite))
    return True


def snapshot_hint(lock_text: str) -> str:
    """Where the locked versions still are: the snapshot they came from, or the mirror's state then."""
    header = lock_header(lock_text)
    mirror = header.get("mirror", "").split(" ")[0]
    if "snapshot.debian.org" in mirror:
        return f", or set base.snapshot in configs/containers.yaml back to {mirror}"
    if "resolved" not in header:
        return ""
    return (f", or set base.snapshot in configs/containers.yaml to the date the lock was resolved: "
            f"http://snapshot.debian.org/archive/debian/{header['resolved']}")


def missing_versions_error(lock_path: Path, missing: list[tuple[Deb, str]], mirror: str) -> ContainerError:
    shown = "\n".join(f"  {deb.name}={deb.version}: {mirror}/{deb.path}: {reason}" for deb, reason in missing)
    return ContainerError(
        f"{rel(lock_path)} pins {len(missing)} package version(s) that {mirror} no longer serves:\n{shown}\n"
        f"Refresh the locks with `{REFRESH}` and rebuild{snapshot_hint(lock_path.read_text())}.")


def stanzas(text: str, keep=lambda fields: True):
    """The stanzas of a Debian control file (dpkg status, Packages, apt-cache show) as dicts."""
    for block in text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z0-9-]+): ?(.*)$", block, flags=re.M))
        if fields and keep(fields):
            yield fields


def deb_of(stanza: dict) -> Deb:
    return Deb(stanza["Package"], stanza["Version"], stanza["Architecture"], stanza["SHA256"], stanza["Filename"])


def _uv() -> str:
    uv = REPO_ROOT / ".tools/uv/bin/uv"
    found = str(uv) if uv.exists() else shutil.which("uv")
    if not found:
        raise ContainerError("uv is not installed: run `make setup`")
    return found


def python_lock_text() -> str:
    """The project's runtime dependencies exactly as uv.lock pins them, with their hashes."""
    result = subprocess.run([_uv(), "export", "--frozen", "--no-default-groups", "--no-emit-project", "--no-header",
                             "--format", "requirements-txt"], cwd=REPO_ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise ContainerError(f"uv export failed: {result.stderr.strip()}")
    return ("# The Python packages of this image: uv.lock's runtime dependencies (uv export --no-default-groups).\n"
            f"# Written by `{REFRESH}`; do not edit. The project's own code comes from the mounted repository.\n"
            + result.stdout)


@dataclass(frozen=True)
class Wheel:
    """One requirement of a python.lock: name==version, the hashes of its files, whether it applies."""
    name: str
    version: str
    hashes: frozenset[str]
    applies: bool


def parse_python_lock(text: str) -> list[Wheel]:
    from packaging.markers import Marker  # noqa: PLC0415 (a locked dependency of snakemake, needed here only)

    logical, current = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or not line:
            continue
        current += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            logical.append(current.strip())
            current = ""
    if current.strip():
        logical.append(current.strip())
    wheels = []
    for line in logical:
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+?)(?:\s*;\s*(.*?))?((?:\s+--hash=sha256:[0-9a-f]{64})+)", line)
        if not match:
            raise ContainerError(f"python.lock: cannot read {line[:80]!r}; regenerate it with `{REFRESH}`")
        name, version, marker, hashes = match.groups()
        wheels.append(Wheel(name, version, frozenset(re.findall(r"[0-9a-f]{64}", hashes)),
                            not marker or Marker(marker).evaluate(MARKER_ENV)))
    return wheels

"""The base image: Debian 12's root file system made by mmdebstrap from the locked packages, its
tag, and the date (SOURCE_DATE_EPOCH) every image's files carry.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ssdartifact.imagearchive import Config, normalize_layer

from . import ContainerError, cache, catalog, rel, say
from .cache import exclusive, scratch
from .catalog import BASE_DIR, REFRESH, mirror_of, settings, tag_key
from .engine import docker, image_exists, load
from .lockfiles import Deb, deb_of, lock_header, parse_lock, snapshot_hint, stanzas
from .mirror import ARCH, KEYRING, check_mirror

VARIANT = "minbase"
BOOTSTRAP = "mmdebstrap"  # reproducible with SOURCE_DATE_EPOCH; debootstrap leaves logs, caches and times
BASE_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"]


def source_date_epoch(lock_text: str | None = None) -> int:
    """The date every image's files and metadata carry (SOURCE_DATE_EPOCH): when the base lock was
    resolved. No file of a locked package is newer, and re-locking to other packages moves it."""
    header = lock_header(base_lock_text() if lock_text is None else lock_text)
    if "resolved" not in header:
        raise ContainerError(f"containers/base/packages.lock has no `# resolved:` line; regenerate it with `{REFRESH}`")
    return int(dt.datetime.strptime(header["resolved"], "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.timezone.utc).timestamp())


def base_tag(base: dict | None = None, lock_text: str | None = None) -> str:
    """The base's tag: a registry image pinned by digest, or a hash of the locked package set and
    the lock's date (the files' SOURCE_DATE_EPOCH): what fixes the root file system's bytes. Not
    the mirror, so the same lock gives the same tag (and image) from any mirror or snapshot."""
    base = base or settings()["base"]
    if base["source"] == "registry":
        return base["registry_image"]
    if lock_text is None:
        lock_text = base_lock_text()
    debs = [deb.line() for deb in sorted(parse_lock(lock_text, "containers/base/packages.lock"))]
    key = {'suite': base['suite'], 'variant': VARIANT, 'arch': ARCH, 'debs': debs,
           'epoch': source_date_epoch(lock_text), 'bootstrap': BOOTSTRAP, 'normalize': BASE_NORMALIZE}
    return f"{catalog.REPOSITORY}/base:{tag_key(key)}"


def base_lock_text() -> str:
    path = BASE_DIR / "packages.lock"
    if not path.exists():
        raise ContainerError(f"{rel(path)} is missing; create it with `{REFRESH}`")
    return path.read_text()


def ensure_base() -> str:
    """The base image's tag, loading it from the cached rootfs or making that with mmdebstrap first."""
    base = settings()["base"]
    tag = base_tag(base)
    if image_exists(tag):
        return tag
    if base["source"] == "registry":
        say(f"pulling {tag}")
        try:
            docker("pull", tag)
        except ContainerError as error:
            raise ContainerError(f"{error}\nThe base comes from a registry (base.source: registry); set "
                                 "base.source: mmdebstrap in configs/containers.yaml to build it locally") from None
        return tag
    tarball = cache.CACHE / "base" / tag.split(":")[1] / "rootfs.tar"
    if not tarball.exists() and os.geteuid() != 0:
        rerun_as_root("base")
        return tag
    with exclusive("base"):
        if image_exists(tag):  # another process made it while we waited
            return tag
        if not tarball.exists():
            lock_text = base_lock_text()
            debs = bootstrap(base, tarball, source_date_epoch(lock_text))
            if sorted(debs) != sorted(parse_lock(lock_text)):
                shutil.rmtree(tarball.parent)
                raise ContainerError(_base_mismatch(debs, parse_lock(lock_text), mirror_of(base), lock_text))
        say(f"loading {rel(tarball)} as {tag}")
        with scratch("base") as work:
            layer = work / "layer.tar"
            diff_id = normalize_layer(tarball, layer, source_date_epoch())  # for the one format every layer has
            load(tag, Config(source_date_epoch(), BASE_ENV, "", [diff_id], [f"{BOOTSTRAP} --variant={VARIANT} "
                                                                           f"{base['suite']} (containers/base)"]),
                  {diff_id: layer})
    return tag


def rerun_as_root(*cli: str) -> None:
    """mmdebstrap needs root here (its unshare mode would need subordinate ids): run this one step with
    password-less sudo, as `make setup` does for Debian packages (main() gives the files back to the user)."""
    shown = f"python -m ssdartifact.containers {' '.join(cli)}"
    if shutil.which("sudo") is None or subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode:
        raise ContainerError(f"building the base image with mmdebstrap needs root: run `sudo {sys.executable} "
                             f"-m ssdartifact.containers {' '.join(cli)}` once (later builds reuse the cached base), "
                             "or set base.source: registry in configs/containers.yaml")
    say(f"mmdebstrap needs root: running `{shown}` with sudo")
    result = subprocess.run(["sudo", "-n", sys.executable, "-m", "ssdartifact.containers", *cli])
    if result.returncode != 0:
        raise ContainerError(f"`{shown}` failed under sudo (its message is above)")


def _base_mismatch(got: list[Deb], locked: list[Deb], mirror: str, lock_text: str) -> str:
    have = {deb.name: deb for deb in got}
    want = {deb.name: deb for deb in locked}
    lines = [f"  {name}: locked {want[name].version if name in want else '(none)'}, "
             f"mirror gave {have[name].version if name in have else '(none)'}"
             for name in sorted(set(have) | set(want)) if have.get(name) != want.get(name)]
    return (f"mmdebstrap from {mirror} installed packages that differ from containers/base/packages.lock:\n"
            + "\n".join(lines[:20]) + ("\n  ..." if len(lines) > 20 else "")
            + f"\nRefresh the locks with `{REFRESH}` and rebuild{snapshot_hint(lock_text)}.")


# What the base's bytes would otherwise take from the host (part of its tag): the host's resolv.conf
# and hostname (the container runtime mounts its own), and the owner of apt's partial folders, which
# mmdebstrap's apt hands to its _apt user only when _apt can read the host folder it works in.
BASE_NORMALIZE = (': > "$1/etc/resolv.conf"', ': > "$1/etc/hostname"',
                  'chroot "$1" chown _apt:root /var/cache/apt/archives/partial /var/lib/apt/lists/partial')


def bootstrap(base: dict, tarball: Path, epoch: int) -> list[Deb]:
    """Make the base's root file system as `tarball`; return the .debs installed (versions, and each
    sha256 from the signed index used). With SOURCE_DATE_EPOCH, mmdebstrap writes the same bytes
    for the same packages: entries sorted, times clamped to the date, logs and caches removed.
    What it would take from the host is made the same everywhere (BASE_NORMALIZE), and apt gets no
    sources: images install the .debs pinned in their locks, and have nowhere to fetch from."""
    program = shutil.which(BOOTSTRAP)
    if program is None:
        raise ContainerError(f"{BOOTSTRAP} is not installed: run `make setup` (workflow/debian-packages.txt), "
                             "or set base.source: registry in configs/containers.yaml")
    if not KEYRING.exists():
        raise ContainerError(f"{KEYRING} is missing: run `sudo apt-get install debian-archive-keyring`")
    mirror, suite = mirror_of(base), base["suite"]
    check_mirror(mirror, suite)
    log = cache.CACHE / "logs" / "base.bootstrap.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    say(f"{BOOTSTRAP} {suite} ({VARIANT}) from {mirror}: about a minute (log {rel(log)})")
    started = time.monotonic()
    with scratch("bootstrap") as work:
        sources = f"# No sources: images install the .debs pinned in containers/<name>/packages.lock (from {mirror})."
        hooks = [f'cp "$1/var/lib/dpkg/status" {work}/status',  # what was installed, read below
                 f'cat "$1"/var/lib/apt/lists/*_Packages > {work}/Packages',
                 f'echo {shlex.quote(sources)} > "$1/etc/apt/sources.list"', *BASE_NORMALIZE]
        # merged /usr as debootstrap and Debian 12's installer make it (symlinks and usr-is-merged);
        # without the hook, apt would satisfy init-system-helpers with usrmerge, which pulls in perl
        command = [program, f"--variant={VARIANT}", f"--architectures={ARCH}", f"--keyring={KEYRING}",
                   "--format=tar", f"--hook-dir=/usr/share/{BOOTSTRAP}/hooks/merged-usr",
                   *(f"--customize-hook={hook}" for hook in hooks), suite, str(work / "rootfs.tar"), mirror]
        with open(log, "w") as handle:
            result = subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT,
                                    env={**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "TMPDIR": str(work)})
        if result.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
            raise ContainerError(f"{BOOTSTRAP} failed ({result.returncode}); end of {rel(log)}:\n{tail}")
        debs = _installed_debs((work / "status").read_text(), (work / "Packages").read_text())
        tarball.parent.mkdir(parents=True, exist_ok=True)
        os.replace(work / "rootfs.tar", tarball)
    say(f"base rootfs built in {time.monotonic() - started:.0f} s")
    return debs


def _installed_debs(status: str, packages: str) -> list[Deb]:
    """The installed packages of a dpkg status, with each .deb's sha256 and path from the index."""
    installed = {(p["Package"], p["Version"], p["Architecture"])
                 for p in stanzas(status, lambda p: "installed" in p.get("Status", ""))}
    index = {(p["Package"], p["Version"], p["Architecture"]): deb_of(p)
             for p in stanzas(packages, lambda p: (p.get("Package"), p.get("Version"),
                                                    p.get("Architecture")) in installed)}
    unknown = installed - set(index)
    if unknown:
        raise ContainerError(f"{BOOTSTRAP} installed packages its index does not list: {sorted(unknown)}")
    return sorted(index.values())

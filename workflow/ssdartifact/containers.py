"""Container images of the systems, built hermetically (DESIGN.md, "Hermetic container builds").

The base is Debian 12 made with mmdebstrap (minbase), so no registry is needed. On it, the
parent (configs/containers.yaml `parent:`, containers/python) adds Python and the project's
locked environment, and every system's image adds its own .debs on top of the parent. Every
input is fetched and checked on the host: the .debs pinned in containers/<name>/packages.lock
(verified by sha256) and the wheels of python.lock (uv.lock's, verified by pip's
--require-hashes). An image is one layer on its parent, made by one `docker run --network none`
with its inputs bind-mounted read-only, so no input stays in the image (the RUN --mount=type=bind
of BuildKit, which this engine lacks).

Images are bit-reproducible. The base's root file system comes from mmdebstrap with
SOURCE_DATE_EPOCH, the base lock's date. Each install runs with that date, and its layer is
written with file times clamped to it (imagearchive). So the same locks give the same image ID
on any machine.

Tags are keys: the base's is a hash of its lock, an image's a hash of its directory (package
list, locks), its recipe and its parent's tag. An image is rebuilt exactly when one of those
changes, and locks are refreshed only on request (`make images-lock`).

  python -m ssdartifact.containers base                 build (or find) the base, print its tag
  python -m ssdartifact.containers lock [NAME ...]      re-resolve the locks (no names: base and all images)
  python -m ssdartifact.containers build [NAME ...]     build what is missing, print name and tag
  python -m ssdartifact.containers save --out DIR [NAME ...]   DIR/<name>.tar, <name>.tar.sha256, digests.txt
  python -m ssdartifact.containers id NAME              print the image id (sha256:...)
  python -m ssdartifact.containers run NAME [--bind P] [--device D] [--cap-add C] [-e K=V] -- CMD ...
                                                        (hardened as a workflow step; --bind: a path it may write)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import datetime as dt
import fcntl
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from . import REPO_ROOT, config
from .files import atomic_write_text, sha256_file
from .imagearchive import Config, normalize_layer, write_archive

CONTAINERS = REPO_ROOT / "containers"
BASE_DIR = CONTAINERS / "base"
CACHE = CONTAINERS / ".cache"  # fetched inputs, the base rootfs, build logs; gitignored, archivable
REFRESH = "make images-lock"
REPOSITORY = "ssd-artifact"  # the tags' repository: <REPOSITORY>/<name>:<key>
ARCH = "amd64"
VARIANT = "minbase"
BOOTSTRAP = "mmdebstrap"  # reproducible with SOURCE_DATE_EPOCH; debootstrap leaves logs, caches and times
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
BASE_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"]
# The images' Python is Debian 12's CPython 3.11 with glibc 2.36: wheels must fit it, whatever the host.
# pip expands only the legacy manylinux2014 tag to older ones, so list manylinux_2_17..2_36 explicitly.
WHEEL_TARGET = ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                *(f"--platform=manylinux_2_{minor}_x86_64" for minor in range(36, 16, -1)),
                "--platform=manylinux2014_x86_64"]
MARKER_ENV = {"python_version": "3.11", "python_full_version": "3.11.2", "sys_platform": "linux",
              "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
              "implementation_name": "cpython", "platform_python_implementation": "CPython"}


class ContainerError(RuntimeError):
    """Something stops a build; the message says what to do next."""


def _write(path: Path, text: str) -> None:
    atomic_write_text(path, text)
    path.chmod(0o644)  # committed locks and archived checksums are for everyone to read (mkstemp gives 0600)


# ---------------------------------------------------------------- lock files

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
    _write(path, format_lock(debs, what, mirror, suite))
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
        f"{_rel(lock_path)} pins {len(missing)} package version(s) that {mirror} no longer serves:\n{shown}\n"
        f"Refresh the locks with `{REFRESH}` and rebuild{snapshot_hint(lock_path.read_text())}.")


# ---------------------------------------------------------------- config and keys

def settings() -> dict:
    return config.load("containers.yaml")


def mirror_of(base: dict) -> str:
    return (base.get("snapshot") or base["mirror"]).rstrip("/")


def _image_entry(name: str) -> dict:
    """An image's entry of configs/containers.yaml `images:` as {path, from, env, workdir}."""
    images = settings()["images"]
    if name not in images:
        raise ContainerError(f"no image {name!r} in configs/containers.yaml; known: {', '.join(images)}")
    entry = images[name]
    defaults = {"from": settings()["parent"], "env": {}, "workdir": "", "finish": ""}
    return {**defaults, "path": entry} if isinstance(entry, str) else {**defaults, **entry}


def image_dir(name: str) -> Path:
    return REPO_ROOT / _image_entry(name)["path"]


def parent_of(name: str) -> str | None:
    """The image `name` extends: the one its entry names (`from:`), else the shared parent
    (configs/containers.yaml `parent:`); None for the parent itself, which extends the base."""
    above = _image_entry(name)["from"]
    return None if name == settings()["parent"] else above


def lineage(name: str) -> list[str]:
    """`name` and the images it extends, down to the one on the base: what its bytes depend on."""
    chain = [name]
    while (above := parent_of(chain[-1])) is not None:
        if above in chain:
            raise ContainerError(f"configs/containers.yaml: images extend each other: {' -> '.join([*chain, above])}")
        chain.append(above)
    return chain


def tree_files(directory: Path) -> dict[str, str]:
    """relative path -> sha256 of every file of an image directory (its build context before inputs)."""
    return {str(path.relative_to(directory)): sha256_file(path)
            for path in sorted(directory.rglob("*")) if path.is_file()}


def _key(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]


def source_date_epoch(lock_text: str | None = None) -> int:
    """The date every image's files and metadata carry (SOURCE_DATE_EPOCH): when the base lock was
    resolved. No file of a locked package is newer, and re-locking to other packages moves it."""
    header = lock_header(_base_lock_text() if lock_text is None else lock_text)
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
        lock_text = _base_lock_text()
    debs = [deb.line() for deb in sorted(parse_lock(lock_text, "containers/base/packages.lock"))]
    key = {'suite': base['suite'], 'variant': VARIANT, 'arch': ARCH, 'debs': debs,
           'epoch': source_date_epoch(lock_text), 'bootstrap': BOOTSTRAP, 'normalize': BASE_NORMALIZE}
    return f"{REPOSITORY}/base:{_key(key)}"


def image_tag(name: str, parent: str | None = None, directory: Path | None = None) -> str:
    """ssd-artifact/<name>:<12 hex>, a hash of what makes the image: its directory (package list,
    locks; the fetched inputs are fixed by the locks' hashes), the install it runs, its environment
    and its parent's tag. It changes exactly when the image's bytes may."""
    directory = directory or image_dir(name)
    if parent is None:
        above = parent_of(name)
        parent = image_tag(above) if above else base_tag()
    entry = _image_entry(name)
    recipe = {'from': parent, 'files': tree_files(directory),
              'run': [INSTALL_ENV, install_script(directory, entry["finish"])], 'env': entry["env"],
              'workdir': entry["workdir"]}
    return f"{REPOSITORY}/{name}:{_key(recipe)}"


def _base_lock_text() -> str:
    path = BASE_DIR / "packages.lock"
    if not path.exists():
        raise ContainerError(f"{_rel(path)} is missing; create it with `{REFRESH}`")
    return path.read_text()


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- docker

@functools.cache
def _check_docker() -> None:
    if shutil.which("docker") is None:
        problem = "the docker command is not on PATH"
    else:
        result = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
        if result.returncode == 0:
            return
        problem = ((result.stderr or result.stdout).strip().splitlines() or ["docker info failed"])[-1]
    raise ContainerError(f"docker is not installed or its daemon is not running: {problem}; "
                         "use runtime: native or start Docker")


def docker(*args: str, log: Path | None = None, env: dict | None = None) -> str:
    """Run a docker command; its output, or an error quoting it."""
    _check_docker()
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as handle:
            result = subprocess.run(["docker", *args], stdout=handle, stderr=subprocess.STDOUT,
                                    env={**os.environ, **(env or {})})
        output = log.read_text(errors="replace")
    else:
        result = subprocess.run(["docker", *args], capture_output=True, text=True)
        output = result.stdout + result.stderr
    if result.returncode != 0:
        tail = "\n".join(output.splitlines()[-25:])
        raise ContainerError(f"docker {args[0]} failed ({result.returncode})"
                             + (f"; full log {_rel(log)}" if log else "") + f":\n{tail}")
    return result.stdout.strip() if not log else ""


def image_exists(tag: str) -> bool:
    _check_docker()
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def image_id(tag: str) -> str:
    if not image_exists(tag):
        raise ContainerError(f"image {tag} is not built; run `make images`")
    return docker("image", "inspect", "--format", "{{.Id}}", tag)


def _say(message: str) -> None:
    print(f"containers: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the base image

def ensure_base() -> str:
    """The base image's tag, loading it from the cached rootfs or making that with mmdebstrap first."""
    base = settings()["base"]
    tag = base_tag(base)
    if image_exists(tag):
        return tag
    if base["source"] == "registry":
        _say(f"pulling {tag}")
        try:
            docker("pull", tag)
        except ContainerError as error:
            raise ContainerError(f"{error}\nThe base comes from a registry (base.source: registry); set "
                                 "base.source: mmdebstrap in configs/containers.yaml to build it locally") from None
        return tag
    tarball = CACHE / "base" / tag.split(":")[1] / "rootfs.tar"
    if not tarball.exists() and os.geteuid() != 0:
        _rerun_as_root("base")
        return tag
    with _exclusive("base"):
        if image_exists(tag):  # another process made it while we waited
            return tag
        if not tarball.exists():
            lock_text = _base_lock_text()
            debs = _bootstrap(base, tarball, source_date_epoch(lock_text))
            if sorted(debs) != sorted(parse_lock(lock_text)):
                shutil.rmtree(tarball.parent)
                raise ContainerError(_base_mismatch(debs, parse_lock(lock_text), mirror_of(base), lock_text))
        _say(f"loading {_rel(tarball)} as {tag}")
        with _work("base") as work:
            layer = work / "layer.tar"
            diff_id = normalize_layer(tarball, layer, source_date_epoch())  # for the one format every layer has
            _load(tag, Config(source_date_epoch(), BASE_ENV, "", [diff_id], [f"{BOOTSTRAP} --variant={VARIANT} "
                                                                           f"{base['suite']} (containers/base)"]),
                  {diff_id: layer})
    return tag


@contextlib.contextmanager
def _exclusive(name: str):
    """One process at a time for `name` (parallel workflow jobs may ask for the same image)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _rerun_as_root(*cli: str) -> None:
    """mmdebstrap needs root here (its unshare mode would need subordinate ids): run this one step with
    password-less sudo, as `make setup` does for Debian packages (main() gives the files back to the user)."""
    shown = f"python -m ssdartifact.containers {' '.join(cli)}"
    if shutil.which("sudo") is None or subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode:
        raise ContainerError(f"building the base image with mmdebstrap needs root: run `sudo {sys.executable} "
                             f"-m ssdartifact.containers {' '.join(cli)}` once (later builds reuse the cached base), "
                             "or set base.source: registry in configs/containers.yaml")
    _say(f"mmdebstrap needs root: running `{shown}` with sudo")
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


def _load(tag: str, image: Config, new_layers: dict[str, Path]) -> None:
    """`docker load` the image; its ID must be the hash of the config written, or something changed it."""
    _check_docker()
    loading = subprocess.Popen(["docker", "load", "--quiet"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    try:
        write_archive(loading.stdin, image, tag, new_layers)
    finally:
        loading.stdin.close()
    output = loading.stdout.read().decode(errors="replace")
    if loading.wait() != 0:
        raise ContainerError(f"docker load of {tag} failed:\n{output.strip()[-3000:]}")
    if image_id(tag) != image.image_id:
        raise ContainerError(f"docker load gave {tag} the id {image_id(tag)}, not the hash of its config "
                             f"{image.image_id}: does this engine rewrite configs on load?")


@contextlib.contextmanager
def _work(name: str):
    """A scratch folder for one build, removed after it (its layer tars are large)."""
    work = CACHE / "work" / f"{name}-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_mirror(mirror: str, suite: str) -> None:
    url = f"{mirror}/dists/{suite}/Release"
    try:
        with urllib.request.urlopen(url, timeout=30):
            pass
    except (urllib.error.URLError, OSError) as error:
        raise ContainerError(f"cannot reach the Debian mirror {mirror} ({url}: {error}); check the network, or set "
                             "base.mirror (or base.snapshot) in configs/containers.yaml to one you can reach") from None


# What the base's bytes would otherwise take from the host (part of its tag): the host's resolv.conf
# and hostname (the container runtime mounts its own), and the owner of apt's partial folders, which
# mmdebstrap's apt hands to its _apt user only when _apt can read the host folder it works in.
BASE_NORMALIZE = (': > "$1/etc/resolv.conf"', ': > "$1/etc/hostname"',
                  'chroot "$1" chown _apt:root /var/cache/apt/archives/partial /var/lib/apt/lists/partial')


def _bootstrap(base: dict, tarball: Path, epoch: int) -> list[Deb]:
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
    log = CACHE / "logs" / "base.bootstrap.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    _say(f"{BOOTSTRAP} {suite} ({VARIANT}) from {mirror}: about a minute (log {_rel(log)})")
    started = time.monotonic()
    with _work("bootstrap") as work:
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
            raise ContainerError(f"{BOOTSTRAP} failed ({result.returncode}); end of {_rel(log)}:\n{tail}")
        debs = _installed_debs((work / "status").read_text(), (work / "Packages").read_text())
        tarball.parent.mkdir(parents=True, exist_ok=True)
        os.replace(work / "rootfs.tar", tarball)
    _say(f"base rootfs built in {time.monotonic() - started:.0f} s")
    return debs


def _stanzas(text: str, keep=lambda fields: True):
    """The stanzas of a Debian control file (dpkg status, Packages, apt-cache show) as dicts."""
    for block in text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z0-9-]+): ?(.*)$", block, flags=re.M))
        if fields and keep(fields):
            yield fields


def _deb(stanza: dict) -> Deb:
    return Deb(stanza["Package"], stanza["Version"], stanza["Architecture"], stanza["SHA256"], stanza["Filename"])


def _installed_debs(status: str, packages: str) -> list[Deb]:
    """The installed packages of a dpkg status, with each .deb's sha256 and path from the index."""
    installed = {(p["Package"], p["Version"], p["Architecture"])
                 for p in _stanzas(status, lambda p: "installed" in p.get("Status", ""))}
    index = {(p["Package"], p["Version"], p["Architecture"]): _deb(p)
             for p in _stanzas(packages, lambda p: (p.get("Package"), p.get("Version"),
                                                    p.get("Architecture")) in installed)}
    unknown = installed - set(index)
    if unknown:
        raise ContainerError(f"{BOOTSTRAP} installed packages its index does not list: {sorted(unknown)}")
    return sorted(index.values())


# ---------------------------------------------------------------- locking

def lock(name: str) -> Path:
    """Re-resolve a lock from the mirror: the base's package set, or an image's .debs and Python wheels."""
    base = settings()["base"]
    mirror, suite = mirror_of(base), base["suite"]
    if name == "base":
        path = BASE_DIR / "packages.lock"
        if base["source"] == "registry":
            _say("base.source is registry: the base is pinned by its digest; nothing to lock")
            return path
        if os.geteuid() != 0:
            _rerun_as_root("lock", "base")
            return path
        scratch = CACHE / "base" / f".lock-{os.getpid()}" / "rootfs.tar"
        debs = _bootstrap(base, scratch, source_date_epoch() if path.exists() else int(time.time()))
        changed = write_lock(path, debs, f"The packages of the base image ({BOOTSTRAP} --variant={VARIANT}).",
                             mirror, suite)
        final = CACHE / "base" / base_tag(base).split(":")[1] / "rootfs.tar"
        if not changed and not final.exists():  # keep this rootfs: the lock, hence its date, is the same
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(scratch, final)
        shutil.rmtree(scratch.parent, ignore_errors=True)
        _say(f"{_rel(path)}: {len(debs)} packages, {'updated' if changed else 'unchanged'}")
        return path
    directory = image_dir(name)
    wanted = _wanted(directory / "packages.txt")
    above = parent_of(name)
    below = ensure_image(above) if above else ensure_base()  # what is installed already
    status = docker("run", "--rm", "--network", "none", below, "cat", "/var/lib/dpkg/status")
    debs = _resolve(wanted, status, base)
    path = directory / "packages.lock"
    changed = write_lock(path, debs, f"Every .deb containers/{name} adds to {above or 'the base'}: the closure of "
                         "packages.txt.", mirror, suite)
    _say(f"{_rel(path)}: {len(debs)} packages, {'updated' if changed else 'unchanged'}")
    if (directory / "python.lock").exists():  # the image opts into the project's Python environment
        _lock_python(directory / "python.lock")
    return path


def _wanted(path: Path) -> list[str]:
    if not path.exists():
        raise ContainerError(f"{_rel(path)} is missing: list the Debian packages the image needs, one a line")
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def apt_env(base: dict, status: str, sources: bool = False) -> dict:
    """An environment for apt-get with its own config, sources, lists and status (the base's), so the
    host's apt configuration and state are neither used nor touched. With sources, the mirror's
    source packages too (`apt-get source`)."""
    mirror = mirror_of(base)
    state = CACHE / "apt" / hashlib.sha256(mirror.encode()).hexdigest()[:12]
    for sub in ("empty", "lists/partial", "cache", "state", "log"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    (state / "status").write_text(status)
    kinds = ("deb", "deb-src") if sources else ("deb",)
    (state / "sources.list").write_text("".join(f"{kind} [signed-by={KEYRING}] {mirror} {base['suite']} main\n"
                                                for kind in kinds))
    options = {
        "Dir::Etc::main": "/dev/null", "Dir::Etc::parts": state / "empty",
        "Dir::Etc::sourcelist": state / "sources.list", "Dir::Etc::sourceparts": state / "empty",
        "Dir::Etc::preferencesparts": state / "empty", "Dir::State": state / "state",
        "Dir::State::lists": state / "lists", "Dir::State::status": state / "status",
        "Dir::Cache": state / "cache", "Dir::Log": state / "log", "APT::Architecture": ARCH,
        "Acquire::Languages": "none", "APT::Install-Recommends": "false",
        # snapshot.debian.org serves old Release files whose Valid-Until has passed
        "Acquire::Check-Valid-Until": "false" if base.get("snapshot") else "true",
    }
    if os.geteuid() == 0:
        options["APT::Sandbox::User"] = "root"  # the _apt user cannot write into the repository's cache
    conf = state / "apt.conf"
    conf.write_text("".join(f'{key} "{value}";\n' for key, value in options.items())
                    + f'APT::Architectures {{ "{ARCH}"; }};\n')
    return {**os.environ, "APT_CONFIG": str(conf), "LC_ALL": "C"}


def _resolve(wanted: list[str], status: str, base: dict) -> list[Deb]:
    """The .debs that installing `wanted` on the base adds (the full closure), with sha256 and pool path."""
    check_mirror(mirror_of(base), base["suite"])
    run = functools.partial(subprocess.run, capture_output=True, text=True, env=apt_env(base, status))
    update = run(["apt-get", "update"])
    if update.returncode != 0:
        raise ContainerError(f"apt-get update from {mirror_of(base)} failed:\n{update.stdout}{update.stderr}")
    simulated = run(["apt-get", "install", "--simulate", "--no-install-recommends", "--yes", *wanted])
    if simulated.returncode != 0:
        raise ContainerError(f"apt cannot install {' '.join(wanted)} on the base:\n"
                             f"{simulated.stdout}{simulated.stderr}")
    # e.g. "Inst libc6 [2.36-9] (2.36-9+deb12u13 Debian:12.13/stable [amd64])": a new version or an upgrade
    chosen = re.findall(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) .*\[(\S+)\]\)", simulated.stdout, flags=re.M)
    if not chosen:  # everything wanted is installed already (by the image this one extends)
        return []
    shown = run(["apt-cache", "show", "--no-all-versions", *(f"{n}={v}" for n, v, _ in chosen)])
    if shown.returncode != 0:
        raise ContainerError(f"apt-cache show failed:\n{shown.stderr}")
    records = {(p["Package"], p["Version"]): _deb(p) for p in _stanzas(shown.stdout)}
    return sorted(records[(n, v)] for n, v, _ in chosen)


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


def _lock_python(path: Path) -> None:
    text = python_lock_text()
    changed = not path.exists() or path.read_text() != text
    if changed:
        _write(path, text)
    _say(f"{_rel(path)}: {len(parse_python_lock(text))} packages, {'updated' if changed else 'unchanged'}")


# ---------------------------------------------------------------- fetching inputs

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


def fetch_debs(lock_path: Path, base: dict) -> list[Path]:
    """Every .deb of a lock in the cache, downloaded if missing and always checked by sha256."""
    debs = parse_lock(lock_path.read_text(), _rel(lock_path))
    store = CACHE / "debs"
    store.mkdir(parents=True, exist_ok=True)
    mirror = mirror_of(base)
    to_fetch = [deb for deb in debs if not ((store / deb.filename).exists()
                                        and sha256_file(store / deb.filename) == deb.sha256)]
    if to_fetch:
        check_mirror(mirror, base["suite"])
        _say(f"fetching {len(to_fetch)} of {len(debs)} .debs of {_rel(lock_path)} from {mirror}")

        def fetch(deb: Deb) -> tuple[bool, str] | None:
            """None when stored; else (is the version gone from the mirror?, what went wrong)."""
            part = store / f".{deb.filename}.{os.getpid()}.part"
            for attempt in range(4):  # a busy mirror or a DNS hiccup is not a missing version
                try:
                    with urllib.request.urlopen(f"{mirror}/{deb.path}", timeout=120) as response, \
                            open(part, "wb") as out:
                        shutil.copyfileobj(response, out, 1 << 20)
                    break
                except urllib.error.HTTPError as error:
                    part.unlink(missing_ok=True)
                    if error.code in (404, 410):
                        return True, f"HTTP {error.code}"
                    problem = f"HTTP {error.code}"
                except (urllib.error.URLError, OSError) as error:
                    part.unlink(missing_ok=True)
                    problem = str(error)
                time.sleep(2 ** attempt)
            else:
                return False, problem
            if sha256_file(part) != deb.sha256:
                part.unlink()
                return False, "its sha256 differs from the lock (a corrupt mirror or proxy?)"
            os.replace(part, store / deb.filename)
            return None

        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            problems = [(deb, problem) for deb, problem in zip(to_fetch, pool.map(fetch, to_fetch), strict=True)
                        if problem]
        gone = [(deb, reason) for deb, (missing, reason) in problems if missing]
        if gone:
            raise missing_versions_error(lock_path, gone, mirror)
        if problems:
            shown = "\n".join(f"  {mirror}/{deb.path}: {reason}" for deb, (_, reason) in problems[:10])
            raise ContainerError(f"could not download {len(problems)} .deb(s) of {_rel(lock_path)}:\n{shown}\n"
                                 "Check the network and run again (what was fetched is kept).")
    return [store / deb.filename for deb in debs]


def _pip() -> Path:
    """A pip of our own for downloading (the project's .venv has none)."""
    venv = CACHE / "tools" / "pip"
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
    store, built = CACHE / "wheels", CACHE / "wheels" / "built"
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
    _say(f"downloading {len(missing)} Python packages of {_rel(lock_path)} from PyPI")
    requirements = CACHE / "tools" / "requirements.txt"
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
        _write(requirements, _requirement_blocks(text, names))
        result = subprocess.run([*command, "-r", str(requirements)], capture_output=True, text=True)
        if result.returncode != 0:
            raise ContainerError(f"pip download for {_rel(lock_path)} failed:\n{result.stderr.strip()[-3000:]}\n"
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
                             f"pip download; refresh {_rel(lock_path)} with `{REFRESH}`")
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


# ---------------------------------------------------------------- building and running

def ensure_image(name: str) -> str:
    """The image's tag; builds the base, the parent and the image first when missing."""
    directory = image_dir(name)
    above = parent_of(name)
    below = ensure_image(above) if above else ensure_base()
    tag = image_tag(name, below, directory)
    if image_exists(tag):
        return tag
    with _exclusive(name):
        if not image_exists(tag):  # another process may have built it while we waited
            _build(name, directory, below, tag)
    return tag


# An image's one layer: its locked .debs and, for an image with a python.lock (the parent), a venv of
# its wheels, installed from /inputs (mounted read-only, so nothing is copied in and nothing is
# left behind). The variables make the files repeatable: SOURCE_DATE_EPOCH (dpkg's and useradd's
# dates, TeX's format dumps with FORCE_SOURCE_DATE, and hash-based .pyc in Python's byte-compiling) and
# a fixed string hashing, in Python (the order of a set in a .pyc follows it) and in Perl (TeX Live's
# scripts add to its file database, ls-R, in a hash's order, and which of two files of one name a TeX
# format is made from follows ls-R's order). The files removed are the ones that
# differ anyway (logs with times, ldconfig's cache of inode numbers, apt's binary caches with file
# times): those mmdebstrap removes from the base, and apt's.
INSTALL_ENV = ("export DEBIAN_FRONTEND=noninteractive SOURCE_DATE_EPOCH={epoch} FORCE_SOURCE_DATE=1 PYTHONHASHSEED=0 "
               "PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0")
# apt as root throughout: with its sandbox user (_apt), whether _apt may read the mounted .debs (the host
# folder's permissions) would decide what apt does to /var/cache/apt/archives/partial, hence the layer
INSTALL_DEBS = ("apt-get install --yes --no-install-recommends -o APT::Sandbox::User=root "
                "-o DPkg::Options::=--force-unsafe-io /inputs/debs/*.deb")
INSTALL_PYTHON = ("python3 -m venv /opt/venv && /opt/venv/bin/pip install --no-index "
                  "--find-links /inputs/python/wheels --require-hashes --no-deps --only-binary :all: "
                  "--no-cache-dir --disable-pip-version-check -r /inputs/python/python.lock")
# Java's trust store (ca-certificates-java, in cave's image) holds each certificate with the time it was
# added; no step has a network, so Java needs none, and it is removed.
CLEANUP = ("rm -f /var/log/dpkg.log /var/log/alternatives.log /var/log/apt/history.log /var/log/apt/term.log "
           "/var/log/apt/eipp.log.xz /var/cache/ldconfig/aux-cache /var/cache/apt/*.bin")


def install_script(directory: Path, finish: str = "") -> str:
    """What the image's layer runs (without the date, which the base tag already keys): its installs,
    then its entry's `finish` (configs/containers.yaml: what an image's packages leave that is not
    repeatable), then the cleanup every image gets."""
    lock = directory / "packages.lock"
    steps = [*([INSTALL_DEBS] if lock.exists() and parse_lock(lock.read_text(), _rel(lock)) else []),
             *([INSTALL_PYTHON] if (directory / "python.lock").exists() else []), *([finish] if finish else []),
             CLEANUP]
    return " && ".join(steps)


def _build(name: str, directory: Path, below: str, tag: str) -> None:
    started = time.monotonic()
    base = settings()["base"]
    python_lock = directory / "python.lock"
    if python_lock.exists() and python_lock.read_text() != python_lock_text():
        raise ContainerError(f"{_rel(python_lock)} differs from uv.lock; refresh it with `{REFRESH}`")
    with _exclusive("inputs"):  # images share the .deb and wheel stores
        debs = fetch_debs(directory / "packages.lock", base)
        wheels = fetch_wheels(python_lock) if python_lock.exists() else {}
    entry = _image_entry(name)
    if not debs and not wheels and not any(entry[key] for key in ("env", "workdir", "finish")):  # all is below
        _say(f"{tag}: {below} has every package of containers/{name}")
        docker("tag", below, tag)
        return
    log = CACHE / "logs" / f"{name}.build.log"
    _say(f"building {tag} on {below} (log {_rel(log)})")
    with _work(name) as work:
        inputs = work / "inputs"  # debs/ and python/ (python.lock and its wheels), linked from the stores
        (inputs / "debs").mkdir(parents=True)
        for path in debs:
            _link(path, inputs / "debs" / path.name)
        if wheels:
            (inputs / "python" / "wheels").mkdir(parents=True)
            (inputs / "python" / "python.lock").write_text(staged_python_lock(python_lock.read_text(), wheels))
            for path in wheels.values():
                _link(path, inputs / "python" / "wheels" / path.name)
        epoch = source_date_epoch()
        install = install_script(directory, entry["finish"])
        script = f"{INSTALL_ENV.format(epoch=epoch)} && {install}"
        container = f"ssd-artifact-build-{name}-{os.getpid()}"
        try:
            docker("run", "--name", container, "--network", "none", "--volume", f"{inputs}:/inputs:ro", below,
                   "sh", "-euc", script, log=log)
            committed = docker("commit", container)
        finally:
            subprocess.run(["docker", "rm", "--force", container], capture_output=True)
        installed = time.monotonic()
        try:
            layer, image = _top_layer(committed, below, work)
        finally:
            subprocess.run(["docker", "rmi", committed], capture_output=True)
        if layer is None:
            raise ContainerError(f"installing containers/{name} changed no file of {below}: give it packages "
                                 "of its own, or put its env and workdir on the image it extends")
        diff_id = normalize_layer(layer, work / "layer.tar", epoch)
        _load(tag, image.with_top(diff_id, f"{install} (containers/{name})", entry["env"], entry["workdir"]),
              {diff_id: work / "layer.tar"})
    _say(f"built {tag} in {time.monotonic() - started:.0f} s (installing {installed - started:.0f} s)")


def build_all(names: list[str]) -> list[tuple[str, str]]:
    """Each image's tag, building what is missing: the images that extend the same one side by side,
    as many at a time as the machine has cores (an install waits on dpkg's writes as much as on a core),
    each after the images it extends."""
    tags = {}
    depths = sorted({len(lineage(name)) for name in names})
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for depth in depths:
            level = [name for name in names if len(lineage(name)) == depth]
            tags.update(zip(level, pool.map(ensure_image, level), strict=True))
    return [(name, tags[name]) for name in names]


def _top_layer(committed: str, below: str, work: Path) -> tuple[Path | None, Config]:
    """The layer `docker commit` added on `below`, as a tar (None when the container changed no
    file: docker then adds no layer), and the committed image's config: read from `docker save`,
    which writes every layer of the image (those of `below` are dropped)."""
    known = set(json.loads(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", below)))
    saving = subprocess.Popen(["docker", "save", committed], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    layers, image = [], None
    with tarfile.open(fileobj=saving.stdout, mode="r|") as archive:
        for member in archive:
            if member.name.endswith("/layer.tar") and member.isreg():
                path = work / f"saved-{len(layers)}.tar"
                digest = hashlib.sha256()
                with archive.extractfile(member) as data, open(path, "wb") as out:
                    while chunk := data.read(1 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                if f"sha256:{digest.hexdigest()}" in known:
                    path.unlink()
                else:
                    layers.append(path)
            elif "/" not in member.name and member.name.endswith(".json") and member.name != "manifest.json":
                image = Config.of_commit(archive.extractfile(member).read(), source_date_epoch())
    error = saving.stderr.read().decode(errors="replace")
    if saving.wait() != 0 or image is None or len(layers) > 1:
        raise ContainerError(f"docker save {committed} gave {len(layers)} new layers, not 1 "
                             f"(its config {'found' if image else 'missing'}): {error.strip()[-2000:]}")
    return (layers[0] if layers else None), image


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)  # no copy: the cache and the context are on one file system
    except OSError:
        shutil.copy2(source, target)


def save(names: list[str], out_dir: str | Path) -> list[Path]:
    """docker save each image to out_dir/<name>.tar with a sha256 file beside it, and its tag and
    image ID (the digest of its config, the same from every build of the same locks) in
    out_dir/digests.txt."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written, digests = [], []
    for name in names:
        tag = ensure_image(name)
        tar, partial = out / f"{name}.tar", out / f".{name}.tar.part"
        _say(f"saving {tag} to {tar}")
        docker("save", "--output", str(partial), tag)
        partial.chmod(0o644)
        os.replace(partial, tar)
        _write(out / f"{name}.tar.sha256", f"{sha256_file(tar)}  {name}.tar\n")
        digests.append(f"{name} {tag} {image_id(tag)}\n")
        written.append(tar)
    _write(out / "digests.txt", "# image tag id (the sha256 of its config), by `make images-save`\n" + "".join(digests))
    return [*written, out / "digests.txt"]


def project_pythonpath(repo_root: Path) -> str:
    """The project's own packages (pyproject's wheel packages) on the mounted repository."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    packages = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return ":".join(dict.fromkeys(str(Path(repo_root) / Path(package).parent) for package in packages))


# The user a step runs as when the host user is root: Debian's nobody:nogroup. A step never runs as
# root, whoever starts it; what it wrote is given back to the host user afterwards (give_back).
NOBODY = (65534, 65534)


def step_user() -> tuple[int, int]:
    """uid:gid a step runs as: the host user's (so its outputs are the user's), or nobody for root."""
    return (os.getuid(), os.getgid()) if os.getuid() != 0 else NOBODY


def docker_run_command(tag: str, command: list[str], *, repo_root: str | Path, writable=(), devices=(),
                       cap_add=(), env: dict[str, str] | None = None, cpus: float | None = None,
                       memory_mb: int | None = None, labels: dict[str, str] | None = None) -> list[str]:
    """The `docker run` that runs a workflow step in an image, hardened (docs/containers.md, "Hardened runs").

    The repository is mounted read-only at its own absolute path (so every path is the same inside
    and outside), and `writable` (the step's declared outputs' folders, its scratch, the declared
    devices) writable on top; the root file system is read-only with a tmpfs at /tmp (HOME) for
    scratch; no network; every capability dropped but `cap_add`, and no-new-privileges, so nothing
    in the container gains more (a setuid program included); `cpus` and `memory_mb` its limits.
    The step runs as a non-root user (step_user). Capabilities do not survive a switch to a non-root
    user, and no-new-privileges forbids regaining them, so a step that needs some (FUSE's SYS_ADMIN;
    DAC_OVERRIDE, to write the root-owned folders of a root host user) starts as root with only those
    and SETUID/SETGID, and setpriv becomes the user at once, keeping exactly them as ambient
    capabilities. Never --privileged."""
    repo = Path(repo_root)
    mounts = [repo, *map(Path, writable)]
    for path in mounts:
        # `docker run -v` would silently create a missing host path (as root): refuse instead.
        if not path.is_absolute() or not path.exists() or ":" in str(path) or "," in str(path):
            raise ContainerError(f"cannot mount {path}: a declared path must be absolute, exist and have no ':' or ','")
    capabilities = [capability.upper() for capability in cap_add]
    if "ALL" in capabilities:  # as good as --privileged
        raise ContainerError("--cap-add ALL is refused: name the capabilities a step needs")
    uid, gid = step_user()
    if os.getuid() == 0:
        capabilities.append("DAC_OVERRIDE")
    capabilities = sorted(set(capabilities))
    run = ["docker", "run", "--rm", "--init", "--network", "none", "--cap-drop", "ALL",
           "--security-opt", "no-new-privileges", "--read-only", "--tmpfs", "/tmp:rw,exec,nosuid,nodev"]
    if capabilities:
        run += ["--user", "0:0", *(f"--cap-add={c}" for c in ["SETGID", "SETUID", *capabilities])]
        keep = "-all," + ",".join(f"+{c.lower()}" for c in capabilities)
        command = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", f"--inh-caps={keep}",
                   f"--ambient-caps={keep}", "--", *command]
    else:
        run += ["--user", f"{uid}:{gid}"]
    if cpus:
        run += ["--cpus", str(cpus)]
    if memory_mb:  # swap included: no more than that in memory and swap together
        run += ["--memory", f"{memory_mb}m", "--memory-swap", f"{memory_mb}m"]
    run += ["--mount", f"type=bind,source={repo},target={repo},readonly", "-w", str(repo)]
    for path in sorted(set(mounts[1:])):
        run += ["--mount", f"type=bind,source={path},target={path}"]
    for device in devices:
        run += ["--device", str(device)]
    for key, value in (labels or {}).items():
        run += ["--label", f"{key}={value}"]
    environment = {"HOME": "/tmp", "PYTHONPATH": project_pythonpath(repo), "PYTHONDONTWRITEBYTECODE": "1",
                   **(env or {})}
    for key, value in environment.items():
        run += ["-e", f"{key}={value}"]
    return [*run, tag, *command]


def give_back(paths) -> None:
    """What a step wrote as nobody (a root host user: step_user) under `paths`, given back to the
    host user, so that outputs belong to whoever ran the workflow; a no-op for any other user."""
    if step_user() == (os.getuid(), os.getgid()):
        return
    def give(path: str) -> None:
        with contextlib.suppress(FileNotFoundError):  # a sibling step's file, gone meanwhile
            if os.lstat(path).st_uid == NOBODY[0]:
                os.lchown(path, os.getuid(), os.getgid())

    for top in map(str, paths):
        give(top)
        for folder, subfolders, names in os.walk(top):
            # not into a mount (another step's emulated SSD, in use): what is written there is in its backing folder
            subfolders[:] = [name for name in subfolders if not os.path.ismount(os.path.join(folder, name))]
            for name in subfolders + names:
                give(os.path.join(folder, name))


# ---------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssdartifact.containers", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("base", help="build or find the base image; print its tag")
    sub = commands.add_parser("lock", help="re-resolve locks from the mirror (no names: base and every image)")
    sub.add_argument("names", nargs="*")
    sub = commands.add_parser("build", help="build missing images (no names: all)")
    sub.add_argument("names", nargs="*")
    sub = commands.add_parser("save", help="docker save images with sha256 files")
    sub.add_argument("names", nargs="*")
    sub.add_argument("--out", required=True)
    sub = commands.add_parser("id", help="print an image's id")
    sub.add_argument("name")
    sub = commands.add_parser("run", help="run a command in an image as the workflow does")
    sub.add_argument("name")
    sub.add_argument("--bind", action="append", default=[], help="a path it may write, mounted at the same path")
    sub.add_argument("--device", action="append", default=[])
    sub.add_argument("--cap-add", action="append", default=[])
    sub.add_argument("-e", "--env", action="append", default=[], help="KEY=VALUE")
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []  # what `run` runs in the image
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    try:
        everything = sorted(settings()["images"], key=lambda name: len(lineage(name)))  # parents first
        if args.command == "base":
            print(ensure_base())
        elif args.command == "lock":
            for name in args.names or ["base", *everything]:
                lock(name)
        elif args.command == "build":
            for name, tag in build_all(args.names or everything):
                print(name, tag)
        elif args.command == "save":
            for tar in save(args.names or everything, args.out):
                print(tar)
        elif args.command == "id":
            print(image_id(image_tag(args.name)))
        elif args.command == "run":
            env = dict(item.split("=", 1) for item in args.env)
            writable = [Path(path).resolve() for path in args.bind]
            run = docker_run_command(ensure_image(args.name), command or ["bash"], repo_root=REPO_ROOT,
                                     writable=writable, devices=args.device, cap_add=args.cap_add, env=env)
            try:
                return subprocess.run(run).returncode
            finally:
                give_back(writable)
    except (ContainerError, config.ConfigError) as error:
        print(f"containers: {error}", file=sys.stderr)
        return 2
    finally:
        if os.geteuid() == 0 and "SUDO_UID" in os.environ and CACHE.exists():  # under sudo: keep files the user's
            owner = f"{os.environ['SUDO_UID']}:{os.environ.get('SUDO_GID', os.environ['SUDO_UID'])}"
            subprocess.run(["chown", "-R", owner, str(CACHE), *map(str, CONTAINERS.glob("*/*.lock"))])
    return 0


if __name__ == "__main__":
    sys.exit(main())

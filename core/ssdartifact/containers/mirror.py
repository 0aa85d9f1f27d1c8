"""The Debian mirror: reach it, run apt on it with a configuration of our own (the host's is
neither read nor changed), resolve a package closure, and fetch the .debs a lock pins.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from ssdartifact.files import sha256_file

from . import ContainerError, cache, rel, say
from .catalog import mirror_of
from .lockfiles import Deb, deb_of, missing_versions_error, parse_lock, stanzas

ARCH = "amd64"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")


def check_mirror(mirror: str, suite: str) -> None:
    url = f"{mirror}/dists/{suite}/Release"
    try:
        with urllib.request.urlopen(url, timeout=30):
            pass
    except (urllib.error.URLError, OSError) as error:
        raise ContainerError(f"cannot reach the Debian mirror {mirror} ({url}: {error}); check the network, or set "
                             "base.mirror (or base.snapshot) in configs/containers.yaml to one you can reach") from None


def apt_env(base: dict, status: str, sources: bool = False) -> dict:
    """An environment for apt-get with its own config, sources, lists and status (the base's), so the
    host's apt configuration and state are neither used nor touched. With sources, the mirror's
    source packages too (`apt-get source`)."""
    mirror = mirror_of(base)
    state = cache.CACHE / "apt" / hashlib.sha256(mirror.encode()).hexdigest()[:12]
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


def resolve(wanted: list[str], status: str, base: dict) -> list[Deb]:
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
    records = {(p["Package"], p["Version"]): deb_of(p) for p in stanzas(shown.stdout)}
    return sorted(records[(n, v)] for n, v, _ in chosen)


def fetch_debs(lock_path: Path, base: dict) -> list[Path]:
    """Every .deb of a lock in the cache, downloaded if missing and always checked by sha256."""
    debs = parse_lock(lock_path.read_text(), rel(lock_path))
    store = cache.CACHE / "debs"
    store.mkdir(parents=True, exist_ok=True)
    mirror = mirror_of(base)
    to_fetch = [deb for deb in debs if not ((store / deb.filename).exists()
                                        and sha256_file(store / deb.filename) == deb.sha256)]
    if to_fetch:
        check_mirror(mirror, base["suite"])
        say(f"fetching {len(to_fetch)} of {len(debs)} .debs of {rel(lock_path)} from {mirror}")

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
            raise ContainerError(f"could not download {len(problems)} .deb(s) of {rel(lock_path)}:\n{shown}\n"
                                 "Check the network and run again (what was fetched is kept).")
    return [store / deb.filename for deb in debs]

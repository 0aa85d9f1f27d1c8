"""A workflow step's `docker run`, hardened (docs/containers.md, "Hardened runs"), and giving
what it wrote back to the host user.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from pathlib import Path

from ssdartifact import REPO_ROOT

from . import ContainerError


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
                       memory_mb: int | None = None, labels: dict[str, str] | None = None,
                       stdin: bool = False) -> list[str]:
    """The `docker run` that runs a workflow step in an image, hardened (docs/containers.md, "Hardened runs").

    The repository is mounted read-only at its own absolute path (so every path is the same inside
    and outside), and `writable` (the step's declared outputs' folders, its scratch, the declared
    devices) writable on top; the root file system is read-only with a tmpfs at /tmp (HOME) for
    scratch; no network; every capability dropped but `cap_add`, and no-new-privileges, so nothing
    in the container gains more (a setuid program included); `cpus` and `memory_mb` its limits;
    `stdin`: the command reads what is written to docker's standard input.
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
    run += ["--interactive"] if stdin else []
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

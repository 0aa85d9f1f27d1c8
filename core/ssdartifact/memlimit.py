"""A memory budget the kernel enforces on a child process, page cache included.

    with memlimit.MemoryCgroup(64 << 20, "graphchi-bfs") as group:
        subprocess.run(command, preexec_fn=group.join)
        usage = group.usage()   # peak bytes, times the limit was hit, processes killed for memory

A memory cgroup charges a process's page cache to it as well as its own memory, so a program that
leaves its data to the operating system's cache (GraphChi has no O_DIRECT) holds no more of a graph
than its budget: the kernel reclaims the group's cache at the limit, and kills the program when its
own memory alone exceeds it. cgroup v2 (memory.max, swap.max 0) and v1 (memory.limit_in_bytes and,
where the kernel accounts swap, memory.memsw.limit_in_bytes) are both handled; the group is a child
of this process's own memory group and is removed afterwards. Pages another group has cached are
not charged again: `evict` drops a file's cached pages before a measured run.

In a container (a step in docker mode) the memory hierarchy is mounted read-only: a process that
may mount (CAP_SYS_ADMIN, which the steps that mount an emulated SSD have) mounts a writable view
of it in a private folder of its own, once, and makes its groups there (`enforcement` says so).
On a cgroup v2 host that view is the container's own group, which holds the container's
processes, and v2 gives no controller to the children of a group with processes of its own: the
container's processes move into a leaf group first (`LEAF`), as docker-in-docker does. Outside a
container, on a cgroup v2 host (systemd's), this process's own group is a login session's or a
service's, which holds its processes: a group delegated to this user (systemd's Delegate=yes,
marked by the `trusted.delegate` or `user.delegate` attribute) has its processes moved into the
leaf as a container's are; otherwise (and where the group's own parent gives it no memory
controller to pass on), for root, the groups are made under a group of the artifact's own at the
top of the hierarchy (`TOP`, as Docker's cgroupfs driver makes `/docker`), and the session's
group is left as it is; anyone else is refused with what to do. Checked on a real cgroup v2 host
(Debian 12's kernel in a VM, 2026-11-28: docs/chapter-5-baselines.md, "Memory limits on a real cgroup v2 host").
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
LEAF = "ssd-artifact-processes"  # where a container's processes move on cgroup v2 (module notes)
TOP = "ssd-artifact"  # natively on cgroup v2, root's groups go under this top-level group (module notes)
_MOUNTED: dict[int, Path] = {}  # this process's own writable view of the hierarchy, by cgroup version


class LimitUnavailable(RuntimeError):
    """This machine cannot limit a process's memory (no memory cgroup we may create): why."""


@dataclass(frozen=True)
class Usage:
    peak_bytes: int | None  # None where the kernel does not report it (cgroup v2 before Linux 5.19)
    limit_hits: int         # times the group reached its limit (v1 failcnt, v2 memory.events max)
    oom_kills: int          # processes the kernel killed for memory (v2 oom_kill; v1: under_oom seen)


def _own_group(version: int) -> Path:
    """This process's group: the memory controller's line of /proc/self/cgroup (v1), or the "0::" one (v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if (version == 2 and number == "0") or (version == 1 and "memory" in controllers.split(",")):
            return Path(path.lstrip("/"))
    raise LimitUnavailable(f"this process is in no cgroup {'v2' if version == 2 else 'v1 memory'} group")


def _version() -> int:
    if (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():
        return 1
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return 2
    raise LimitUnavailable(f"no memory cgroup at {CGROUP_ROOT} (neither v1's memory controller nor cgroup v2)")


def _writable_parent(version: int) -> tuple[Path, bool]:
    """This process's own memory group, where a child group can be made, and whether this process
    mounted the view of the hierarchy it is in (a container's read-only one: see the module's notes)."""
    own = _own_group(version)
    if version == 2 and own.name == LEAF:  # moved there by this process's first group (LEAF)
        own = own.parent
    base = CGROUP_ROOT / "memory" if version == 1 else CGROUP_ROOT
    if (base / own).is_dir() and os.access(base / own, os.W_OK):
        return base / own, False
    if version not in _MOUNTED:
        folder = Path(tempfile.mkdtemp(prefix="ssd-artifact-cgroup-"))
        kind = ["-t", "cgroup", "-o", "memory"] if version == 1 else ["-t", "cgroup2"]
        mounted = subprocess.run(["mount", *kind, "none", str(folder)], capture_output=True, text=True)
        if mounted.returncode != 0:
            folder.rmdir()
            raise LimitUnavailable(f"{base / own} cannot be written and this process cannot mount a view of its own "
                                   f"({mounted.stderr.strip() or mounted.returncode}): the memory limit needs root, "
                                   "or a delegated cgroup, on a machine with memory cgroups (in a container: "
                                   "--cap-add SYS_ADMIN)")
        _MOUNTED[version] = folder
    parent = _MOUNTED[version] / own
    if not parent.is_dir():
        raise LimitUnavailable(f"this process's memory group {own} is not in the hierarchy it mounted at "
                               f"{_MOUNTED[version]} (a private cgroup namespace of another layout)")
    return parent, True


class MemoryCgroup:
    def __init__(self, limit_bytes: int, name: str):
        if not isinstance(limit_bytes, int) or limit_bytes < 1 << 20:
            raise ValueError(f"a memory limit must be at least 1 MiB, not {limit_bytes!r}")
        self.limit_bytes = limit_bytes
        self.version = _version()
        self.parent, self.mounted_here = _writable_parent(self.version)
        self.path = self.parent / f"ssd-artifact-{name}-{os.getpid()}-{time.monotonic_ns()}"

    @property
    def enforcement(self) -> str:
        """How the limit is enforced, for the provenance sidecar."""
        where = (" (the container's hierarchy, mounted writable by the step)" if self.mounted_here
                 else f" (under {self.parent}: this process's own group holds processes)" if self.parent.name == TOP
                 else "")
        if self.version == 1:
            swap = " and memory.memsw.limit_in_bytes" if self._v1_swap_accounted() else ""
            return f"cgroup v1 memory.limit_in_bytes{swap} = {self.limit_bytes} (page cache charged){where}"
        return f"cgroup v2 memory.max = {self.limit_bytes}, memory.swap.max = 0 (page cache charged){where}"

    def _v1_swap_accounted(self) -> bool:
        return (self.parent / "memory.memsw.limit_in_bytes").exists()

    def __enter__(self) -> MemoryCgroup:
        try:
            if self.version == 2:
                self._enable_v2_memory()
            self.path.mkdir()
            if self.version == 1:
                (self.path / "memory.limit_in_bytes").write_text(str(self.limit_bytes))
                if self._v1_swap_accounted():
                    (self.path / "memory.memsw.limit_in_bytes").write_text(str(self.limit_bytes))
            else:
                (self.path / "memory.max").write_text(str(self.limit_bytes))
                with contextlib.suppress(FileNotFoundError):  # no swap controller: no swap to limit
                    (self.path / "memory.swap.max").write_text("0")
        except OSError as error:
            self._remove()
            raise LimitUnavailable(f"cannot create a memory cgroup under {self.parent}: {error} (the memory limit "
                                   "needs root, or a delegated cgroup, on a machine with memory cgroups)") from None
        return self

    def _enable_v2_memory(self) -> None:
        control = self.parent / "cgroup.subtree_control"
        if "memory" in control.read_text().split():
            return
        try:
            _write(control, "+memory")
        except OSError as error:
            # EBUSY: the group holds processes itself (v2's no-internal-processes rule); ENOENT: its
            # own parent gives it no memory controller to pass on
            if error.errno not in (errno.EBUSY, errno.ENOENT):
                raise
            if error.errno == errno.EBUSY and (self.mounted_here or _delegated(self.parent)):
                self._move_processes_to_leaf()
                _write(control, "+memory")
            else:
                self._move_to_top(error)

    def _move_processes_to_leaf(self) -> None:
        leaf = self.parent / LEAF
        leaf.mkdir(exist_ok=True)
        for pid in (self.parent / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):  # one that ended meanwhile
                _write(leaf / "cgroup.procs", pid)

    def _move_to_top(self, busy: OSError) -> None:
        """Natively, a session's group with processes, or without a memory controller to pass on:
        the groups go under TOP instead (root only)."""
        top = CGROUP_ROOT / TOP
        try:
            if "memory" not in (CGROUP_ROOT / "cgroup.subtree_control").read_text().split():
                _write(CGROUP_ROOT / "cgroup.subtree_control", "+memory")  # the root may hold processes
            top.mkdir(exist_ok=True)
            if "memory" not in (top / "cgroup.subtree_control").read_text().split():
                _write(top / "cgroup.subtree_control", "+memory")
        except OSError as error:
            raise OSError(busy.errno, f"{busy.strerror}: this process's group {self.parent} holds processes or has "
                          f"no memory controller, so cgroup v2 gives its children none, and {top} cannot be used "
                          f"either ({error.strerror}); run as root, or in a delegated group (systemd-run --scope -p "
                          "Delegate=yes)") from None
        self.parent, self.path = top, top / self.path.name

    def join(self) -> None:
        """Move the calling process into the group (a child's preexec_fn: before it executes the program)."""
        with open(self.path / "cgroup.procs", "w") as procs:
            procs.write(str(os.getpid()))

    def usage(self) -> Usage:
        if self.version == 1:
            return Usage(peak_bytes=int((self.path / "memory.max_usage_in_bytes").read_text()),
                         limit_hits=max(int((self.path / name).read_text()) for name in ("memory.failcnt",
                                        "memory.memsw.failcnt") if (self.path / name).exists()),
                         oom_kills=_field(self.path / "memory.oom_control", "oom_kill"))
        peak = self.path / "memory.peak"
        return Usage(peak_bytes=int(peak.read_text()) if peak.exists() else None,
                     limit_hits=_field(self.path / "memory.events", "max"),
                     oom_kills=_field(self.path / "memory.events", "oom_kill"))

    def __exit__(self, *exc) -> None:
        self._remove()

    def _remove(self) -> None:
        """Kill what is left in the group and remove it (a group with processes cannot be removed)."""
        procs = self.path / "cgroup.procs"
        for _ in range(50):
            if not self.path.exists():
                return
            with contextlib.suppress(OSError, ValueError):
                for pid in procs.read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"could not remove the memory cgroup {self.path}")


def _delegated(group: Path) -> bool:
    """Whether systemd delegated the group to its owner (Delegate=yes: an extended attribute, systemd 251 and later)."""
    for name in ("trusted.delegate", "user.delegate"):
        with contextlib.suppress(OSError):
            if os.getxattr(group, name) == b"1":
                return True
    return False


def _write(path: Path, text: str) -> None:
    """One write to a cgroup file (the kernel answers each write: EBUSY, ESRCH)."""
    with open(path, "w") as handle:
        handle.write(text)


def _field(path: Path, name: str) -> int:
    """A counter of a flat keyed file (memory.events, memory.oom_control); 0 when absent."""
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0


def evict(paths) -> None:
    """Drop the files' pages from the page cache (written back first), so that a measured run reads
    them from the device and its memory group is charged for what it caches again."""
    for path in paths:
        path = Path(path)
        for file in (sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]):
            fd = os.open(file, os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)

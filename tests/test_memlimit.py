"""ssdartifact.memlimit: a child process in a memory cgroup is held to its limit, page cache
included, and one that needs more is killed and reported; the group is removed afterwards."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ssdartifact import memlimit


@pytest.fixture
def limited():
    def group(limit_bytes: int) -> memlimit.MemoryCgroup:
        try:
            with memlimit.MemoryCgroup(limit_bytes, "probe"):
                pass
        except memlimit.LimitUnavailable as missing:
            pytest.skip(str(missing))
        return memlimit.MemoryCgroup(limit_bytes, "test")
    return group


def test_a_limit_below_one_mib_is_refused():
    with pytest.raises(ValueError, match="at least 1 MiB"):
        memlimit.MemoryCgroup(4096, "tiny")


def test_a_process_over_its_limit_is_killed_and_counted(limited):
    with limited(32 << 20) as group:
        result = subprocess.run([sys.executable, "-c", "x = bytearray(128 << 20)"], preexec_fn=group.join)
        usage = group.usage()
        path = group.path
    assert result.returncode == -9 and usage.oom_kills >= 1
    assert usage.peak_bytes is None or usage.peak_bytes <= 32 << 20
    assert not path.exists()


def test_the_page_cache_a_process_fills_is_held_to_its_limit(limited, tmp_path):
    big = tmp_path / "big.bin"
    big.write_bytes(b"\1" * (96 << 20))
    memlimit.evict([tmp_path])
    with limited(32 << 20) as group:
        result = subprocess.run(["sh", "-c", f"cat {big} {big} > /dev/null"], preexec_fn=group.join)
        usage = group.usage()
    assert result.returncode == 0  # a cache is reclaimed at the limit, not a reason to kill
    assert usage.oom_kills == 0 and (usage.peak_bytes is None or usage.peak_bytes <= 32 << 20)
    assert usage.peak_bytes is None or usage.peak_bytes > 16 << 20  # the cache was charged to the group


def test_counters_are_read_from_flat_keyed_files(tmp_path):
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    assert memlimit._field(tmp_path / "memory.events", "max") == 7
    assert memlimit._field(tmp_path / "memory.events", "oom_kill") == 1
    assert memlimit._field(tmp_path / "absent", "max") == 0


PROBE = """
import subprocess, sys
from ssdartifact import memlimit
try:
    with memlimit.MemoryCgroup(32 << 20, "docker-probe") as group:
        killed = subprocess.run([sys.executable, "-c", "x = bytearray(128 << 20)"], preexec_fn=group.join)
        usage = group.usage()
    print(killed.returncode, usage.oom_kills, group.enforcement)
except memlimit.LimitUnavailable as missing:
    print("unavailable:", missing)
"""


@pytest.mark.e2e
@pytest.mark.docker
def test_in_a_container_a_step_that_may_mount_holds_a_process_to_its_limit():
    """A step in docker mode sees the memory hierarchy read-only: with CAP_SYS_ADMIN (the steps that
    mount an emulated SSD have it) it mounts a view of its own and the limit holds; without, it says
    what is missing."""
    from ssdartifact import REPO_ROOT
    from ssdartifact.containers.build import ensure_image
    from ssdartifact.containers.hardened import docker_run_command

    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("`docker info` failed: no Docker engine")
    tag = ensure_image("pio")
    outputs = []
    for capabilities in (["SYS_ADMIN"], []):
        run = docker_run_command(tag, ["python", "-c", PROBE], repo_root=REPO_ROOT, cap_add=capabilities)
        outputs.append(subprocess.run(run, capture_output=True, text=True, check=True).stdout)
    returncode, kills, enforcement = outputs[0].split(" ", 2)
    assert (returncode, int(kills) >= 1) == ("-9", True), outputs[0]
    assert "the container's hierarchy, mounted writable by the step" in enforcement
    assert outputs[1].startswith("unavailable:") and "--cap-add SYS_ADMIN" in outputs[1]


class FakeV2:
    """A cgroup v2 directory tree that answers writes as the kernel does where it matters here: a
    group holding processes refuses to give its children a controller (EBUSY; the root is exempt),
    a pid written to a group's cgroup.procs leaves the group it was in, and a writer without the
    right gets EACCES where `denied` says, and a group whose parent gives it no memory controller
    (`without_memory`) cannot give one to its children (ENOENT)."""

    def __init__(self, root, group, pids, denied=(), without_memory=()):
        self.root, self.denied, self.without_memory = root, set(denied), set(without_memory)
        group.mkdir(parents=True, exist_ok=True)
        for each in (root, group):
            (each / "cgroup.subtree_control").write_text("")
            (each / "cgroup.procs").write_text("")
        (group / "cgroup.procs").write_text("\n".join(pids) + "\n")

    def write(self, path, text):
        import errno

        if path.parent in self.denied:
            raise PermissionError(errno.EACCES, "Permission denied")
        if path.name == "cgroup.subtree_control" and path.parent in self.without_memory:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        if (path.name == "cgroup.subtree_control" and path.parent != self.root
                and (path.parent / "cgroup.procs").read_text().split()):
            raise OSError(errno.EBUSY, "Device or resource busy")
        if path.name == "cgroup.procs":
            for holder in self.root.rglob("cgroup.procs"):
                holder.write_text("\n".join(p for p in holder.read_text().split() if p != text) + "\n")
            path.write_text(path.read_text() + text + "\n" if path.exists() else text + "\n")
            return
        path.write_text(text)


def _session(tmp_path, monkeypatch, in_container, delegated=False, denied=(), without_memory=()):
    """A v2 hierarchy at tmp_path/root whose group session.scope holds processes 1, 7 and 42."""
    root, session = tmp_path / "root", tmp_path / "root/user.slice/session.scope"
    fake = FakeV2(root, session, ["1", "7", "42"], denied=[root / d for d in denied],
                  without_memory=[root / d for d in without_memory])
    monkeypatch.setattr(memlimit, "CGROUP_ROOT", root)
    monkeypatch.setattr(memlimit, "_write", fake.write)
    monkeypatch.setattr(memlimit, "_version", lambda: 2)
    monkeypatch.setattr(memlimit, "_delegated", lambda group: delegated)
    monkeypatch.setattr(memlimit, "_writable_parent", lambda version: (session, in_container))
    # a group the kernel makes comes with its interface files
    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):
        real_mkdir(self, *args, **kwargs)
        for name in ("cgroup.subtree_control", "cgroup.procs"):
            if not (self / name).exists():
                (self / name).write_text("")
    monkeypatch.setattr(Path, "mkdir", mkdir)
    return root, session


@pytest.mark.parametrize("in_container, delegated", [(True, False), (False, True)])
def test_on_cgroup_v2_a_containers_or_delegated_groups_processes_move_to_a_leaf(tmp_path, monkeypatch,
                                                                                in_container, delegated):
    root, session = _session(tmp_path, monkeypatch, in_container, delegated)
    group = memlimit.MemoryCgroup(16 << 20, "leaf")
    group.__enter__()
    assert (session / "cgroup.procs").read_text().split() == []
    assert (session / memlimit.LEAF / "cgroup.procs").read_text().split() == ["1", "7", "42"]
    assert (session / "cgroup.subtree_control").read_text() == "+memory"
    assert group.path.parent == session and (group.path / "memory.max").read_text() == str(16 << 20)


def test_natively_on_cgroup_v2_a_sessions_group_stays_and_roots_groups_go_under_the_artifacts_own(
        tmp_path, monkeypatch):
    root, session = _session(tmp_path, monkeypatch, in_container=False)
    group = memlimit.MemoryCgroup(16 << 20, "top")
    group.__enter__()
    assert (session / "cgroup.procs").read_text().split() == ["1", "7", "42"]  # the session is left as it is
    assert not (session / memlimit.LEAF).exists()
    assert group.path.parent == root / memlimit.TOP and (group.path / "memory.max").read_text() == str(16 << 20)
    assert (root / "cgroup.subtree_control").read_text() == "+memory"
    assert (root / memlimit.TOP / "cgroup.subtree_control").read_text() == "+memory"
    assert f"under {root / memlimit.TOP}" in group.enforcement


@pytest.mark.parametrize("delegated", [False, True])
def test_on_cgroup_v2_a_group_without_a_memory_controller_to_pass_on_makes_roots_groups_at_the_top(
        tmp_path, monkeypatch, delegated):
    """Its parent did not pass the controller down (ENOENT), delegated or not: the top, for root."""
    root, session = _session(tmp_path, monkeypatch, in_container=False, delegated=delegated,
                             without_memory=["user.slice/session.scope"])
    group = memlimit.MemoryCgroup(16 << 20, "top")
    group.__enter__()
    assert (session / "cgroup.procs").read_text().split() == ["1", "7", "42"]
    assert group.path.parent == root / memlimit.TOP and (group.path / "memory.max").read_text() == str(16 << 20)


def test_natively_on_cgroup_v2_without_root_the_limit_is_refused_with_what_to_do(tmp_path, monkeypatch):
    root, session = _session(tmp_path, monkeypatch, in_container=False, denied=["."])
    with pytest.raises(memlimit.LimitUnavailable, match="run as root, or in a delegated group"):
        memlimit.MemoryCgroup(16 << 20, "refused").__enter__()
    assert (session / "cgroup.procs").read_text().split() == ["1", "7", "42"]


def test_a_later_group_is_made_beside_the_leaf_not_inside_it(tmp_path, monkeypatch):
    monkeypatch.setattr(memlimit, "CGROUP_ROOT", tmp_path / "read-only-view-absent")
    monkeypatch.setattr(memlimit, "_own_group", lambda version: Path(memlimit.LEAF))
    monkeypatch.setitem(memlimit._MOUNTED, 2, tmp_path)
    assert memlimit._writable_parent(2) == (tmp_path, True)

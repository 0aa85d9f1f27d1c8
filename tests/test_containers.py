"""Container images (ssdartifact.containers, imagearchive): keys, locks, layers written byte for byte,
the docker run command, clear errors; and, marked e2e, building the images, running their tools
inside them, and building one twice from nothing to the same image ID."""

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import threading
import time
from pathlib import Path

import pytest

from ssdartifact import REPO_ROOT, config, imagearchive
from ssdartifact.containers import ContainerError, build, cache, catalog, engine, hardened, lockfiles, mirror, relock
from ssdartifact.containers import wheels
from ssdartifact.containers import base as base_image
from ssdartifact.containers.lockfiles import Deb

SHA = "ab" * 32
LOCK = f"""# resolved: 20250101T000000Z
# mirror: http://deb.debian.org/debian bookworm main
fio=3.33-3 amd64 {SHA} pool/main/f/fio/fio_3.33-3_amd64.deb
git=1:2.39.5-0+deb12u3 amd64 {"cd" * 32} pool/main/g/git/git_2.39.5-0+deb12u3_amd64.deb
"""


@pytest.fixture
def image(tmp_path):
    """A copy of containers/pio to edit."""
    return Path(shutil.copytree(REPO_ROOT / "containers/pio", tmp_path / "pio"))


# ---------------------------------------------------------------- keys

def test_image_tag_is_stable_and_has_the_documented_form(image):
    tag = build.image_tag("pio", "ssd-artifact/base:000000000000", image)
    assert tag.startswith("ssd-artifact/pio:") and len(tag.split(":")[1]) == 12
    os.utime(image / "packages.txt", (0, 0))  # a touch is not a change
    assert build.image_tag("pio", "ssd-artifact/base:000000000000", image) == tag


@pytest.mark.parametrize("change", ["packages.lock", "packages.txt", "python.lock", "new-file"])
def test_image_tag_changes_with_any_file_of_the_image(image, change):
    before = build.image_tag("pio", "b", image)
    with open(image / change, "a") as handle:
        handle.write("\n# changed\n")
    assert build.image_tag("pio", "b", image) != before


def test_image_tag_changes_with_the_parent_and_the_parent_with_the_base(image):
    assert build.image_tag("pio", "python:1", image) != build.image_tag("pio", "python:2", image)
    assert build.image_tag("pio").split(":")[1] == build.image_tag(
        "pio", build.image_tag("python")).split(":")[1]  # the shared parent's
    assert catalog.parent_of("pio") == "python" and catalog.parent_of("python") is None
    assert catalog.lineage("cave") == ["cave", "toolchain", "python"]


def test_only_the_parent_installs_the_python_environment(image):
    assert "pip install" in build.install_script(catalog.image_dir("python"))
    assert "pip install" not in build.install_script(image)
    assert "apt-get install" in build.install_script(image)


def test_an_images_finish_runs_after_its_installs_and_keys_its_tag(image, monkeypatch):
    finish = "rm -f /etc/ssl/certs/java/cacerts"
    script = build.install_script(image, finish)
    assert script.index("apt-get install") < script.index(finish) < script.index(build.CLEANUP)
    entries = {"pio": {"path": "containers/pio"}, "python": "containers/python"}
    monkeypatch.setattr(catalog, "settings", lambda: {"parent": "python", "images": entries})
    before = build.image_tag("pio", "b", image)
    entries["pio"]["finish"] = finish
    assert build.image_tag("pio", "b", image) != before


def test_build_all_builds_the_images_each_extends_first_and_siblings_side_by_side(monkeypatch):
    """`make images` on 2 cores: the images extending the same one are built two at a time."""
    parents = {"python": None, "report": "python", "toolchain": "python", "ace": "toolchain", "cave": "toolchain"}
    monkeypatch.setattr(catalog, "parent_of", parents.get)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    built = []
    # siblings meet while both are building (a barrier fails after 60 s if one waits for the other)
    meet = {"report": threading.Barrier(2, timeout=60), "ace": threading.Barrier(2, timeout=60)}
    meet.update(toolchain=meet["report"], cave=meet["ace"])

    def ensure(name):
        assert all(above in built for above in catalog.lineage(name)[1:]), f"{name} before what it extends"
        if name in meet:
            meet[name].wait()
        built.append(name)
        return f"tag/{name}"

    monkeypatch.setattr(build, "ensure_image", ensure)
    names = ["cave", "report", "python", "ace", "toolchain"]
    assert build.build_all(names) == [(name, f"tag/{name}") for name in names]
    assert built[0] == "python" and set(built[3:]) == {"ace", "cave"}


def test_base_tag_depends_on_the_locked_packages_and_their_date_only():
    base = {"source": "mmdebstrap", "suite": "bookworm", "mirror": "http://deb.debian.org/debian", "snapshot": None}
    tag = base_image.base_tag(base, LOCK)
    assert tag.startswith("ssd-artifact/base:")
    snapshot = {**base, "snapshot": "http://snapshot.debian.org/archive/debian/20250101T000000Z"}
    assert base_image.base_tag(snapshot, LOCK) == tag  # the same .debs from another mirror
    assert base_image.base_tag(base, LOCK.replace("fio=3.33-3 ", "fio=3.33-4 ")) != tag
    # the date is every file's SOURCE_DATE_EPOCH: another date, other bytes
    assert base_image.base_tag(base, LOCK.replace("20250101T000000Z", "20260101T000000Z")) != tag
    assert base_image.source_date_epoch(LOCK) == 1735689600  # 2025-01-01T00:00:00Z
    with pytest.raises(ContainerError, match="no `# resolved:` line"):
        base_image.source_date_epoch(LOCK.replace("# resolved: 20250101T000000Z\n", ""))


def test_registry_base_is_the_pinned_image():
    digest = "debian@sha256:" + "0" * 64
    assert base_image.base_tag({"source": "registry", "suite": "bookworm", "mirror": "http://x",
                                "registry_image": digest}) == digest


# ---------------------------------------------------------------- lock files

def test_lock_round_trip():
    debs = lockfiles.parse_lock(LOCK)
    assert debs[0] == Deb("fio", "3.33-3", "amd64", SHA, "pool/main/f/fio/fio_3.33-3_amd64.deb")
    assert debs[1].version == "1:2.39.5-0+deb12u3" and debs[1].filename == "git_2.39.5-0+deb12u3_amd64.deb"
    again = lockfiles.format_lock(debs, "test", "http://deb.debian.org/debian", "bookworm")
    assert lockfiles.parse_lock(again) == sorted(debs)


def test_a_bad_lock_line_names_the_file_and_the_refresh_command():
    with pytest.raises(ContainerError, match=r"x.lock:3: .*make images-lock"):
        lockfiles.parse_lock(LOCK.replace(SHA, "nothex"), "x.lock")


def test_write_lock_keeps_a_lock_that_pins_the_same_debs(tmp_path):
    path = tmp_path / "packages.lock"
    path.write_text(LOCK)
    assert not lockfiles.write_lock(path, lockfiles.parse_lock(LOCK), "t", "http://m", "bookworm")
    assert path.read_text() == LOCK  # its date, hence the image key, stays
    newer = [Deb("fio", "3.33-4", "amd64", SHA, "pool/main/f/fio/fio_3.33-4_amd64.deb")]
    assert lockfiles.write_lock(path, newer, "t", "http://m", "bookworm")
    assert lockfiles.parse_lock(path.read_text()) == newer


def test_missing_version_error_gives_the_refresh_command_and_the_snapshot(tmp_path):
    lock = tmp_path / "packages.lock"
    lock.write_text(LOCK)
    fio = lockfiles.parse_lock(LOCK)[0]
    message = str(lockfiles.missing_versions_error(lock, [(fio, "HTTP 404")], "http://deb.debian.org/debian"))
    assert "fio=3.33-3" in message and "HTTP 404" in message
    assert "make images-lock" in message
    assert "http://snapshot.debian.org/archive/debian/20250101T000000Z" in message


def _locked(directory: Path) -> set[str]:
    return {deb.name for deb in lockfiles.parse_lock((directory / "packages.lock").read_text())}


@pytest.mark.parametrize("name", sorted(config.load("containers.yaml")["images"]))
def test_committed_locks_cover_their_package_lists(name):
    """Editing packages.txt without `make images-lock` is caught here, not in a build. An image's
    lock holds what it adds: what the images it extends or the base have already is not in it."""
    below = {*_locked(catalog.BASE_DIR),
             *(deb for above in catalog.lineage(name)[1:] for deb in _locked(catalog.image_dir(above)))}
    locked = _locked(catalog.image_dir(name))
    wanted = set(relock.wanted_packages(catalog.image_dir(name) / "packages.txt"))
    assert wanted <= locked | below, f"not in packages.lock: {sorted(wanted - locked - below)}; run `make images-lock`"
    assert not locked & below, f"locked again above the parent: {sorted(locked & below)}; run `make images-lock`"


def test_the_one_python_lock_matches_uv_lock():
    """The parent holds the Python environment, so it alone has a python.lock."""
    holders = [name for name in config.load("containers.yaml")["images"]
               if (catalog.image_dir(name) / "python.lock").exists()]
    assert holders == [config.load("containers.yaml")["parent"]]
    path = catalog.image_dir(holders[0]) / "python.lock"
    assert path.read_text() == lockfiles.python_lock_text(), "python.lock is stale: run `make images-lock`"


def test_python_lock_parsing_markers_and_staged_hashes(monkeypatch):
    text = ("# header\nidna==3.20 \\\n    --hash=sha256:" + "1" * 64 + " \\\n    --hash=sha256:" + "2" * 64
            + "\n    # via requests\npywin32==311 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "3" * 64 + "\n")
    idna, pywin = lockfiles.parse_python_lock(text)
    assert (idna.name, idna.version, idna.applies, len(idna.hashes)) == ("idna", "3.20", True, 2)
    assert not pywin.applies  # the images are Linux: never fetched
    built = Path("/x/wheels/built/" + "1" * 64 + "/idna-3.20-py3-none-any.whl")
    monkeypatch.setattr(wheels, "sha256_file", lambda path: "9" * 64)  # the wheel built on the host
    staged = wheels.staged_python_lock(text, {idna: built})
    assert "--hash=sha256:" + "9" * 64 in staged
    assert lockfiles.parse_python_lock(staged)[0].hashes == idna.hashes | {"9" * 64}


# ---------------------------------------------------------------- layers and configs byte for byte

EPOCH = 1735689600  # 2025-01-01T00:00:00Z


def _layer(path: Path, mtime: int, owner: str) -> Path:
    """A small layer as `docker commit` gives one: build-time file times, owner names, a hard link,
    an extended attribute (a file capability), an atime record and a whiteout."""
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        def add(name, kind=tarfile.REGTYPE, data=b"", when=mtime, **fields):
            info = tarfile.TarInfo(name)
            info.type, info.size, info.mtime, info.uname, info.gname = kind, len(data), when, owner, owner
            for key, value in fields.items():
                setattr(info, key, value)
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        add("usr", tarfile.DIRTYPE, mode=0o755)
        add("usr/bin", tarfile.DIRTYPE, mode=0o755)
        add("usr/bin/ping", data=b"\x7fELF", mode=0o755, pax_headers={"SCHILY.xattr.security.capability": "cap",
                                                                      "atime": str(mtime + 5)})
        add("usr/bin/ping4", tarfile.LNKTYPE, linkname="usr/bin/ping")
        add("usr/share/old", data=b"from a .deb", when=EPOCH - 86400)  # older than the date: kept as it is
        add("var/.wh.gone")
    return path


def test_a_layer_is_written_the_same_whatever_its_build_times_and_owner_names(tmp_path):
    first = imagearchive.normalize_layer(_layer(tmp_path / "a.tar", EPOCH + 60, "root"), tmp_path / "a-out.tar", EPOCH)
    again = imagearchive.normalize_layer(_layer(tmp_path / "b.tar", EPOCH + 86400, ""), tmp_path / "b-out.tar", EPOCH)
    assert first == again and (tmp_path / "a-out.tar").read_bytes() == (tmp_path / "b-out.tar").read_bytes()
    assert first == "sha256:" + hashlib.sha256((tmp_path / "a-out.tar").read_bytes()).hexdigest()  # the diff ID
    with tarfile.open(tmp_path / "a-out.tar") as tar:
        members = {member.name: member for member in tar}
        assert list(members) == ["usr", "usr/bin", "usr/bin/ping", "usr/bin/ping4", "usr/share/old", "var/.wh.gone"]
        assert {m.mtime for name, m in members.items() if name != "usr/share/old"} == {EPOCH}
        assert members["usr/share/old"].mtime == EPOCH - 86400
        assert members["usr/bin/ping"].pax_headers == {"SCHILY.xattr.security.capability": "cap"}  # no atime
        assert members["usr/bin/ping4"].islnk() and members["usr/bin/ping4"].linkname == "usr/bin/ping"
        assert tar.extractfile("usr/bin/ping").read() == b"\x7fELF"
        assert {(m.uname, m.gname) for m in members.values()} == {("", "")}


def _commit_config(container: str, created: str) -> bytes:
    """A config as `docker commit` writes it: its dates, the container, the builder's version, the command."""
    return json.dumps({
        "architecture": "amd64", "os": "linux", "created": created, "container": container, "docker_version": "20.10",
        "config": {"Hostname": container[:12], "Env": ["PATH=/usr/bin", "LANG=C.UTF-8"], "Cmd": ["sh", "-euc", "x"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "1" * 64, "sha256:" + "2" * 64]},
        "history": [{"created": "2026-01-01T00:00:00Z", "created_by": "mmdebstrap"},
                    {"created": created, "created_by": "sh -euc x"}]}).encode()


def test_a_config_keeps_only_what_the_image_is_and_its_id_is_its_hash():
    def image(container, created):
        return imagearchive.Config.of_commit(_commit_config(container, created), EPOCH).with_top(
            "sha256:" + "3" * 64, "apt-get install", {"PATH": "/opt/venv/bin:/usr/bin", "A": "1"}, "/w")

    first, again = image("c0ffee" * 10, "2026-11-28T05:00:01.5Z"), image("beef" * 16, "2026-11-29T01:02:03Z")
    assert first.to_bytes() == again.to_bytes() and first.image_id == again.image_id
    assert first.image_id == "sha256:" + hashlib.sha256(first.to_bytes()).hexdigest()  # what docker calls its ID
    assert json.loads(first.to_bytes()) == {
        "architecture": "amd64", "os": "linux", "created": "2025-01-01T00:00:00Z",
        "config": {"Env": ["PATH=/opt/venv/bin:/usr/bin", "LANG=C.UTF-8", "A=1"], "Cmd": ["bash"], "WorkingDir": "/w"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "1" * 64, "sha256:" + "3" * 64]},
        "history": [{"created": "2025-01-01T00:00:00Z", "created_by": "mmdebstrap"},
                    {"created": "2025-01-01T00:00:00Z", "created_by": "apt-get install"}]}


def test_the_load_archive_sends_the_new_layers_only(tmp_path):
    layer = _layer(tmp_path / "layer.tar", EPOCH, "")
    config = imagearchive.Config(EPOCH, ["PATH=/usr/bin"], "", ["sha256:" + "1" * 64, "sha256:" + "2" * 64],
                                 ["base", "install"])
    out = io.BytesIO()
    imagearchive.write_archive(out, config, "ssd-artifact/x:1", {"sha256:" + "2" * 64: layer})
    with tarfile.open(fileobj=io.BytesIO(out.getvalue())) as archive:
        assert archive.getnames() == ["config.json", "manifest.json", "2" * 64 + "/layer.tar"]
        assert archive.extractfile("config.json").read() == config.to_bytes()
        assert json.loads(archive.extractfile("manifest.json").read()) == [
            {"Config": "config.json", "RepoTags": ["ssd-artifact/x:1"],
             "Layers": ["1" * 64 + "/layer.tar", "2" * 64 + "/layer.tar"]}]


# ---------------------------------------------------------------- docker run

def _as_host_user(monkeypatch, uid):
    monkeypatch.setattr(os, "getuid", lambda: uid)
    monkeypatch.setattr(os, "getgid", lambda: uid)


def _flags(command, flag):
    return [command[i + 1] for i, part in enumerate(command) if part == flag]


def test_docker_run_command_is_hardened_and_mounts_only_what_is_declared(tmp_path, monkeypatch):
    _as_host_user(monkeypatch, 1000)
    outputs = tmp_path / "results"
    outputs.mkdir()
    command = hardened.docker_run_command(
        "ssd-artifact/pio:0", ["fio", "--version"], repo_root=REPO_ROOT, writable=[outputs], cpus=2,
        memory_mb=3000, env={"A": "1"}, labels={"ssd-artifact.step": "x"})
    assert command[:3] == ["docker", "run", "--rm"]
    assert not any("privileged" in part for part in command)
    assert command[command.index("--user") + 1] == "1000:1000", "the host user's own ids: outputs stay theirs"
    assert command[command.index("--network") + 1] == "none"
    assert _flags(command, "--cap-drop") == ["ALL"] and not [p for p in command if p.startswith("--cap-add")]
    assert _flags(command, "--security-opt") == ["no-new-privileges"]
    assert "--read-only" in command and _flags(command, "--tmpfs") == ["/tmp:rw,exec,nosuid,nodev"]
    assert _flags(command, "--mount") == [f"type=bind,source={REPO_ROOT},target={REPO_ROOT},readonly",
                                          f"type=bind,source={outputs},target={outputs}"]
    assert "-v" not in command and command[command.index("-w") + 1] == str(REPO_ROOT)
    assert (_flags(command, "--cpus"), _flags(command, "--memory"), _flags(command, "--memory-swap")) == \
        (["2"], ["3000m"], ["3000m"])
    assert _flags(command, "--label") == ["ssd-artifact.step=x"]
    env = _flags(command, "-e")
    assert "HOME=/tmp" in env and "A=1" in env
    pythonpath = next(item for item in env if item.startswith("PYTHONPATH=")).split("=", 1)[1].split(":")
    assert f"{REPO_ROOT}/workflow" in pythonpath and f"{REPO_ROOT}/systems/pio" in pythonpath
    assert command[-3:] == ["ssd-artifact/pio:0", "fio", "--version"]


def test_a_step_that_needs_a_capability_becomes_the_user_keeping_only_it(monkeypatch):
    """FUSE's SYS_ADMIN: root with only that and what switching user needs, then setpriv to the user."""
    _as_host_user(monkeypatch, 1000)
    command = hardened.docker_run_command("t", ["emussd"], repo_root=REPO_ROOT, devices=["/dev/fuse"],
                                            cap_add=["SYS_ADMIN"])
    assert command[command.index("--user") + 1] == "0:0"
    assert [p for p in command if p.startswith("--cap-add")] == \
        ["--cap-add=SETGID", "--cap-add=SETUID", "--cap-add=SYS_ADMIN"]
    assert _flags(command, "--cap-drop") == ["ALL"] and _flags(command, "--security-opt") == ["no-new-privileges"]
    assert _flags(command, "--device") == ["/dev/fuse"]
    assert command[command.index("t") + 1:] == [
        "setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "--inh-caps=-all,+sys_admin",
        "--ambient-caps=-all,+sys_admin", "--", "emussd"]


def test_a_root_host_user_runs_steps_as_nobody_who_may_write_the_declared_paths(monkeypatch):
    _as_host_user(monkeypatch, 0)
    command = hardened.docker_run_command("t", ["true"], repo_root=REPO_ROOT)
    assert [p for p in command if p.startswith("--cap-add")] == \
        ["--cap-add=SETGID", "--cap-add=SETUID", "--cap-add=DAC_OVERRIDE"]
    assert command[command.index("t") + 1:command.index("t") + 3] == ["setpriv", "--reuid=65534"]
    assert "--ambient-caps=-all,+dac_override" in command


def test_what_nobody_wrote_is_given_back_to_a_root_host_user(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.csv").write_text("x")
    (tmp_path / "link").symlink_to("out/a.csv")
    me, group = os.getuid(), os.getgid()
    # this test's files stand for what the step's user wrote, and another user for the host's
    monkeypatch.setattr(hardened, "NOBODY", (me, group))
    monkeypatch.setattr(hardened, "step_user", lambda: (me, group))
    monkeypatch.setattr(os, "getuid", lambda: me + 1)
    given = []
    monkeypatch.setattr(os, "lchown", lambda path, uid, gid: given.append((path, uid, gid)))
    hardened.give_back([tmp_path])
    assert sorted(given) == sorted((str(path), me + 1, group) for path in
                                   [tmp_path, tmp_path / "out", tmp_path / "out" / "a.csv", tmp_path / "link"])
    given.clear()
    monkeypatch.setattr(hardened, "NOBODY", (me + 2, group))
    hardened.give_back([tmp_path])
    assert given == [], "only what the step's user wrote"


@pytest.mark.parametrize("path", ["relative/dir", "/does/not/exist"])
def test_docker_run_command_refuses_paths_docker_would_create(path):
    with pytest.raises(ContainerError, match="absolute, exist"):
        hardened.docker_run_command("t", ["true"], repo_root=REPO_ROOT, writable=[path])


def test_docker_run_command_refuses_all_capabilities():
    with pytest.raises(ContainerError, match="ALL is refused"):
        hardened.docker_run_command("t", ["true"], repo_root=REPO_ROOT, cap_add=["ALL"])


# ---------------------------------------------------------------- clear errors

def test_no_docker_says_what_to_do(monkeypatch):
    engine.check_docker.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    try:
        with pytest.raises(ContainerError, match="docker is not installed or its daemon is not running: .*"
                                                 "use runtime: native or start Docker"):
            engine.image_exists("anything")
    finally:
        engine.check_docker.cache_clear()


def test_no_mmdebstrap_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name, path=None: None)
    base = {"source": "mmdebstrap", "suite": "bookworm", "mirror": "http://deb.debian.org/debian"}
    with pytest.raises(ContainerError, match=r"mmdebstrap is not installed: run `make setup`"):
        base_image.bootstrap(base, tmp_path / "rootfs.tar", 0)


def test_unreachable_mirror_says_what_to_do():
    with pytest.raises(ContainerError, match=r"cannot reach the Debian mirror http://127\.0\.0\.1:9 .*base\.mirror"):
        mirror.check_mirror("http://127.0.0.1:9", "bookworm")


def test_unknown_image_lists_the_known_ones():
    with pytest.raises(ContainerError, match="known: .*pio"):
        catalog.image_dir("nonexistent")


# ---------------------------------------------------------------- end to end (Docker)

def _docker_works() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True).returncode == 0


needs_docker = pytest.mark.skipif(not _docker_works(), reason="`docker info` failed: no Docker engine to build in")


def _in_image(tag: str, *command: str) -> str:
    run = hardened.docker_run_command(tag, list(command), repo_root=REPO_ROOT)
    result = subprocess.run(run, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(run)}:\n{result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def _timed_build(name: str) -> str:
    started = time.monotonic()
    tag = build.ensure_image(name)
    print(f"\n{name}: {tag} ready in {time.monotonic() - started:.0f} s")
    return tag


@pytest.mark.e2e
@pytest.mark.slow_images
@pytest.mark.docker
@needs_docker
def test_the_parent_image_built_again_from_nothing_has_the_same_id(tmp_path, monkeypatch):
    """Bit-reproducible images. The parent is the cheapest image with both kinds of layer: the
    base's root file system from mmdebstrap, and an install run in a container (every system's
    image is one more of those). Built again from nothing (a new bootstrap, a new install, under
    other tags, from a cache holding only the fetched, hash-checked inputs, in a private folder:
    a build once depended on whether apt's sandbox user could read it), it has the first build's
    image ID."""
    first = engine.image_id(_timed_build("python"))
    tmp_path.chmod(0o700)
    private = tmp_path / "cache"
    private.mkdir()
    for inputs in ("debs", "wheels", "tools"):  # the .debs, wheels and the pip that fetched them
        # Absent when the first build found its image already there (an engine that kept it): the
        # build again fetches them into the project's cache, as the first build would have.
        (cache.CACHE / inputs).mkdir(parents=True, exist_ok=True)
        (private / inputs).symlink_to(cache.CACHE / inputs)
    monkeypatch.setattr(cache, "CACHE", private)
    monkeypatch.setattr(catalog, "REPOSITORY", "ssd-artifact-again")
    again = _timed_build("python")
    try:
        assert again.startswith("ssd-artifact-again/python:") and engine.image_id(again) == first
    finally:  # untags the images (the same, if the test passed), and removes them if they differ
        subprocess.run(["docker", "rmi", again, base_image.base_tag()], capture_output=True)


@pytest.mark.e2e
@pytest.mark.docker
@needs_docker
def test_pio_image_runs_fio_and_the_project_as_the_step_user_offline():
    tag = _timed_build("pio")
    assert _in_image(tag, "fio", "--version").startswith("fio-")
    out = _in_image(tag, "python", "-c", "import os, ssdartifact, pio, snakemake; print(os.getuid(), "
                    "ssdartifact.__file__)")
    uid, path = out.split()
    assert int(uid) == hardened.step_user()[0] != 0
    assert path.startswith(str(REPO_ROOT))  # the mounted repository's code
    assert "unreachable" in _in_image(tag, "python", "-c", "import socket\ntry:\n socket.create_connection("
                                      "('deb.debian.org', 80), 3)\nexcept OSError:\n print('unreachable')")


@pytest.mark.e2e
@pytest.mark.docker
@needs_docker
def test_report_image_has_r_ggplot2_and_latexmk():
    tag = _timed_build("report")
    _in_image(tag, "Rscript", "-e", "library(ggplot2)")
    assert "Latexmk" in _in_image(tag, "latexmk", "-v")
    assert "pdftotext" in _in_image(tag, "pdftotext", "-v")


@pytest.mark.e2e
@pytest.mark.docker
@needs_docker
def test_images_are_not_rebuilt_when_nothing_changed():
    build.ensure_image("pio")
    started = time.monotonic()
    build.ensure_image("pio")
    assert time.monotonic() - started < 10


def test_the_lab_image_finds_the_artifact_where_the_handouts_mount_it():
    lab = config.load("containers.yaml")["images"]["lab"]
    assert lab["env"]["PYTHONPATH"] == hardened.project_pythonpath(Path("/artifact"))
    assert lab["workdir"] == "/artifact"


@pytest.mark.e2e
@pytest.mark.slow_images
@pytest.mark.docker
@needs_docker
def test_a_student_grades_lab_4_in_the_lab_image_from_the_students_tarball(tmp_path):
    """The students' flow without Linux: the tarball unpacked, the lab image, the handouts' docker run
    line (as the host user, so that what it writes stays removable), a practice key."""
    from labkit import dist  # noqa: PLC0415

    tag = _timed_build("lab")
    with tarfile.open(dist.build(4, tmp_path / "lab-4.tar.gz")) as packed:
        packed.extractall(tmp_path)  # our own tarball
    student = tmp_path / "artifact-lab-4"
    (student / "practice.key").write_text("a practice key of at least 16 bytes\n")
    run = ["docker", "run", "--rm", "--user", f"{os.getuid()}:{os.getgid()}", "-e", "HOME=/tmp", "--network", "none",
           "-v", f"{student}:/artifact", tag, "python", "-m", "labkit.grade", "--lab", "4",
           "--submission", "labs/4-migration/starter", "--student", "me", "--key", "practice.key"]
    result = subprocess.run(run, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Total: 35/100" in result.stdout, result.stdout
    assert (student / "labs/build/grades/lab-4/me/results.json").is_file()

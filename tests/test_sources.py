"""Pinned external sources (ssdartifact.sources): a tarball is used only with its pinned sha256,
from GitHub when reachable, else from the local folder; anything else is refused and not kept."""

from __future__ import annotations

import io
import os
import tarfile
import urllib.error
from pathlib import Path

import pytest

from ssdartifact import config, sources
from ssdartifact.files import sha256_file

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def tarball(path: Path, top: str, text: str = "int main() {}\n") -> Path:
    data = text.encode()
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo(f"{top}/main.cc")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def pinned(tmp_path, monkeypatch):
    """A pin of a small tarball in a local folder, and no network."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / f"tool-{COMMIT}.tar.gz", f"tool-{COMMIT}")
    pin = sources.Pin(name="tool", repository="someone/tool", commit=COMMIT, sha256=sha256_file(good),
                      license="MIT")
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))

    def unreachable(url, timeout):
        raise urllib.error.URLError("Could not resolve host")
    monkeypatch.setattr(sources.urllib.request, "urlopen", unreachable)
    return pin, folder


def test_the_local_folder_serves_a_pinned_tarball_when_github_is_unreachable(pinned, tmp_path):
    pin, folder = pinned
    fetched = sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert fetched.name == pin.archive and sha256_file(fetched) == pin.sha256
    tree = sources.unpack("tool", fetched, tmp_path / "tree")
    assert (tree / "main.cc").read_text() == "int main() {}\n"


def test_a_tarball_with_another_sha256_is_refused_and_not_kept(pinned, tmp_path):
    pin, folder = pinned
    tarball(folder / pin.archive, pin.top_directory, "int main() { return 1; }\n")  # same name, other bytes
    with pytest.raises(sources.SourceError, match="not the pinned one: refused") as refused:
        sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert "Could not resolve host" in str(refused.value) and sources.SOURCES_ENV in str(refused.value)
    assert not any(path.is_file() for path in (tmp_path / "downloads").rglob("*"))


def test_a_missing_tarball_names_where_it_was_looked_for(pinned, tmp_path):
    pin, folder = pinned
    (folder / pin.archive).unlink()
    with pytest.raises(sources.SourceError, match=f"{folder / pin.archive}: no such file"):
        sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)


def test_github_is_used_first_and_checked_like_any_other(pinned, tmp_path, monkeypatch):
    pin, folder = pinned
    served = (folder / pin.archive).read_bytes()
    (folder / pin.archive).unlink()
    asked = []

    def github(url, timeout):
        asked.append(url)
        return io.BytesIO(served)
    monkeypatch.setattr(sources.urllib.request, "urlopen", github)
    fetched = sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)
    assert asked == [f"https://codeload.github.com/someone/tool/tar.gz/{COMMIT}"]
    assert sha256_file(fetched) == pin.sha256
    monkeypatch.setattr(sources.urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"not the archive"))
    fetched.unlink()
    (folder / pin.archive).write_bytes(served)  # GitHub's other bytes are refused; the local copy is taken
    assert sha256_file(sources.fetch("tool", tmp_path / "downloads", say=lambda _: None)) == pin.sha256


def test_a_tarball_without_its_top_folder_is_refused(pinned, tmp_path):
    pin, folder = pinned
    odd = tarball(tmp_path / "odd.tar.gz", "elsewhere")
    with pytest.raises(sources.SourceError, match=f"no top folder {pin.top_directory}/"):
        sources.unpack("tool", odd, tmp_path / "tree")


def test_the_shared_sources_match_their_pins():
    """The pins of repositories' commits in configs/sources.yaml are the tarballs of the shared
    sources folder (CI has it; GitHub is not reachable from it). A release's (Spark's, from PyPI,
    which is) need not be there."""
    folder = sources.local_folder()
    if not folder.is_dir() and not os.environ.get(sources.SOURCES_ENV):
        pytest.skip(f"no local sources folder at {folder}")
    for name in config.load("sources.yaml")["systems"]:
        pin = sources.pin(name)
        if pin.commit or (folder / pin.archive).exists():
            assert sha256_file(folder / pin.archive) == pin.sha256, name


def test_an_unknown_system_is_named():
    with pytest.raises(sources.SourceError, match="pins no source named 'nothing'.*graphchi"):
        sources.pin("nothing")


def test_where_a_source_would_come_from_is_found_without_fetching_it(pinned, tmp_path):
    pin, folder = pinned
    downloads = tmp_path / "downloads"
    assert sources.where_from("tool", downloads) == (str(folder / pin.archive), "")
    (folder / pin.archive).write_bytes(b"other bytes")
    found, why = sources.where_from("tool", downloads)
    assert found is None and "another sha256" in why and "Could not resolve host" in why and not downloads.exists()


def test_a_profile_whose_baselines_have_no_source_is_refused_before_anything_runs(pinned, tmp_path, monkeypatch):
    from steps import cave

    monkeypatch.setattr(cave.baseline_build, "build_dir", lambda system: tmp_path / "build" / system)
    monkeypatch.setattr(cave.sources, "where_from", lambda system, downloads: (None, f"no source of {system}"))
    profile = {"cave": {"graph_size": "tiny", "repetitions": 1, "figures": {"fig_5_1b": {"devices": ["emu-pcie"]}}}}
    assert cave.missing_baseline_sources(profile) == ["no source of graphchi", "no source of gridgraph",
                                                      "no source of mosaic"]
    (tmp_path / "build" / "graphchi").mkdir(parents=True)
    (tmp_path / "build" / "graphchi" / "built.json").write_text("{}")  # built already: no source needed
    assert cave.missing_baseline_sources(profile) == ["no source of gridgraph", "no source of mosaic"]
    assert cave.missing_baseline_sources({"cave": {"graph_size": "tiny", "repetitions": 1, "figures": {}}}) == []


def test_a_release_tarball_is_pinned_by_its_address_and_top_folder(tmp_path, monkeypatch):
    """Spark's release for Python (GraphX) comes from PyPI's address, not from a GitHub commit."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / "tool-1.0.tar.gz", "tool-1.0")
    pin = sources.Pin(name="tool", release_url="https://example.org/files/tool-1.0.tar.gz", top_folder="tool-1.0",
                      sha256=sha256_file(good), license="MIT")
    assert (pin.archive, pin.url, pin.what) == ("tool-1.0.tar.gz", "https://example.org/files/tool-1.0.tar.gz",
                                                "tool-1.0.tar.gz")
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))
    tree = sources.unpack("tool", sources.fetch("tool", tmp_path / "downloads", say=lambda _: None), tmp_path / "t")
    assert tree.name == "tool-1.0" and (tree / "main.cc").is_file()


@pytest.mark.parametrize("entry", [
    {"repository": "a/b", "commit": COMMIT, "release_url": "https://x.org/a.tar.gz", "top_folder": "a"},  # both
    {"repository": "a/b"},                                     # a repository without its commit
    {"release_url": "https://x.org/a.tar.gz"},                 # a release without its top folder
])
def test_a_pin_is_a_commit_or_a_release_whole(entry):
    document = {"local_folder": "sources",
                "systems": {"tool": {**entry, "sha256": "0" * 64, "license": "MIT"}}}
    with pytest.raises(config.ConfigError):
        config.validate(document, config.schema_name_for("sources.yaml"), "configs/sources.yaml")


def test_a_part_of_a_commits_tree_comes_from_the_local_folder_only(tmp_path, monkeypatch):
    """The authors' ReStore code is a tarball of part of its commit's tree: no server offers it."""
    folder = tmp_path / "sources"
    folder.mkdir()
    good = tarball(folder / f"tool-{COMMIT}-cpp.tar.gz", f"tool-{COMMIT}")
    pin = sources.Pin(name="tool", repository="someone/tool", commit=COMMIT, archive_name=good.name,
                      sha256=sha256_file(good), license="none stated")
    assert (pin.archive, pin.url) == (good.name, None)
    monkeypatch.setattr(sources, "pin", lambda name: pin)
    monkeypatch.setenv(sources.SOURCES_ENV, str(folder))

    def no_download(*args, **kwargs):
        raise AssertionError("a part of a tree is never downloaded")
    monkeypatch.setattr(sources.urllib.request, "urlopen", no_download)
    assert sources.where_from("tool", tmp_path / "downloads") == (str(good), "")
    assert sources.fetch("tool", tmp_path / "downloads", say=lambda _: None).name == good.name
    good.unlink()
    found, why = sources.where_from("tool", tmp_path / "downloads2")
    assert found is None and "no such file" in why

"""No file of the repository points into the project's working notes or elsewhere outside the
repository: comments and documents cite the thesis by line (T1991, L1991, [T:1225-1238]), the
repository's own documents by name, and other publications by title and author."""

import re
import subprocess

from ssdartifact import REPO_ROOT

# spec/ace.md, spec ace.md, spec `cave.md`, spec §4, spec: §1.2, ../shared, /work/shared, seeds/000
OUTSIDE = re.compile(r"\bspec/[\w.-]*\.md|\bspec\s+`?[\w-]+\.md|\bspec:?\s*§|\.\./shared\b|/work/shared\b"
                     r"|\bseeds/\d{3}", re.IGNORECASE)
THIS_FILE = "tests/test_no_outside_references.py"
# Files that may name a folder outside the repository, and why: not a citation but a setting.
SETTINGS = {".ci/run": "CI's machine keeps the pinned sources' tarballs beside the clone (SSD_SOURCES)"}


def repository_files() -> list[str]:
    """Tracked files and new ones not ignored (they are about to be tracked), that exist."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    return sorted({name for name in listed if name and (REPO_ROOT / name).is_file()})


def outside_references(name: str) -> list[str]:
    data = (REPO_ROOT / name).read_bytes()
    if b"\0" in data:
        return []  # binary
    text = data.decode("utf-8", errors="replace")
    return [f"{name}:{number}: {match.group(0)}"
            for number, line in enumerate(text.splitlines(), 1) for match in OUTSIDE.finditer(line)]


def test_the_pattern_finds_each_form():
    for text in ("see spec/pio.md Section 7.3", "(spec ace.md §12.10)", "spec `cave.md` §1.1", "(spec §9)",
                 "Spec §7 claims", "(spec: `../../../shared/spec/restore.md`)", "/work/shared/seeds/000_x.txt",
                 "(seeds/000, line thesis_line)"):
        assert OUTSIDE.search(text), text
    for text in ("graph spec: {name, generator}", "the spec of one generated graph", "thesis §5.5 [T:1225-1238]",
                 "labs/labkit/seeds.py", "configs/schemas/claims.schema.yaml", "specification revision 5.11"):
        assert not OUTSIDE.search(text), text


def test_no_file_refers_outside_the_repository():
    files = [name for name in repository_files() if name != THIS_FILE and name not in SETTINGS]
    assert len(files) > 100
    found = [hit for name in files for hit in outside_references(name)]
    assert not found, ("references outside the repository (cite the thesis by line instead):\n"
                       + "\n".join(found))

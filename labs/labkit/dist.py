"""The students' copy of the artifact for one lab (`make lab-dist LAB=<n>`): every file git
tracks (as it is in the working tree) but the labs' solutions and their graders' tests, in a tar.gz
with fixed owners and times (the same files give the same bytes). The artifact's own CI
(.github/) stays out; the lab's GitHub Classroom autograding goes in its place
(.github/workflows/classroom.yml, labkit.classroom). No key goes in it: *.key files
are ignored and left out, and with the instructor's key at hand (KEY=<file> or $LAB_SECRET_KEY)
every packed file is searched for it and the tarball refused if one holds it."""

from __future__ import annotations

import argparse
import gzip
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

from . import classroom, seeds
from .grade import LABS_DIR, CannotGrade, lab_dir

REPO_ROOT = LABS_DIR.parent
WITHHELD = ("solution", "tests")  # folders of every lab the students do not get


def withheld(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (len(parts) >= 3 and parts[0] == "labs" and parts[2] in WITHHELD) or path.endswith(".key") \
        or parts[0] == ".github"


def _git_files(root: Path, *which: str) -> list[str]:
    listed = subprocess.run(["git", "ls-files", "-z", *which], cwd=root, capture_output=True, check=True).stdout
    return [path for path in listed.decode().split("\0") if path]


def members(root: Path = REPO_ROOT) -> list[str]:
    """Tracked files only: a folder of collected submissions or notes left in the working tree
    must not reach the students (untracked() lists what is left out)."""
    return sorted(path for path in _git_files(root, "--cached") if not withheld(path))


def untracked(root: Path = REPO_ROOT) -> list[str]:
    return sorted(path for path in _git_files(root, "--others", "--exclude-standard") if not withheld(path))


def build(lab: int, out: Path, root: Path = REPO_ROOT, key: bytes | None = None) -> Path:
    lab_dir(lab)  # refuse a lab that does not exist
    prefix = f"artifact-lab-{lab}"
    buffer = io.BytesIO()
    files = {path: root / path for path in members(root) if (root / path).is_file()}  # not deleted since
    files[".github/workflows/classroom.yml"] = classroom.workflow(lab).encode()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path in sorted(files):
            source = files[path]
            data = source if isinstance(source, bytes) else source.read_bytes()
            info = tarfile.TarInfo(f"{prefix}/{path}")
            info.size = len(data)
            info.mode = 0o755 if not isinstance(source, bytes) and source.stat().st_mode & 0o111 else 0o644
            if key and key in data:
                raise CannotGrade(f"{path} holds the instructor's key: move the key out of the repository")
            archive.addfile(info, io.BytesIO(data))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as handle, gzip.GzipFile(fileobj=handle, mode="wb", mtime=0, filename="") as packed:
        packed.write(buffer.getvalue())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.dist", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lab", type=int, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--key", type=Path, help=f"the instructor's key file (else ${seeds.KEY_ENV}, if set), "
                                                 "searched for in every packed file")
    args = parser.parse_args(argv)
    try:
        key = seeds.load_key(args.key) if args.key or os.environ.get(seeds.KEY_ENV) else None
        out = build(args.lab, args.out or LABS_DIR / "build" / "dist" / f"artifact-lab-{args.lab}.tar.gz", key=key)
    except (CannotGrade, seeds.SecretKeyError) as error:
        print(f"lab-dist: {error}", file=sys.stderr)
        return 2
    print(f"lab-dist: {out} (the artifact without the labs' solutions and graders' tests)")
    left_out = untracked()
    if left_out:
        print(f"lab-dist: {len(left_out)} files git does not track were left out (`git add` one to include it): "
              + ", ".join(left_out[:5]) + (" ..." if len(left_out) > 5 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The images as tarballs for archiving (`make images-save`)."""

from __future__ import annotations

import os
from pathlib import Path

from ssdartifact.files import sha256_file

from . import say, write_readable
from .build import ensure_image
from .engine import docker, image_id


def save(names: list[str], out_dir: str | Path) -> list[Path]:
    """docker save each image to out_dir/<name>.tar with a sha256 file beside it, and its tag and
    image ID (the digest of its config, the same from every build of the same locks) in
    out_dir/digests.txt."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written, digests = [], []
    for name in names:
        tag = ensure_image(name)
        tar, partial = out / f"{name}.tar", out / f".{name}.tar.part"
        say(f"saving {tag} to {tar}")
        docker("save", "--output", str(partial), tag)
        partial.chmod(0o644)
        os.replace(partial, tar)
        write_readable(out / f"{name}.tar.sha256", f"{sha256_file(tar)}  {name}.tar\n")
        digests.append(f"{name} {tag} {image_id(tag)}\n")
        written.append(tar)
    header = "# image tag id (the sha256 of its config), by `make images-save`\n"
    write_readable(out / "digests.txt", header + "".join(digests))
    return [*written, out / "digests.txt"]

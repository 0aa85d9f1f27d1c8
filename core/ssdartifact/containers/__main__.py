"""The command line of the container images (`make images`, `images-lock`, `images-save`).

  python -m ssdartifact.containers base                 build (or find) the base, print its tag
  python -m ssdartifact.containers lock [NAME ...]      re-resolve the locks (no names: base and all images)
  python -m ssdartifact.containers build [NAME ...]     build what is missing, print name and tag
  python -m ssdartifact.containers save --out DIR [NAME ...]   DIR/<name>.tar, <name>.tar.sha256, digests.txt
  python -m ssdartifact.containers id NAME              print the image id (sha256:...)
  python -m ssdartifact.containers run NAME [--bind P] [--device D] [--cap-add C] [-e K=V] -- CMD ...
                                                        (hardened as a workflow step; --bind: a path it may write)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ssdartifact import REPO_ROOT, config

from . import ContainerError, cache
from .base import ensure_base
from .build import build_all, ensure_image, image_tag
from .catalog import CONTAINERS, lineage, settings
from .engine import image_id
from .hardened import docker_run_command, give_back
from .relock import lock
from .save import save


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssdartifact.containers", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("base", help="build or find the base image; print its tag")
    sub = commands.add_parser("lock", help="re-resolve locks from the mirror (no names: base and every image)")
    sub.add_argument("names", nargs="*")
    sub = commands.add_parser("build", help="build missing images (no names: all)")
    sub.add_argument("names", nargs="*")
    sub = commands.add_parser("save", help="docker save images with sha256 files")
    sub.add_argument("names", nargs="*")
    sub.add_argument("--out", required=True)
    sub = commands.add_parser("id", help="print an image's id")
    sub.add_argument("name")
    sub = commands.add_parser("run", help="run a command in an image as the workflow does")
    sub.add_argument("name")
    sub.add_argument("--bind", action="append", default=[], help="a path it may write, mounted at the same path")
    sub.add_argument("--device", action="append", default=[])
    sub.add_argument("--cap-add", action="append", default=[])
    sub.add_argument("-e", "--env", action="append", default=[], help="KEY=VALUE")
    argv = sys.argv[1:] if argv is None else argv
    command = argv[argv.index("--") + 1:] if "--" in argv else []  # what `run` runs in the image
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    try:
        everything = sorted(settings()["images"], key=lambda name: len(lineage(name)))  # parents first
        if args.command == "base":
            print(ensure_base())
        elif args.command == "lock":
            for name in args.names or ["base", *everything]:
                lock(name)
        elif args.command == "build":
            for name, tag in build_all(args.names or everything):
                print(name, tag)
        elif args.command == "save":
            for tar in save(args.names or everything, args.out):
                print(tar)
        elif args.command == "id":
            print(image_id(image_tag(args.name)))
        elif args.command == "run":
            env = dict(item.split("=", 1) for item in args.env)
            writable = [Path(path).resolve() for path in args.bind]
            run = docker_run_command(ensure_image(args.name), command or ["bash"], repo_root=REPO_ROOT,
                                     writable=writable, devices=args.device, cap_add=args.cap_add, env=env)
            try:
                return subprocess.run(run).returncode
            finally:
                give_back(writable)
    except (ContainerError, config.ConfigError) as error:
        print(f"containers: {error}", file=sys.stderr)
        return 2
    finally:
        if os.geteuid() == 0 and "SUDO_UID" in os.environ and cache.CACHE.exists():  # under sudo: keep files the user's
            owner = f"{os.environ['SUDO_UID']}:{os.environ.get('SUDO_GID', os.environ['SUDO_UID'])}"
            subprocess.run(["chown", "-R", owner, str(cache.CACHE), *map(str, CONTAINERS.glob("*/*.lock"))])
    return 0


if __name__ == "__main__":
    sys.exit(main())

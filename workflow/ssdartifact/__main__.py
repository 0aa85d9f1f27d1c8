"""Command line of the glue package, used by the Makefile (the rules call ssdartifact.steps).

  python -m ssdartifact check-config --profile quick
  python -m ssdartifact checksums write|verify MANIFEST --list FILES
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import checksums, config, devices


def _check_config(args: argparse.Namespace) -> int:
    try:
        config.check_all(args.profile)
    except config.ConfigError as error:
        print(f"Configuration error(s); nothing was run:\n{error}", file=sys.stderr)
        return 2
    print(f"configs: all files valid (profile {args.profile})")
    problems, notes = devices.check_emulation(config.load_profile(args.profile), progress=print)
    for note in notes:
        print(f"emulated {note}")
    if problems:
        print("Emulated device(s) this machine cannot emulate faithfully; nothing was run:\n" + "\n".join(problems),
              file=sys.stderr)
        return 2
    return 0


def _checksums(args: argparse.Namespace) -> int:
    manifest = Path(args.manifest)
    files = Path(args.list).read_text(encoding="utf-8").split()
    if args.action == "write":
        checksums.write_manifest(manifest, files)
        print(f"checksums: wrote {len(set(files))} entries to {manifest}")
        return 0
    if not manifest.exists():
        print(f"checksums: no manifest {manifest}; run `make checksums` to create it", file=sys.stderr)
        return 2
    problems = checksums.differences(manifest, files)
    for line in problems:
        print(f"verify: {line}", file=sys.stderr)
    if problems:
        print(f"verify: FAILED, {len(problems)} file(s) differ from {manifest}. A changed output is not "
              "rebuilt by itself: delete it (or `make clean`) and run `make verify` again to regenerate "
              "it from its inputs.", file=sys.stderr)
        return 1
    print(f"verify: OK, every file in {manifest} is byte-identical")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssdartifact", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sub = commands.add_parser("check-config", help="validate every file in configs/")
    sub.add_argument("--profile", default="quick")
    sub.set_defaults(run=_check_config)
    sub = commands.add_parser("checksums", help="write or verify a sha256 manifest")
    sub.add_argument("action", choices=["write", "verify"])
    sub.add_argument("manifest")
    sub.add_argument("--list", required=True, help="file listing the outputs, one path a line")
    sub.set_defaults(run=_checksums)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

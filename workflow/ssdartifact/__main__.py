"""Command line of the glue package, used by the Makefile and the workflow's rules.

  python -m ssdartifact check-config --profile quick
  python -m ssdartifact sidecar OUTPUT --produced-by SCRIPT --inputs FILE... [--started ISO]
  python -m ssdartifact claims --csv C --markdown M --html H
  python -m ssdartifact document --out-dir paper/generated --claims results/claims/claims.csv
  python -m ssdartifact checksums write|verify MANIFEST --list FILES
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import checksums, claims, config, paper, provenance


def _check_config(args: argparse.Namespace) -> int:
    try:
        config.check_all(args.profile)
    except config.ConfigError as error:
        print(f"Configuration error(s); nothing was run:\n{error}", file=sys.stderr)
        return 2
    print(f"configs: all files valid (profile {args.profile})")
    return 0


def _sidecar(args: argparse.Namespace) -> int:
    provenance.write_sidecar(args.output, produced_by=args.produced_by, inputs=args.inputs,
                             started=args.started or provenance.now())
    return 0


def _claims(args: argparse.Namespace) -> int:
    rows = claims.evaluate_all(config.load("claims.yaml")["claims"])
    claims.write_report(rows, Path(args.csv), Path(args.markdown), Path(args.html))
    print(f"claims: {claims.summary(rows)}; report: {args.markdown}")
    return 0


def _document(args: argparse.Namespace) -> int:
    paper.write_document(config.load("inventory.yaml"), Path(args.claims), Path(args.out_dir))
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
    sub = commands.add_parser("sidecar", help="write OUTPUT.json provenance for a finished output")
    sub.add_argument("output")
    sub.add_argument("--produced-by", required=True)
    sub.add_argument("--inputs", nargs="*", default=[])
    sub.add_argument("--started")
    sub.set_defaults(run=_sidecar)
    sub = commands.add_parser("claims", help="check every claim and write the report")
    sub.add_argument("--csv", required=True)
    sub.add_argument("--markdown", required=True)
    sub.add_argument("--html", required=True)
    sub.set_defaults(run=_claims)
    sub = commands.add_parser("document", help="write the generated LaTeX of the document")
    sub.add_argument("--out-dir", required=True)
    sub.add_argument("--claims", required=True)
    sub.set_defaults(run=_document)
    sub = commands.add_parser("checksums", help="write or verify a sha256 manifest")
    sub.add_argument("action", choices=["write", "verify"])
    sub.add_argument("manifest")
    sub.add_argument("--list", required=True, help="file listing the outputs, one path a line")
    sub.set_defaults(run=_checksums)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

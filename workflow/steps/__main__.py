"""The artifact's command line, used by the Makefile and inside a step's container:

  python -m steps check-config --profile quick
  python -m steps checksums write|verify|add MANIFEST --list FILES
  python -m steps checksums changed MANIFEST            (before verify builds: outputs changed since made)
  python -m steps run NAME '{"keyword": value, ...}'     (a step inside its image)
  python -m steps guide update --profile quick | check [--results .]   (docs/'s generated numbers)
  python -m steps plan --profile full [--nodes N]       (the jobs, their estimated hours, the critical path)
  python -m steps own declare --device DIR|/dev/X [--name N --destructive true ...] | own show   (make characterize)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from emussd import device as emulated
from ssdartifact import REPO_ROOT, checksums, config, preflight
from ssdartifact.guide import GuideError

from . import ace, cave, emussd, guide, pio, report, restore, runtime, tables  # noqa: F401 (each registers its steps)


def _check_config(args: argparse.Namespace) -> int:
    try:
        preflight.check(args.profile)
    except config.ConfigError as error:
        print(f"Configuration error(s); nothing was run:\n{error}", file=sys.stderr)
        return 2
    print(f"configs: all files valid (profile {args.profile})")
    profile_cave = config.load_profile(args.profile).get("cave", {})
    unreachable = cave.unreachable_baselines(profile_cave)
    if unreachable:
        _, not_run = cave.without_baselines(profile_cave, list(unreachable), args.profile)
        reason = next(iter(not_run.values()))
        print(f"Not run: {reason['why']}: {', '.join(Path(path).stem for path in not_run)} (the claims "
              "report and the document mark their figures and claims so); the rest runs.")
        print("\n".join(f"  {why}" for why in unreachable.values()))
        print(f"To run them: {reason['fix']}")
    restore.say_unreachable_original(config.load_profile(args.profile).get("restore", {}), args.profile)
    problems, notes = emulated.check_emulation(config.load_profile(args.profile), progress=print)
    for note in notes:
        print(f"emulated {note}")
    if problems:
        print("Emulated device(s) this machine cannot emulate faithfully; nothing was run:\n" + "\n".join(problems),
              file=sys.stderr)
        return 2
    return 0


def _checksums(args: argparse.Namespace) -> int:
    manifest = Path(args.manifest)
    if args.action == "changed":
        problems = checksums.changed_since_made(manifest)
        for line in problems:
            print(f"verify: {line}", file=sys.stderr)
        if problems:
            print(f"verify: FAILED before building anything: {len(problems)} file(s) changed since the run that "
                  "made them, and nothing was built from them. Restore each from a copy, or delete it and run "
                  "`make verify` again: it regenerates a deterministic output from its inputs (`make reproduce` a "
                  "measured one, from its raw files or by measuring again).", file=sys.stderr)
            return 1
        return 0
    if args.list is None:
        print(f"checksums {args.action}: --list FILES is required", file=sys.stderr)
        return 2
    files = Path(args.list).read_text(encoding="utf-8").split()
    if args.action == "write":
        checksums.write_manifest(manifest, files)
        print(f"checksums: wrote {len(set(files))} entries to {manifest}")
        return 0
    if args.action == "add":
        checksums.add_to_manifest(manifest, files)
        print(f"checksums: recorded {len(set(files))} entries in {manifest}, the others kept")
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
    made = ", ".join(f"{count} {runtime}" for runtime, count in sorted(checksums.made_by(files).items()))
    print(f"verify: OK, every file in {manifest} is byte-identical (made by: {made})")
    return 0


def _guide(args: argparse.Namespace) -> int:
    root = Path(args.results).resolve()
    if args.action == "update":
        try:
            changed = guide.update(args.profile, root)
        except GuideError as error:
            print(f"guide: {error}", file=sys.stderr)
            return 2
        print(f"guide: {args.profile}'s numbers from {root / 'results'}; "
              f"{len(changed)} page(s) changed: {', '.join(str(p.name) for p in changed) or 'none'}")
        return 0
    problems = guide.problems(root=root if args.results_given else None, profile=args.only)
    for line in problems:
        print(f"guide: {line}", file=sys.stderr)
    if problems:
        return 1
    print("guide: every generated number in docs/ is the one recorded in docs/numbers.json"
          + (f" and comes from the results in {root}" if args.results_given else ""))
    return 0


def _plan(args: argparse.Namespace) -> int:
    from . import plan  # noqa: PLC0415 (only this command needs the systems' plans and a dry run)
    try:
        print(plan.report(args.profile, args.nodes))
    except (plan.PlanError, config.ConfigError) as error:
        print(f"plan: {error}", file=sys.stderr)
        return 2
    return 0


def _own(args: argparse.Namespace) -> int:
    """make characterize: declare DEVICE (checked; nothing runs when refused), or show its alpha and k."""
    from . import own  # noqa: PLC0415 (only this command needs it)
    if args.action in ("show", "target"):
        name = config.local_devices()[0]["name"]
        print(own.summary(name) if args.action == "show" else own.results_of(name).relative_to(REPO_ROOT))
        return 0
    try:
        device = own.declaration(args.device, name=args.name, destructive=args.destructive, force=args.force,
                                 medium=args.medium, max_bytes=args.max_bytes)
    except (own.OwnDeviceError, config.ConfigError) as error:
        print(f"make characterize: refused; nothing was run or written:\n{error}", file=sys.stderr)
        return 2
    where = own.declare(device)
    shown = where.relative_to(REPO_ROOT) if where.is_relative_to(REPO_ROOT) else where
    print(f"characterize: declared {device['kind']} device {device['name']} ({device['path']}) in {shown}; "
          "the own profile runs on it")
    if device.get("mount_point"):  # what is measured: a forgotten mount would measure the disk under it
        print(f"characterize: {device['path']} is on the {device['file_system']} file system mounted at "
              f"{device['mount_point']}" + (" (the root file system: is your SSD mounted?)"
                                            if device["mount_point"] == "/" else ""))
    return 0


def _run(args: argparse.Namespace) -> int:
    runtime.run_registered(args.name, sys.stdin.read())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m steps", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sub = commands.add_parser("check-config", help="validate every file in configs/")
    sub.add_argument("--profile", default="quick")
    sub.set_defaults(run=_check_config)
    sub = commands.add_parser("checksums", help="write or verify a sha256 manifest; name outputs changed since made")
    sub.add_argument("action", choices=["write", "verify", "add", "changed"])
    sub.add_argument("manifest")
    sub.add_argument("--list", help="file listing the outputs, one path a line (not for `changed`)")
    sub.set_defaults(run=_checksums)
    sub = commands.add_parser("guide", help="docs/'s generated numbers: take them from a run, or check them")
    sub.add_argument("action", choices=["update", "check"])
    sub.add_argument("--profile", default="quick", help="update: whose numbers the results hold")
    sub.add_argument("--results", help="the folder holding results/ (default: the repository)")
    sub.add_argument("--only", metavar="PROFILE", help="check: only that profile's numbers")
    sub.set_defaults(run=_guide)
    sub = commands.add_parser("plan", help="the profile's jobs per device and node, estimated hours, critical path")
    sub.add_argument("--profile", default="full")
    sub.add_argument("--nodes", type=int, default=1, help="nodes the estimate spreads the work over")
    sub.set_defaults(run=_plan)
    sub = commands.add_parser("own", help="make characterize: declare your own device, or show its alpha and k")
    sub.add_argument("action", choices=["declare", "target", "show"])
    for option in ("device", "name", "destructive", "force", "medium", "max-bytes"):
        sub.add_argument(f"--{option}", default="")
    sub.set_defaults(run=_own)
    sub = commands.add_parser("run", help="run one step with keyword arguments given as JSON on standard input "
                              "(inside its image)")
    sub.add_argument("name")
    sub.set_defaults(run=_run)
    args = parser.parse_args(argv)
    if args.command == "guide":
        args.results_given = args.results is not None
        args.results = args.results or str(REPO_ROOT)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

"""GitHub Classroom's autograding for a lab: the workflow a student's repository runs on every push
(`.github/workflows/classroom.yml`, which `make lab-dist` puts in the students' tarball).

It grades the lab's starter folder (where the student works) once, in Debian 12 with FUSE (as the
artifact's own CI runs), then reports each of lab.yaml's tests to Classroom through its command
grader: full marks or none per test (Classroom's command grader has no partial credit; the
results.json it uploads has the exact scores). The key comes from the repository's or the
organisation's secret LAB_SECRET_KEY: give students a practice key there, since a student who can
edit the workflow can print a secret. Grade for the record with Gradescope or `make lab-grade-all`.

    python -m labkit.classroom --lab N [--out FILE]     # print or write the workflow"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .grade import CannotGrade, lab_dir, load_grader

CHECK = ("python3 -c 'import json, sys; t = json.load(open(\"results.json\"))[\"tests\"][int(sys.argv[1])]; "
         "print(t[\"output\"]); sys.exit(t[\"score\"] < t[\"max_score\"])' {index}")


def workflow(lab: int) -> str:
    directory = lab_dir(lab)
    config = load_grader(directory).load_config()
    submission = f"labs/{directory.name}/starter"
    steps, runners = [], []
    for index, (name, spec) in enumerate(config["tests"].items()):
        step = f"test-{index + 1}"
        runners.append(step)
        steps.append(f"""      - id: {step}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: {name}
          command: {CHECK.format(index=index)}
          timeout: 1
          max-score: {spec['points']}
""")
    results = "\n".join(f"          {step.upper()}_RESULTS: ${{{{ steps.{step}.outputs.result }}}}" for step in runners)
    return f"""# GitHub Classroom's autograding for lab {lab}, {config['title']} (written by `make lab-dist`;
# labs/README.md, "GitHub Classroom"). On every push: the grader on {submission}, once, in
# Debian 12 with FUSE (emulated SSDs), then each test reported to Classroom.
name: Autograding
on:
  push:
  workflow_dispatch:
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  autograde:
    runs-on: ubuntu-latest
    timeout-minutes: 40
    steps:
      - uses: actions/checkout@v4
      - name: Grade lab {lab} (make setup, then the grader; results.json)
        # --device /dev/fuse + --cap-add SYS_ADMIN: emussd mounts a FUSE file system;
        # apparmor=unconfined: Ubuntu's default AppArmor profile for containers forbids mount.
        # The key reaches the grader as a file (mounted read-only), never in an environment.
        env:
          LAB_SECRET_KEY: ${{{{ secrets.LAB_SECRET_KEY }}}}
        run: |
          sudo modprobe fuse
          (umask 077; printf '%s' "$LAB_SECRET_KEY" > "$RUNNER_TEMP/lab.key")
          docker run --rm --init --device /dev/fuse --cap-add SYS_ADMIN --security-opt apparmor=unconfined \\
            -v "$GITHUB_WORKSPACE:$GITHUB_WORKSPACE" -w "$GITHUB_WORKSPACE" -e GITHUB_ACTOR \\
            -v "$RUNNER_TEMP/lab.key:/run/lab.key:ro" debian:12 bash -c '
              set -euo pipefail
              apt-get update -qq
              apt-get install -y -qq --no-install-recommends git make ca-certificates >/dev/null
              git config --global --add safe.directory "$PWD"
              make setup
              .venv/bin/python -m labkit.grade --lab {lab} --submission {submission} --key /run/lab.key \\
                --student "{'${GITHUB_ACTOR:-student}'}" --results results.json'
{"".join(steps)}      - name: Report to GitHub Classroom
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{results}
        with:
          runners: {",".join(runners)}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.classroom", description=__doc__.split("\n\n")[0])
    parser.add_argument("--lab", type=int, required=True)
    parser.add_argument("--out", type=Path, help="write the workflow here (default: print it)")
    args = parser.parse_args(argv)
    try:
        text = workflow(args.lab)
    except CannotGrade as error:
        print(f"classroom: {error}", file=sys.stderr)
        return 2
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

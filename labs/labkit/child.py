"""The sandboxed side of labkit.sandbox.call: read the call from the grader's pipe, forbid new
processes and exec (seccomp's 'running' filter) before any of the submission's code runs, import
the lab's grader (trusted) and the submission, run one entry of the grader's CHILD table and send
back its JSON answer. Any exception becomes the answer's error, with the submission's part of the
traceback.

The entry gets `services`: the grader's functions it may ask for by name (lab 1's measure()),
each a request over the pipe that the grader checks and runs itself."""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path
from types import SimpleNamespace

from labkit import seccomp


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GraderRefused(RuntimeError):
    """A service refused a request (the grader's message says why)."""


def main(grader_path: str, entry: str, submission: str, from_grader_fd: str, to_grader_fd: str) -> int:
    from_grader = open(int(from_grader_fd), encoding="utf-8")
    to_grader = open(int(to_grader_fd), "w", encoding="utf-8")
    request = json.loads(from_grader.readline())
    if seccomp.supported():
        seccomp.install(seccomp.program("running"))

    def service(name: str):
        def ask(*args):
            to_grader.write(json.dumps({"service": name, "args": list(args)}) + "\n")
            to_grader.flush()
            reply = json.loads(from_grader.readline())
            if "error" in reply:
                raise GraderRefused(reply["error"])
            return reply["value"]
        ask.__name__ = name
        return ask

    services = SimpleNamespace(**{name: service(name) for name in request["services"]})
    grader = load(Path(grader_path), "lab_grader")
    try:
        sys.path.insert(0, submission)
        student = load(Path(submission) / grader.SUBMISSION_MODULE, "submission")
        result = {"value": grader.CHILD[entry](student, request["arguments"], services)}
    except Exception as error:  # noqa: BLE001 (every failure of student code is reported, none escapes)
        frames = [frame for frame in traceback.extract_tb(error.__traceback__) if submission in frame.filename]
        where = "".join(traceback.format_list(frames[-3:]))
        result = {"error": f"{type(error).__name__}: {error}" + (f"\n{where.rstrip()}" if where else "")}
    try:
        text = json.dumps(result)
    except (TypeError, ValueError) as error:
        text = json.dumps({"error": f"the answer is not JSON: {error}"})
    to_grader.write(text + "\n")
    to_grader.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

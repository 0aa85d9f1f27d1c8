"""The sandboxed side of labkit.sandbox.call: import the lab's grader (trusted) and the
submission, run one entry of the grader's CHILD table, and write its JSON answer. Any
exception becomes the answer's error, with the submission's part of the traceback."""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(grader_path: str, entry: str, submission: str, request: str, answer: str) -> int:
    grader = load(Path(grader_path), "lab_grader")
    arguments = json.loads(Path(request).read_text(encoding="utf-8"))
    try:
        sys.path.insert(0, submission)
        student = load(Path(submission) / grader.SUBMISSION_MODULE, "submission")
        result = {"value": grader.CHILD[entry](student, arguments)}
    except Exception as error:  # noqa: BLE001 (every failure of student code is reported, none escapes)
        frames = [frame for frame in traceback.extract_tb(error.__traceback__) if submission in frame.filename]
        where = "".join(traceback.format_list(frames[-3:]))
        result = {"error": f"{type(error).__name__}: {error}" + (f"\n{where.rstrip()}" if where else "")}
    Path(answer).write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

"""Hidden parameters per student: a random generator seeded from an HMAC of the student's id
under the instructor's secret key. The same key and id always give the same parameters; two ids
give unrelated ones, and without the key nobody can tell which (a student cannot copy a
neighbour's numbers, nor compute their own device from their id)."""

from __future__ import annotations

import hashlib
import hmac
import os
import random
from pathlib import Path

KEY_ENV = "LAB_SECRET_KEY"


class SecretKeyError(ValueError):
    pass


def load_key(key_file: Path | None) -> bytes:
    """The instructor's secret: a file's contents, else $LAB_SECRET_KEY (then removed from this
    process's environment); refused when short."""
    if key_file is not None:
        try:
            key = Path(key_file).read_bytes().strip()
        except OSError as error:
            raise SecretKeyError(f"cannot read the secret key file {key_file}: {error.strerror}") from error
    else:  # taken out of the environment, so that no process the grader starts inherits it
        key = os.environ.pop(KEY_ENV, "").encode()
    if len(key) < 16:
        raise SecretKeyError("the instructor's secret key is missing or shorter than 16 bytes: pass KEY=<file> "
                        f"(make lab-key writes one) or set {KEY_ENV}")
    return key


def student_rng(key: bytes, lab: str, student: str) -> random.Random:
    if not student or not student.strip():
        raise ValueError("a student id must not be empty")
    digest = hmac.new(key, f"{lab}\0{student.strip()}".encode(), hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def draw(rng: random.Random, spec):
    """One hidden value from its spec: [low, high] of ints (inclusive), of floats (uniform, rounded
    to 0.1), or {choices: [...]}."""
    if isinstance(spec, dict):
        return rng.choice(spec["choices"])
    low, high = spec
    if isinstance(low, int) and isinstance(high, int):
        return rng.randint(low, high)
    return round(rng.uniform(low, high), 1)

"""`make test` and `make test-e2e` run the end-to-end checks in four parts (Makefile: E2E_ALONE, and
E2E_DOCKER_LANE, E2E_SLURM_LANE and E2E_NATIVE_LANE side by side), and `make test-quick` the quick
profile's (E2E_QUICK): together they select every end-to-end check exactly once, and the checks that
time something are in a part that runs alone."""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PARTS = ("E2E_ALONE", "E2E_DOCKER_LANE", "E2E_SLURM_LANE", "E2E_NATIVE_LANE", "E2E_QUICK")


def makefile_expressions() -> dict[str, str]:
    """The Makefile's E2E* variables, each with the variables it names expanded."""
    variables = dict(re.findall(r"^(E2E\w*) := (.*)$", (REPO_ROOT / "Makefile").read_text(), re.MULTILINE))

    def expand(value: str) -> str:
        return re.sub(r"\$\((\w+)\)", lambda match: f"({expand(variables[match.group(1)])})", value)

    return {name: expand(value) for name, value in variables.items()}


def selects(expression: str, marks: set[str]) -> bool:
    """pytest's -m: the expression over marker names (and, or, not), each true if the test has it."""
    names = set(re.findall(r"[a-z_]\w*", expression)) - {"and", "or", "not"}
    return eval(expression, {"__builtins__": {}}, {name: name in marks for name in names})  # noqa: S307


def test_every_end_to_end_check_is_in_exactly_one_part():
    expressions = makefile_expressions()
    markers = ("e2e", "full_matrix", "wall_clock", "docker", "slurm", "quick_profile")
    for present in itertools.product((False, True), repeat=len(markers)):
        marks = {marker for marker, has in zip(markers, present) if has}
        if {"full_matrix", "quick_profile"} <= marks:
            continue  # no such check
        chosen = [part for part in PARTS if selects(expressions[part], marks)]
        expected = 1 if selects(f"({expressions['E2E']}) or ({expressions['E2E_QUICK']})", marks) else 0
        assert len(chosen) == expected, (sorted(marks), chosen)


def _marks_of(path: str, test: str) -> set[str]:
    spec = importlib.util.spec_from_file_location(f"_parts_{Path(path).stem}", REPO_ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module_marks = getattr(module, "pytestmark", [])
    module_marks = module_marks if isinstance(module_marks, list) else [module_marks]
    return {mark.name for mark in [*module_marks, *getattr(getattr(module, test), "pytestmark", [])]}


def test_the_checks_that_time_something_run_alone():
    expressions = makefile_expressions()
    for path, test in (("tests/test_workflow_e2e.py", "test_the_lab_profile_measures_its_emulated_ssds"),
                       ("systems/emussd/tests/test_emussd_timing.py", "test_single_thread_latency_and_alpha"),
                       ("systems/ace/tests/test_concurrency.py", "test_batch_of_k_w_writes_takes_one_write_latency"),
                       ("systems/cave/tests/test_cave_e2e.py", "test_bfs_runtime_falls_until_k_r_on_emussd")):
        assert selects(expressions["E2E_ALONE"], _marks_of(path, test)), f"{path}::{test}"


def test_the_quick_profiles_check_is_make_test_quicks_alone():
    expressions = makefile_expressions()
    marks = _marks_of("tests/test_workflow_e2e.py", "test_the_quick_profile_measures_an_emulated_ssd")
    assert "wall_clock" in marks
    assert [part for part in PARTS if selects(expressions[part], marks)] == ["E2E_QUICK"]
    recipe = re.search(r"^test-quick:.*\n((?:\t.*\n)+)", (REPO_ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    assert '-m "$(E2E_QUICK)"' in recipe


def test_every_wait_on_a_part_is_guarded_so_a_failed_part_does_not_end_make_test():
    # the recipes run under bash -e (.SHELLFLAGS): a bare `wait $$pid` that returns a part's failure
    # ends the recipe there, before the checks that time something and before the lanes' logs are
    # printed (a failed docker lane did that once)
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "-e" in re.search(r"^\.SHELLFLAGS := (.*)$", makefile, re.MULTILINE).group(1)
    waits = re.findall(r"(?:if ! )?wait \$\$\w+(?: \|\| [^;]+)?", makefile)
    assert waits and all(w.startswith("if ! ") or " || " in w for w in waits), waits

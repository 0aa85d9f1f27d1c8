"""Rules every test follows, wherever it lives (tests/ and systems/*/tests).

No silent skips under CI: a test skips itself when this machine lacks something it needs
(FUSE, a Docker engine, loop devices, root, a tool). Outside CI that stays a skip, and the
run ends with the list of what was skipped and why. Under CI (CI=true, as GitHub Actions and
our .ci/run set it) every test must run: a skip is reported as a failure naming what is missing.
"""

import os

import pytest


def skips_fail() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and skips_fail() and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI=true, where every test must run: {reason.removeprefix('Skipped: ')} "
                           "(give the CI machine what is missing)")


def pytest_terminal_summary(terminalreporter):
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped and not skips_fail():
        reasons = {}
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            reasons[reason.removeprefix("Skipped: ")] = reasons.get(reason.removeprefix("Skipped: "), 0) + 1
        terminalreporter.write_sep("-", f"{len(skipped)} skipped (missing on this machine; under CI=true they fail)")
        for reason, count in sorted(reasons.items()):
            terminalreporter.write_line(f"{count} x {reason}")

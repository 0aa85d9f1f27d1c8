"""The repository's conftest.py: under CI=true a test that skips for something missing fails,
naming it; elsewhere it stays a skip, and the run ends with what was skipped and why."""

import os
import shutil
import subprocess
import sys

from ssdartifact import REPO_ROOT

NEEDS_SOMETHING = '''
import pytest

@pytest.mark.skipif(True, reason="/dev/quantum is absent")
def test_needs_a_device():
    pass

def test_needs_a_tool():
    pytest.skip("frobnicate is not installed")

def test_needs_nothing():
    pass
'''


def run_pytest(tmp_path, ci: str | None) -> subprocess.CompletedProcess:
    shutil.copy(REPO_ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_capability.py").write_text(NEEDS_SOMETHING)
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci is not None else {})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_capability.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)


def test_a_skip_fails_under_ci_naming_what_is_missing(tmp_path):
    result = run_pytest(tmp_path, "true")
    assert result.returncode != 0
    assert "every test must run: /dev/quantum is absent" in result.stdout
    assert "every test must run: frobnicate is not installed" in result.stdout
    assert "1 passed" in result.stdout


def test_outside_ci_a_skip_stays_a_skip_and_the_reasons_are_listed(tmp_path):
    for ci in (None, "false"):
        result = run_pytest(tmp_path, ci)
        assert result.returncode == 0, result.stdout
        assert "2 skipped (missing on this machine; under CI=true they fail)" in result.stdout
        assert "1 x /dev/quantum is absent" in result.stdout and "1 x frobnicate is not installed" in result.stdout

"""How rules start tools: reproducible environment, output in the log, clear failures."""

import pytest

from ssdartifact import steps


def test_a_failing_tool_is_reported_with_the_end_of_its_log(tmp_path):
    log = tmp_path / "logs" / "x.log"
    with pytest.raises(steps.StepFailed) as caught:
        steps.run_logged(["sh", "-c", "echo first; echo 'the real reason' >&2; exit 3"], str(log))
    message = str(caught.value)
    assert "exited with 3" in message and "the real reason" in message
    assert "first" in log.read_text()


def test_tools_see_the_reproducible_date(tmp_path):
    log = tmp_path / "env.log"
    steps.run_logged(["sh", "-c", "echo $SOURCE_DATE_EPOCH $FORCE_SOURCE_DATE"], str(log))
    assert log.read_text().split() == [steps.REPRODUCIBLE_ENV["SOURCE_DATE_EPOCH"], "1"]

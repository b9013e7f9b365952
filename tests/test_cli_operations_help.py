"""The day-2 commands (`endpoint metrics|scale|invoke-async`, `alarms`) say what they do, show
an example, and take --json only where they print data."""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_cli_outputs import help_text

COMMANDS = {
    ("endpoint", "metrics"): True,
    ("endpoint", "scale"): False,
    ("endpoint", "invoke-async"): True,
    ("alarms",): True,
}


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_description_example_and_json_only_for_data(command: tuple[str, ...], capsys: Any) -> None:
    text = help_text(list(command), capsys)
    description = text.split("\n\n")[1]
    assert description.endswith(".") and description[0].isupper()
    assert f"example:\n  fmp {' '.join(command)}" in text
    assert ("--json" in text) is COMMANDS[command]
    assert "--region" in text and "--profile" in text


def test_the_top_level_help_lists_alarms(capsys: Any) -> None:
    assert "alarms" in help_text([], capsys)


def test_endpoint_commands_take_the_endpoint_as_an_argument(capsys: Any) -> None:
    for action in ("status", "metrics", "scale", "invoke-async"):
        assert "ENDPOINT" in help_text(["endpoint", action], capsys)

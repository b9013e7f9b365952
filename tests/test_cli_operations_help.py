"""The day-2 commands (`endpoint metrics|scale|invoke-async`, `alarms`) say what they do, show
an example, and take --json only where they print data."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from fm_platform.cli.main import build_parser
from tests.test_cli_outputs import help_text

ROOT = Path(__file__).resolve().parent.parent

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


def operations_fmp_lines() -> list[str]:
    """The `fmp ...` lines of the "Deploy, use, destroy" section (docs/operations.md),
    without comments."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("## Deploy, use, destroy", 1)[1].split("\n## ", 1)[0]
    return [
        line.split(" # ", 1)[0].strip() for line in section.splitlines() if line.startswith("fmp ")
    ]


def test_the_operations_page_day2_lines_parse() -> None:
    lines = operations_fmp_lines()
    assert any(line.startswith("fmp endpoint scale ") for line in lines)
    parser = build_parser()
    for line in lines:
        # Optional parts in brackets are left out; a redirection ends the command.
        argv = shlex.split(re.sub(r"\s*\[[^]]*\]", "", line).split(" > ", 1)[0])
        parser.parse_args(argv[1:])  # exits (status 2) on a line fmp would refuse

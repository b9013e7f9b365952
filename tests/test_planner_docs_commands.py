"""docs/planner.md: every command of its `sh` blocks runs as typed after the README's
`make synth`, offline and without AWS credentials; the `fmp plan` ones in a copy of
examples/ (one moves the plan to another region), `make synth` in the project, leaving the
committed plan as it is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import synth_env
from tests.docs_support import shell_commands
from tests.support import ROOT

PAGE = ROOT / "docs" / "planner.md"
PLAN = ROOT / "examples" / "catalog.plan.json"


def commands(kind: str = "sh") -> list[str]:
    """The commands of the page's code blocks of ``kind``, in order, without comments."""
    return shell_commands(PAGE, (kind,))


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=synth_env(),  # the virtualenv's bin (fmp, make's tools) first
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def test_the_page_shows_the_plan_commands_and_the_deploy_ones_apart():
    assert [c.split()[0] for c in commands()] == ["fmp", "fmp", "fmp", "fmp", "make"]
    assert all(c.startswith("make deploy") for c in commands("text") if c.startswith("make"))


@pytest.mark.slow
def test_each_fmp_command_runs_as_typed(tmp_path):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    outputs = []
    for command in (c for c in commands() if c.startswith("fmp ")):
        result = _run(command, tmp_path)
        assert result.returncode == 0, command + result.stdout[-2000:] + result.stderr[-2000:]
        outputs.append(result.stdout)
    charts, explained, repacked, moved = outputs
    assert list((tmp_path / "charts").glob("*.png"))
    assert explained.startswith("qwen3-32b: ")
    assert "repacking moves" in repacked
    assert "planned for eu-west-1 (from --region)" in moved


@pytest.mark.slow
def test_make_synth_of_the_catalog_runs_as_typed():
    before = PLAN.read_text()
    (command,) = [c for c in commands() if c.startswith("make ")]
    result = _run(command, ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert PLAN.read_text() == before, "the synth changed the committed plan"

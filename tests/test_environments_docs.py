"""docs/environments.md: every command of its `sh` blocks runs as typed, in the project,
offline and without AWS credentials (the real CDK CLI, make, git: slow), and leaves the
committed plans as they are; its cost table is what `make deploy` prints."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import synth_env
from tests.docs_support import shell_commands
from tests.support import ROOT
from tests.test_environments import CONFIG, EXAMPLE, _in_copy

sys.path.insert(0, str(ROOT / "scripts"))
from deploy_cost import environments_report  # noqa: E402

PAGE = ROOT / "docs" / "environments.md"


def commands(kind: str = "sh") -> list[str]:
    """The commands of the page's code blocks of ``kind``, in order."""
    return shell_commands(PAGE, (kind,))


def test_the_page_names_the_example_and_runs_its_commands():
    assert str(CONFIG) in PAGE.read_text()
    assert len(commands()) == 7
    # The commands that need an account are shown, never run.
    assert all("bootstrap" in c or "YES=1" in c or "cdk deploy" in c for c in commands("text"))


def _cost_table() -> dict[str, tuple[str, str, str]]:
    rows = re.findall(
        r"^\| `(\w+)` \| ([a-z0-9-]+) \| (\$[\d,.]+) \| (\$[\d,.]+) \|$", PAGE.read_text(), re.M
    )
    return {name: (region, hour, day) for name, region, hour, day in rows}


def test_the_cost_table_is_what_make_deploy_prints(tmp_path):
    with _in_copy(tmp_path):
        text = environments_report(json.loads(CONFIG.read_text()), None)
    printed = {}
    for index, line in enumerate(text):
        head = re.match(
            r"fm_platform: what environment (\w+)'s stacks cost once deployed in (\S+) ", line
        )
        if head:
            total = next(t for t in text[index:] if t.startswith("  total: "))
            hour, day = re.findall(r"\$[\d,.]+\d", total)
            printed[head.group(1)] = (head.group(2), hour, day)
    assert _cost_table() == printed


@pytest.mark.slow
@pytest.mark.parametrize("command", commands())
def test_each_command_of_the_page_runs_as_typed(command):
    env = synth_env()
    env["CI"] = "true"
    before = {p.name: p.read_text() for p in (ROOT / EXAMPLE).glob("*.plan.json")}
    result = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    after = {p.name: p.read_text() for p in (ROOT / EXAMPLE).glob("*.plan.json")}
    assert after == before, "the command changed a committed plan"
    output = result.stdout + result.stderr
    if " ls " in command:
        assert "prod/FmpTraining (prod-FmpTraining)" in output
        assert "dev/team-dev-01 (dev-team-dev-01)" in output
    if command.startswith("make deploy"):
        assert "what environment prod's stacks cost once deployed in eu-west-1" in output
        assert "not deploying without approval" in output
    if command.startswith("make diff"):
        assert "=== prod/FmpTraining" in output and "=== staging/" not in output


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("synth ENV=prod", "cdk synth --quiet '**/prod/*'"),
        ("deploy ENV=prod YES=1", "cdk deploy '**/prod/*'"),
        ("deploy YES=1", "cdk deploy '**'"),
        ("deploy ENV=prod YES=1", "deploy_cost.py --confirm --yes --env prod --"),
        ("diff ENV=prod", "diff_stacks.py --base HEAD --env prod"),
    ],
)
def test_make_passes_the_environment_to_each_command(target, expected):
    env = {k: v for k, v in synth_env().items() if k != "ENV"}
    result = subprocess.run(
        ["make", "-n", *target.split()], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert expected in result.stdout

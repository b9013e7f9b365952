"""A group or isolation choice shows what it costs over the plan without it, and warns
above the catalog's threshold."""

from __future__ import annotations

import pytest
import yaml

from fm_platform.cli.main import main
from fm_platform.fleet.deciding.choices import choice_costs, choice_lines, choice_warnings
from fm_platform.fleet.placing.cost import model_cost
from fm_platform.fleet.placing.planner import Planner
from tests.fleet_support import catalog

MODELS = [
    # a group pinned to p4de pays the whole instance for two copies of two devices each
    {"name": "qwen-14b", "architecture": "qwen2.5-14b", "group": "pair", "instance_family": "p4de"},
    {
        "name": "nemo-12b",
        "architecture": "mistral-nemo-12b",
        "group": "pair",
        "instance_family": "p4de",
    },
    {"name": "chat-8b", "architecture": "llama-3.1-8b", "peak_rpm": 60},
    {
        "name": "pii-8b",
        "architecture": "llama-3.1-8b",
        "isolation": "dedicated",
        "isolation_reason": "PII",
    },
]


def test_each_group_and_dedicated_model_is_priced_with_and_without_its_choice():
    planner = Planner(catalog(MODELS))
    planner.run()
    costs = {c.choice: c for c in choice_costs(planner)}
    assert set(costs) == {"group pair", "isolation of pii-8b"}
    pair = costs["group pair"]
    assert pair.models == ("qwen-14b", "nemo-12b")
    assert pair.monthly_with == sum(
        model_cost(planner.plan.placements[n]).total for n in pair.models
    )
    assert pair.monthly_with == pytest.approx(
        sum(planner.plan.placements[n].expected_hourly for n in pair.models) * 730, abs=1
    )
    assert 0 < pair.monthly_without < pair.monthly_with / 2
    line = choice_lines([pair])[0]
    assert line == (
        f"  group pair: ${pair.monthly_with:,} a month, ${pair.monthly_without:,} without it "
        f"({', '.join(dict.fromkeys(pair.without))}): +${pair.extra_monthly:,}"
    )
    assert choice_warnings([pair], pair.extra_monthly + 1) == []
    (warning,) = choice_warnings([pair], 0)
    assert warning.startswith("group pair costs $") and "(qwen-14b, nemo-12b)" in warning


def test_the_run_warns_above_the_catalogs_threshold_and_explain_shows_the_cost(tmp_path, capsys):
    path = tmp_path / "cat.yaml"
    path.write_text(yaml.safe_dump({"models": MODELS, "choice_warning_monthly": 0}))
    assert main(["plan", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "what the catalog's group and isolation choices cost (expected):" in out
    assert "warning: group pair costs $" in err
    path.write_text(yaml.safe_dump({"models": MODELS, "choice_warning_monthly": 1e9}))
    assert main(["plan", str(path), "--explain", "nemo-12b"]) == 0
    out, err = capsys.readouterr()
    assert "cost of the catalog's choice:\n  group pair: $" in out and "warning" not in err


def test_a_negative_threshold_is_refused():
    with pytest.raises(ValueError, match=r"choice_warning_monthly=-1: must be >= 0"):
        catalog(MODELS, choice_warning_monthly=-1)

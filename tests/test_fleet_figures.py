"""One figure per model, everywhere: the model table, the reason, ``--explain``, the plan
file and the charts' data give each model the same monthly cost and the same parts (own,
idle minimum, unfilled share), and a reason's own cost is the model's own; what a
catalog choice costs is never negative."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from fm_platform.cli.main import main
from fm_platform.fleet.deciding.choices import choice_costs
from fm_platform.fleet.outputs.charts import overview_bars
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, default_plan_file, read_plan
from fm_platform.fleet.outputs.report import MODEL_HEADERS, explain
from fm_platform.fleet.placing.cost import PLACED, model_cost, price_endpoint
from fm_platform.fleet.placing.planner import Planner
from fm_platform.fleet.planning import plan_catalog
from tests.fleet_support import catalog, realistic_catalog_data
from tests.support import ROOT

EXAMPLES = ["catalog.yaml", "platform-team.yaml"]
PARTS = ("own", "idle_minimum", "unfilled")
_DOLLARS = r"\$([\d,]+)"
_COST_LINE = re.compile(
    rf"^cost: own {_DOLLARS} \+ idle minimum {_DOLLARS} \+ unfilled share {_DOLLARS} = "
    rf"{_DOLLARS} a month",
    re.MULTILINE,
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _table_rows(text: str) -> dict[str, dict[str, str]]:
    """The model table's rows by model, cut at the header's column starts."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("model "))
    starts = [lines[header].index(h) for h in MODEL_HEADERS]
    rows = {}
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        rows[cells[0]] = dict(zip(MODEL_HEADERS, cells, strict=True))
    return rows


def _reason_own(reason: str) -> int | None:
    """The model's own cost a month as its reason gives it: the placed option's when the
    reason names it, else the decided option's (the first of ``own cost $A vs $B``); None
    for a reason without a figure (the only option)."""
    placed = re.search(re.escape(PLACED) + _DOLLARS + " a month", reason)
    if placed:
        return _number(placed.group(1))
    decided = re.search(rf"own cost {_DOLLARS} vs {_DOLLARS} a month", reason)
    return _number(decided.group(1)) if decided else None


def _planned(tmp_path, source, capsys):
    """`fmp plan` of ``source`` (with a copy of its plan file, if any): the table text, the
    plan file written, and the same plan planned in process (for ``--explain`` and the
    charts)."""
    catalog = tmp_path / source.name
    shutil.copy(source, catalog)
    if default_plan_file(source).exists():
        shutil.copy(default_plan_file(source), default_plan_file(catalog))
    previous = read_plan(default_plan_file(catalog))
    assert main(["plan", str(catalog), "--region", "us-east-1"]) == 0
    out = capsys.readouterr().out
    record = json.loads(default_plan_file(catalog).read_text())
    planned = plan_catalog(catalog, "us-east-1", previous)
    return out, record, planned


def _assert_one_figure_per_model(out, record, planned):
    table = _table_rows(out)
    files = {p["name"]: p for p in record["placements"]}
    charts = {name: cost for bar in overview_bars(planned.plan) for name, cost in bar.models}
    assert set(table) == set(files) == set(charts) == set(planned.plan.placements)
    checked = 0
    for name, row in table.items():
        own, idle, unfilled = (_number(x) for x in row["own+idle+unfilled"].split("+"))
        total = _number(row["$/month"])
        assert own + idle + unfilled == total, name
        assert files[name]["monthly"] == {
            "own": own,
            "idle_minimum": idle,
            "unfilled": unfilled,
            "total": total,
        }, name
        assert (charts[name].own, charts[name].idle_minimum, charts[name].unfilled) == (
            own,
            idle,
            unfilled,
        ), name
        text = explain(planned.planner, name)
        line = _COST_LINE.search(text)
        assert line is not None, name
        assert [_number(x) for x in line.groups()] == [own, idle, unfilled, total], name
        assert f"decision: {row['reason']}\n" in text, name
        assert row["reason"] == files[name]["reason"] == planned.plan.placements[name].reason
        stated = _reason_own(row["reason"])
        if stated is not None:
            assert stated == own, f"{name}: reason says own cost ${stated:,}, table {own:,}"
            checked += 1
    assert checked > len(table) / 2


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_model_has_one_figure_everywhere(tmp_path, capsys, name):
    _assert_one_figure_per_model(*_planned(tmp_path, ROOT / "examples" / name, capsys))


def test_every_generated_model_has_one_figure_everywhere(tmp_path, capsys):
    source = tmp_path / "source" / "generated.yaml"
    source.parent.mkdir()
    source.write_text(yaml.safe_dump(realistic_catalog_data(120, name="generated")))
    _assert_one_figure_per_model(*_planned(tmp_path, source, capsys))


def test_the_cli_explain_prints_the_table_figure(tmp_path, capsys):
    out, record, _ = _planned(tmp_path, ROOT / "examples" / "catalog.yaml", capsys)
    row = _table_rows(out)["qwen2-5-72b-instruct"]
    catalog = tmp_path / "catalog.yaml"
    assert main(["plan", str(catalog), "--explain", "qwen2-5-72b-instruct"]) == 0
    text = capsys.readouterr().out
    own, idle, unfilled = row["own+idle+unfilled"].split("+")
    assert (
        f"cost: own ${own} + idle minimum ${idle} + unfilled share ${unfilled} = "
        f"${row['$/month']} a month" in text
    )


def _with_groups(data: dict) -> dict:
    """``data`` with every fifth text-generation model in one of four groups."""
    generative = [m for m in data["models"] if "framework" not in m]
    for i, model in enumerate(generative[::5]):
        if "isolation" not in model:
            model["group"] = f"g{i % 4}"
    return data


def _choice_planners():
    for name in EXAMPLES:
        path = ROOT / "examples" / name
        yield plan_catalog(path, "us-east-1", read_plan(default_plan_file(path))).planner
    data = _with_groups(realistic_catalog_data(300, name="generated"))
    planner = Planner(catalog(data["models"], name="generated"))
    planner.run()
    yield planner


def test_no_choice_costs_less_than_the_best_plan_without_it():
    seen = {"group": 0, "isolation": 0}
    for planner in _choice_planners():
        for cost in choice_costs(planner):
            seen[cost.choice.split()[0]] += 1
            assert cost.extra_monthly >= 0, cost
            totals = sum(model_cost(planner.plan.placements[n]).total for n in cost.models)
            owns = sum(model_cost(planner.plan.placements[n]).own for n in cost.models)
            assert cost.monthly_with == totals
            assert cost.monthly_without <= owns, cost
    assert seen["group"] >= 4 and seen["isolation"] >= 3


def test_an_endpoint_splits_its_unused_capacity_into_idle_minimum_and_unfilled_by_own_cost():
    # 8 GPUs an instance: a 4-GPU copy all day, and 1-8 one-GPU copies (8 at peak) 12 h a
    # day: 1 instance at minimum (5 GPUs used), 2 at peak (12 used), 1.5 expected
    e = EndpointPlan("ic", "inference-components", "ml.p4d.24xlarge", "s", "g", ["a", "b"])
    a = Placement("a", "ic", accelerators=4, own_hourly=4 / 8)
    b = Placement("b", "ic", accelerators=1, max_copies=8, active_hours=12)
    b.own_hourly = (1 + 0.5 * 7) / 8
    e.min_instances, e.max_instances = 1, 2
    price_endpoint(e, [a, b], 1.0)
    assert e.expected_hourly == 1.5
    costs = [model_cost(a), model_cost(b)]
    assert [c.own for c in costs] == [365, 411]
    # idle minimum: 3 of 8 GPUs half the time; unfilled: 4 of 16 GPUs the other half
    assert sum(c.idle_minimum for c in costs) == pytest.approx(3 / 8 * 0.5 * 730, abs=1)
    assert sum(c.unfilled for c in costs) == pytest.approx(4 / 8 * 0.5 * 730, abs=1)
    assert sum(c.total for c in costs) == pytest.approx(1.5 * 730, abs=1)
    # shares by own cost
    assert costs[0].idle_minimum / costs[1].idle_minimum == pytest.approx(365 / 410.6, rel=0.02)
    assert model_cost(a).breakdown() == (
        f"own $365 + idle minimum ${costs[0].idle_minimum} + unfilled share "
        f"${costs[0].unfilled} = ${costs[0].total:,} a month"
    )


def test_the_overview_labels_each_endpoint_with_its_costliest_models_figures():
    planned = plan_catalog(ROOT / "examples" / "catalog.yaml", "us-east-1", None)
    for bar in overview_bars(planned.plan):
        name, cost = bar.models[0]
        assert f"{name} ${cost.total:,}" in bar.label
        assert all(c.total <= cost.total for _, c in bar.models)

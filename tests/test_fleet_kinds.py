"""A new hosting kind is one :class:`Kind` entry plus its sizing and its stack mapping:
the planner, cost model, report and bound read kinds by their fields, never by name."""

from __future__ import annotations

import ast
import dataclasses

from fm_platform.fleet.deciding import kinds, options
from fm_platform.fleet.outputs.bound import lower_bound
from fm_platform.fleet.outputs.report import endpoint_table, explain, model_table, summary
from fm_platform.fleet.placing import endpoints
from fm_platform.fleet.placing.cost import plan_cost
from fm_platform.fleet.placing.planner import Planner
from tests.fleet_support import catalog
from tests.support import ROOT

NAMES = {kinds.IC, kinds.SINGLE, kinds.MULTI, kinds.ASYNC, kinds.SERVERLESS}
CONSTANTS = {"IC", "SINGLE", "MULTI", "ASYNC", "SERVERLESS"}
#: The kind table, each kind's sizing rule and stack mapping, the reader of version 1
#: plan files (which knew two kinds by name; a new kind never appears in one), and the
#: serverless endpoint construct, whose replacement key is the word (an endpoint config
#: property, not the planner's kind; renaming it would replace deployed endpoints).
ALLOWED = {
    "fm_platform/fleet/deciding/kinds.py",
    "fm_platform/fleet/placing/endpoints.py",
    "fm_platform/stacks/fleet.py",
    "fm_platform/fleet/outputs/plan.py",
    "fm_platform/constructs/inference/serverless_endpoint.py",
}


def _names_kinds(path) -> bool:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        imported = {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set()
        if imported & CONSTANTS and node.module == "fm_platform.fleet.deciding.kinds":  # type: ignore[attr-defined]
            return True
        if isinstance(node, ast.Constant) and node.value in NAMES:
            return True
    return False


def test_only_the_kind_table_the_sizing_and_the_stack_mapping_name_kinds():
    naming = {
        str(p.relative_to(ROOT)) for p in (ROOT / "fm_platform").rglob("*.py") if _names_kinds(p)
    }
    assert naming == ALLOWED


def test_a_registered_kind_is_planned_priced_reported_and_bounded_with_no_other_edit(
    monkeypatch,
):
    fake = dataclasses.replace(
        kinds.KINDS[kinds.SINGLE],
        name="reserved-lane",
        prefix="lane",
        # fits every axis best, so it wins wherever it is allowed
        fit={"model_size": 1.0, "latency": 1.0, "isolation": 1.0, "scalability": 1.0},
        preference=-1,
    )
    monkeypatch.setitem(kinds.KINDS, fake.name, fake)
    monkeypatch.setitem(endpoints.SIZERS, fake.name, endpoints.size_single)
    # assessments are kept per model shape; the kind table is fixed outside this test
    monkeypatch.setattr(options, "_ALIKE_OPTIONS", {})
    planner = Planner(
        catalog(
            [
                {"name": "chat", "architecture": "llama-3.1-8b", "peak_rpm": 300},
                {"name": "embed", "architecture": "bge-large-en-v1.5", "peak_rpm": 600},
            ],
            # latency weighed three times: its lead outweighs the endpoint of its own
            weights={"cost": 0.0, "latency": 3.0},
        )
    )
    plan = planner.run()
    assert {e.kind for e in plan.endpoints.values()} == {"reserved-lane"}
    assert all(name.startswith("lane-") for name in plan.endpoints)
    cost = plan_cost(plan)
    assert cost.expected_hourly > 0 and cost.min_instances == 2
    bound = lower_bound(planner)
    assert 0 < bound <= cost.expected_hourly + 1e-6
    assert "reserved-lane" in endpoint_table(plan)
    assert "lane-chat" in model_table(plan)
    assert any("lower bound" in line for line in summary(plan, bound))
    assert "reserved-lane" in explain(planner, "chat")

"""What a team reads before acting: memory per copy by part, cold starts of models that
may scale to zero, why an endpoint of its own exists, and no scale to zero for strict
latency unless the catalog allows it."""

from __future__ import annotations

import json

from fm_platform.fleet.outputs.report import explain, model_table
from fm_platform.fleet.placing.planner import Planner
from tests.fleet_support import catalog

CHAT = {"name": "chat", "architecture": "llama-3.1-8b", "peak_rpm": 60, "active_hours": 8}


def test_the_plan_file_and_explain_give_device_memory_and_its_parts():
    planner = Planner(catalog([CHAT]))
    plan = planner.run()
    record = json.loads(plan.to_json())["placements"][0]
    parts = record["memory_parts"]
    assert set(parts) == {"weights_gib", "kv_pool_gib", "headroom_gib"}
    assert (
        record["device_memory_gib"] == round(sum(parts.values()), 2)
        or abs(record["device_memory_gib"] - sum(parts.values())) < 0.02
    )
    assert parts["weights_gib"] == round(8.03e9 * 2 / 2**30, 2)
    text = explain(planner, "chat")
    assert f"memory per copy: {record['device_memory_gib']:,.1f} GiB of device memory" in text
    assert "engine memory fraction 0.9" in text and "host memory" in text


def test_a_model_that_may_scale_to_zero_shows_its_cold_start():
    planner = Planner(catalog([{**CHAT, "cold_start_tolerant": True}]))
    plan = planner.run()
    p = plan.placements["chat"]
    assert p.min_copies == 0 and p.cold_start_s is not None
    # alone on its endpoint, it can reach zero instances: a launch comes first
    assert p.cold_start.startswith("instance launch 300 s + image pull 120 s")
    assert f"{p.cold_start_s / 60:.1f} min" in model_table(plan)
    assert f"cold start: about {p.cold_start_s:,.0f} s" in explain(planner, "chat")
    steady = Planner(catalog([{**CHAT, "active_hours": 24}])).run()
    assert steady.placements["chat"].cold_start_s is None


def test_a_strict_model_never_scales_to_zero_unless_it_tolerates_cold_starts():
    idle = {**CHAT, "active_hours": 2, "latency_class": "strict"}
    planner = Planner(catalog([idle]))
    p = planner.run().placements["chat"]
    assert p.min_copies == 1 and p.cold_start_s is None
    assert "latency_class: strict (a cold start takes minutes" in explain(planner, "chat")
    allowed = Planner(catalog([{**idle, "cold_start_tolerant": True}])).run()
    assert allowed.placements["chat"].min_copies == 0


def test_explain_says_why_a_dedicated_endpoint_exists():
    secure = {**CHAT, "name": "secure", "isolation": "dedicated", "isolation_reason": "PII"}
    planner = Planner(catalog([secure, {**CHAT, "tenant": "acme"}]))
    plan = planner.run()
    assert plan.endpoints[plan.placements["secure"].endpoint].kind == "single-model"
    text = explain(planner, "secure")
    assert "endpoint of its own: the catalog asks for it: isolation: dedicated (PII)" in text
    # a tenant name alone asks for no endpoint of its own
    assert plan.placements["chat"].scores["isolation"] == 0.0

"""What a team reads before acting: memory per copy by part, cold starts of models that
may scale to zero, why an endpoint of its own exists, and no scale to zero for strict
latency unless the catalog allows it."""

from __future__ import annotations

import json

from fm_platform.fleet.outputs.report import explain, model_table, summary
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


def test_counts_and_types_read_as_written():
    planner = Planner(
        catalog([{"name": "emb", "architecture": "bge-small-en-v1.5", "instance_family": "c6i"}])
    )
    plan = planner.run()
    assert summary(plan, None)[0].startswith("1 model on 1 endpoint in 1 stack;")
    text = explain(planner, "emb")
    # a CPU copy names its type, not "xcpu" or "x0"
    assert "ml.c6i.large (CPU)" in text and "xcpu" not in text and " x0" not in text
    assert "copies on CPU" in text and "0 accelerators" not in text
    gpu = Planner(catalog([{**CHAT, "latency_p50_ms": 10000, "instance_family": "g5"}]))
    gpu.run()
    rejected = set(gpu.assessed["chat"].assessment.rejected.values())
    assert "1 device misses the p50 objective of 10,000 ms" in rejected
    assert not any("1 devices" in why for why in rejected)
    big = Planner(catalog([{"name": "big", "architecture": "llama-3.1-70b", "peak_rpm": 60}]))
    big.run()
    reasons = big.assessed["big"].assessment.rejected.values()
    assert any("1 device has" in why for why in reasons)

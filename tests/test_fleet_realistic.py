"""The realistic benchmark catalog has the variety of a real one, and plans."""

from __future__ import annotations

from collections import Counter

from fm_platform.fleet.models.architectures import architecture
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.placing.planner import Planner
from tests.fleet_support import FAMILIES
from tests.fleet_support import realistic_catalog_data as _data


def test_a_realistic_catalog_spans_every_task_class_and_hundreds_of_tenants():
    models = _data(2000)["models"]
    assert _data(2000) == _data(2000)  # deterministic
    tasks = Counter(architecture(m["architecture"]).task for m in models)
    assert set(tasks) == {
        "text-generation",
        "embedding",
        "reranking",
        "classification",
        "speech-to-text",
        "image-generation",
    }
    assert {m["latency_class"] for m in models} == {"strict", "standard", "relaxed", "batch"}
    assert len({m["tenant"] for m in models}) >= 150
    dedicated = sum(m.get("isolation") == "dedicated" for m in models)
    assert 5 <= dedicated <= 60
    assert len({m["architecture"] for m in models}) >= 40


def test_a_realistic_catalog_plans_with_every_model_placed():
    catalog = catalog_from_data(_data(300), FAMILIES)
    plan = Planner(catalog).run()
    assert len(plan.placements) == 300
    kinds = {plan.endpoints[p.endpoint].kind for p in plan.placements.values()}
    assert {"inference-components", "single-model"} <= kinds


def test_a_model_gets_an_endpoint_of_its_own_only_when_the_catalog_or_its_numbers_say_so():
    catalog = catalog_from_data(_data(300), FAMILIES)
    planner = Planner(catalog)
    plan = planner.run()
    own = [
        name
        for name, p in plan.placements.items()
        if plan.endpoints[p.endpoint].kind == "single-model"
        and planner.models[name].isolation != "dedicated"
    ]
    assert own  # CPU encoders, cheaper on a CPU type than on a GPU component
    for name in own:
        decision = planner.assessed[name].decision
        assert decision is not None
        chosen = next(c for c in decision.candidates if c.why_not is None)
        shared = [
            c
            for c in decision.candidates
            if c.kind == "inference-components" and c.option is not None
        ]
        # never at equal cost: sharing costs more wherever a model has its own
        assert all(c.expected_hourly > chosen.expected_hourly for c in shared), name
    # batch before copies: most text-generation copies run more than the old default 16
    llm = [p for p in plan.placements.values() if p.memory_parts.get("kv_pool_gib", 0) > 0]
    assert sum(p.concurrency > 16 for p in llm) > len(llm) / 2

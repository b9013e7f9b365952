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

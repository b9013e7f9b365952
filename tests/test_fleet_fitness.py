"""The five fitness scores follow their rules, and they decide each model's option."""

from __future__ import annotations

import pytest

from fm_platform.fleet.deciding.fitness import score
from fm_platform.fleet.deciding.kinds import IC, SINGLE
from fm_platform.fleet.models.catalog import ModelEntry
from fm_platform.fleet.outputs.report import explain
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from tests.fleet_support import catalog


def model(**fields):
    return ModelEntry(**{"name": "m", "params_b": 7.0, **fields})


@pytest.mark.parametrize(
    ("fields", "latency"),
    [
        ({"latency_p50_ms": 100}, 1.0),
        ({"latency_p50_ms": 1000}, 0.5),
        ({"latency_p50_ms": 10000}, 0.0),
        ({"latency_class": "relaxed"}, 0.2),
        ({"latency_class": "strict", "cold_start_tolerant": True}, 0.75),
    ],
)
def test_latency(fields, latency):
    assert score(model(**fields), 10, 60, 1, False).latency == latency


def test_model_size_is_log_of_copy_memory_against_640_gib():
    assert score(model(), 0.5, 60, 1, False).model_size == 0.0
    assert score(model(), 640, 60, 1, False).model_size == 1.0
    assert score(model(), 25.3, 60, 1, False).model_size == pytest.approx(0.5, abs=0.001)


def test_isolation_cost_and_scalability():
    assert (
        score(model(isolation="dedicated", isolation_reason="PII"), 1, 60, 1, False).isolation == 1
    )
    # a tenant name alone asks for no isolation (only isolation: dedicated does)
    assert score(model(tenant="acme"), 1, 60, 1, False).isolation == 0.0
    # idle share 1 - 6/24 x 30/60 = 0.875 -> 0.5 + 0.5 x 0.875
    assert score(model(active_hours=6, peak_rpm=30), 1, 60, 1, False).cost == 0.938
    assert score(model(), 1, 60, 32, False).scalability == 1.0
    assert score(model(), 1, 60, 1, True).scalability == 0.2


def test_a_tight_latency_objective_is_decided_and_explained():
    planner = Planner(
        catalog(
            [
                {
                    "name": "emb",
                    "architecture": "bge-large-en-v1.5",
                    "latency_p50_ms": 80,
                    "peak_rpm": 1000,
                }
            ]
        )
    )
    plan = planner.run()
    p = plan.placements["emb"]
    # at equal cost, a latency fit of 1.0 against 0.8 is less than an endpoint weighs
    assert plan.endpoints[p.endpoint].kind == IC
    assert p.reason.startswith("shares: single-model would open an endpoint of its own")
    # a team that weighs latency twice gets the endpoint of its own, and explain says
    # that its numbers, not the catalog, gave it one
    planner = Planner(
        catalog(
            [
                {
                    "name": "emb",
                    "architecture": "bge-large-en-v1.5",
                    "latency_p50_ms": 80,
                    "peak_rpm": 1000,
                    "weights": {"latency": 2},
                }
            ]
        )
    )
    weighted = planner.run().placements["emb"]
    assert weighted.endpoint.startswith("sme-")
    assert weighted.reason.startswith(
        "latency (score 1.00 x weight 2) decides over inference-components"
    )
    assert (
        "endpoint of its own: no catalog constraint asks for it; its numbers outweigh the "
        "0.25 utility an endpoint of its own costs in the choice"
    ) in explain(planner, "emb")
    # A tenant weighing neither latency nor isolation: equal utility, the shared kind.
    cheap = plan_fleet(
        catalog(
            [
                {
                    "name": "emb",
                    "architecture": "bge-large-en-v1.5",
                    "latency_p50_ms": 80,
                    "peak_rpm": 1000,
                    "tenant": "t",
                }
            ],
            tenants={"t": {"weights": {"latency": 0, "isolation": 0}}},
        )
    )
    assert cheap.endpoints[cheap.placements["emb"].endpoint].kind == IC


def test_a_model_idle_most_of_the_day_scales_to_zero_unless_the_catalog_says_no():
    mixtral = {"name": "mixtral", "architecture": "mixtral-8x7b", "active_hours": 3, "peak_rpm": 60}
    plan = plan_fleet(catalog([mixtral]))
    p = plan.placements["mixtral"]
    assert p.min_copies == 0
    assert p.scale_to_zero.startswith("scales to zero: idle 88% of the day")
    pinned = plan_fleet(catalog([{**mixtral, "cold_start_tolerant": False}]))
    assert pinned.placements["mixtral"].min_copies == 1
    assert (
        pinned.placements["mixtral"].scale_to_zero == "no scale to zero: cold_start_tolerant: False"
    )


def test_the_decision_lists_every_candidate_kind_with_its_cost():
    planner = Planner(catalog([{"name": "m", "architecture": "llama-3.1-8b", "peak_rpm": 120}]))
    planner.run()
    decision = planner.assessed["m"].decision
    kinds = {c.kind: c for c in decision.candidates}
    assert set(kinds) == {IC, SINGLE, "multi-model", "asynchronous", "serverless"}
    assert kinds["multi-model"].why_not == "no instance type fits"
    assert kinds["serverless"].why_not == (
        "text generation is not served on serverless endpoints (CPU only, no GPUs)"
    )
    assert kinds["asynchronous"].why_not.startswith("for latency_class: batch only")
    assert kinds[IC].expected_hourly > 0 and kinds[SINGLE].expected_hourly > 0

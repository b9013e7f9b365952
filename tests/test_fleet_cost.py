"""Cost a manager can use: expected cost per model and endpoint between minimum and
maximum, multi-model endpoints sized from traffic and memory, and an independent bound."""

from __future__ import annotations

import math

import pytest

from fm_platform.fleet.deciding.kinds import MULTI
from fm_platform.fleet.outputs.bound import lower_bound
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH, plan_cost
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import hourly_prices
from tests.fleet_support import catalog, example


def test_expected_cost_lies_between_minimum_and_maximum_and_adds_up():
    plan = plan_fleet(example(220))
    for e in plan.endpoints.values():
        assert e.min_hourly <= e.expected_hourly <= e.max_hourly
        models = sum(plan.placements[m].expected_hourly for m in e.models)
        assert models == pytest.approx(e.expected_hourly, abs=0.01)
    cost = plan_cost(plan)
    assert cost.expected_monthly == pytest.approx(cost.expected_hourly * HOURS_PER_MONTH)


def test_a_single_model_endpoint_is_expected_at_peak_during_active_hours():
    plan = plan_fleet(
        catalog(
            [
                {
                    "name": "m",
                    "architecture": "llama-3.1-8b",
                    "isolation": "dedicated",
                    "isolation_reason": "PII",
                    "peak_rpm": 600,
                    "active_hours": 6,
                }
            ]
        )
    )
    e = plan.endpoints["sme-m"]
    price = hourly_prices()[e.instance_type]
    expected = 1 + 6 / 24 * (e.max_instances - 1)
    assert e.max_instances > 1 and e.expected_hourly == pytest.approx(expected * price, abs=1e-3)


def test_a_busy_multi_model_endpoint_is_sized_from_traffic_with_the_stacks_target():
    models = [
        {
            "name": f"cls-{i}",
            "architecture": "deberta-v3-base",
            "framework": "pytorch",
            "peak_rpm": 12000 / 36,
            "active_hours": 14,
            "cold_start_tolerant": True,
        }
        for i in range(36)
    ]
    plan = plan_fleet(catalog(models))
    (e,) = plan.endpoints.values()
    assert e.kind == MULTI
    per_instance = plan.placements["cls-0"].rpm_per_copy
    assert e.max_instances == math.ceil(12000 / per_instance - 1e-9) > 1
    assert e.scaling_target == pytest.approx(per_instance, rel=1e-3)
    assert e.scaling_target * e.max_instances >= 12000  # the policy reaches the peak
    memory = sum(plan.placements[m].memory_mib for m in e.models)
    assert e.min_instances >= memory / (instance_spec(e.instance_type).memory_mib / 2)


def test_the_bound_is_a_linear_program_under_the_plans_cost():
    planner = Planner(example(220))
    plan = planner.run()
    bound = lower_bound(planner)
    assert 0 < bound <= plan_cost(plan).expected_hourly


def test_the_plan_at_1000_models_is_within_10_percent_of_the_bound_over_every_kind():
    planner = Planner(example(1000))
    plan = planner.run()
    # The bound spans every kind and type each model allows, not only the plan's kinds.
    # The ratio is 1.097 (plan $315.77/h, bound $287.89/h). It was 1.027 ($334.35 and
    # $325.60) before each copy ran the most sequences it can: the plan fell 5.6%, the
    # bound 11.6%, since fewer, larger copies round up coarser (whole copies at peak cost
    # $41.0/h on Inference Components, $34.8/h before) and pack worse (devices bought but
    # unused: $14.1/h, $5.3/h before), both of which the relaxation leaves out. The
    # endpoint term adds nothing here: planned with ENDPOINT_TERM = 0 the cost is the
    # same $315.77/h (the models it decides cost the same either way), so the bound
    # needs no term of its own.
    assert plan_cost(plan).expected_hourly <= 1.10 * lower_bound(planner)


def test_prices_come_from_the_plans_region():
    cat = catalog([{"name": "m", "architecture": "llama-3.1-8b", "instance_family": "g5"}])
    east, tokyo = plan_fleet(cat), plan_fleet(cat, region="ap-northeast-1")
    assert tokyo.region == "ap-northeast-1"
    e, t = east.endpoints.values(), tokyo.endpoints.values()
    assert sum(x.expected_hourly for x in t) > sum(x.expected_hourly for x in e)

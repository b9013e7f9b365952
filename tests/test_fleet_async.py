"""Batch work in the planner: ``latency_class: batch`` models on asynchronous endpoints when
the fitness functions favour them, scaling from zero, with their limits and the LP bound."""

from __future__ import annotations

import pytest

from fm_platform.fleet.deciding.kinds import ASYNC, IC, KINDS, SINGLE
from fm_platform.fleet.deciding.options import _options_on, _Shared
from fm_platform.fleet.outputs.bound import allowed_kinds, lower_bound
from fm_platform.fleet.outputs.report import explain
from fm_platform.fleet.placing.cost import plan_cost
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.hardware.instances import InstanceSpec
from fm_platform.hardware.prices import hourly_prices
from tests.fleet_support import catalog, example

NIGHTLY = {
    "name": "nightly",
    "architecture": "llama-3.1-8b",
    "latency_class": "batch",
    "peak_rpm": 2400,
    "active_hours": 4,
}


def test_a_batch_model_gets_an_asynchronous_endpoint_from_zero_with_its_reason():
    planner = Planner(catalog([NIGHTLY, {**NIGHTLY, "name": "chat", "latency_class": "standard"}]))
    plan = planner.run()
    p = plan.placements["nightly"]
    e = plan.endpoints[p.endpoint]
    assert (e.kind, e.name) == (ASYNC, "async-nightly")
    assert p.min_copies == 0 and e.min_instances == 0 and e.min_hourly == 0
    assert e.max_instances == p.max_copies > 1
    # Expected: its peak instances during its active hours, nothing otherwise.
    price = hourly_prices()[e.instance_type]
    assert e.expected_hourly == pytest.approx(4 / 24 * e.max_instances * price, abs=1e-3)
    assert e.scaling_target == p.concurrency  # backlog per instance = planned concurrency
    # batched, its copies cost the same on Inference Components: the queue is preferred
    assert "a queue preferred for batch work" in p.reason
    assert p.cold_start_s is not None and p.cold_start.startswith("instance launch 300 s")
    assert p.scale_to_zero.startswith("scales to zero: an empty queue needs no instance")
    # A model whose callers wait never gets one.
    assert plan.endpoints[plan.placements["chat"].endpoint].kind != ASYNC
    text = explain(planner, "chat")
    assert "asynchronous: for latency_class: batch only" in text
    assert "asynchronous" not in plan.placements["chat"].reason
    text = explain(planner, "nightly")
    assert "scaling target" in text and "(ApproximateBacklogSizePerInstance)" in text


def test_the_fitness_functions_decide_between_a_queue_and_real_time():
    # In the example catalog, steady batch work around the clock runs 128 sequences a
    # copy on one A100 of an instance it shares with the large models: cheaper than a
    # queue of its own.
    plan = plan_fleet(example(220))
    enricher = plan.placements["catalog-enricher"]
    assert plan.endpoints[enricher.endpoint].kind == IC
    assert enricher.reason.startswith("cost (score 0.50 x weight 1) decides over asynchronous")
    # Alone, the same model would leave most of that instance unfilled: it gets its queue.
    # A tenant's idle batch model: equal utility, the queue.
    plan = plan_fleet(
        catalog(
            [
                {**NIGHTLY, "name": "steady", "peak_rpm": 600, "active_hours": 24},
                {**NIGHTLY, "name": "tenant-batch", "tenant": "acme", "peak_rpm": 30},
            ]
        )
    )
    steady, tenant = plan.placements["steady"], plan.placements["tenant-batch"]
    assert plan.endpoints[steady.endpoint].kind == ASYNC
    assert "its own instances, none while idle, save" in steady.reason
    assert plan.endpoints[tenant.endpoint].kind == ASYNC
    assert "inference-components" in tenant.reason


def test_large_payloads_and_long_requests_need_the_asynchronous_endpoint():
    plan = plan_fleet(
        catalog(
            [
                {**NIGHTLY, "name": "contracts", "payload_mb": 12},
                # A 70B model writing 8,000 tokens: a request takes over a minute (85 s at
                # the 10.45 ms a token measured on ml.p4d.24xlarge), beyond the minute a
                # real-time endpoint allows; half an hour is fine for the caller.
                {
                    **NIGHTLY,
                    "name": "long",
                    "architecture": "llama-3.1-70b",
                    "output_tokens": 8000,
                    "latency_p50_ms": 1_800_000,
                },
            ]
        )
    )
    contracts = plan.placements["contracts"]
    assert plan.endpoints[contracts.endpoint].kind == ASYNC
    assert contracts.reason == (
        "the only option (single-model, inference-components, multi-model: payload_mb 12 "
        "exceeds the 6 MB a request body may have; serverless: payload_mb 12 exceeds the "
        "4 MB a request body may have)"
    )
    long = plan.placements["long"]
    assert plan.endpoints[long.endpoint].kind == ASYNC
    assert long.latency_ms > KINDS[SINGLE].max_request_s * 1000
    assert long.reason == (
        "the only option (single-model, inference-components: no instance type fits and "
        "answers within its 60 s request limit; multi-model: no instance type fits; "
        "serverless: text generation is not served on serverless endpoints (CPU only, no "
        "GPUs))"
    )


def test_real_time_kinds_serve_a_long_objective_within_a_minute():
    # 8B writing 4,000 tokens with half an hour allowed: real-time options exist (at a
    # lower concurrency), each answering within the minute; asynchronous ones may take
    # longer.
    long = {**NIGHTLY, "output_tokens": 4000, "latency_p50_ms": 1_800_000}
    planner = Planner(catalog([long]))
    planner.run()
    options = planner.assessed["nightly"].assessment.options
    assert options[IC] and options[SINGLE]
    for kind in (IC, SINGLE):
        assert all(o.perf.latency_ms <= 60_000 for o in options[kind])
    assert any(o.perf.latency_ms > 60_000 for o in options[ASYNC])


def test_asynchronous_options_skip_the_types_asynchronous_inference_does_not_run_on():
    # The package has no figures or prices for inf1 (so no plan offers it); a type with
    # them is rejected for the asynchronous kind by the construct's own rule.
    inf1 = InstanceSpec("ml.inf1.xlarge", 4, 8192, "inferentia", 1, 8192, False, 0)
    small = {
        "name": "small",
        "params_b": 1,
        "latency_class": "batch",
        "neuron_compiled": True,
        "rpm_per_copy": 60,
    }
    needs = resolve(catalog([small]).models[0], catalog([]))
    reasons: list[str] = []
    assert list(_options_on(needs, KINDS[ASYNC], inf1, 0.3, reasons, _Shared("us-east-1"))) == []
    assert reasons == [
        "asynchronous inference does not run on inf1 instances (SageMaker's supported "
        "features of each inference option); use inf2 or a GPU type, e.g. ml.g5.2xlarge"
    ]
    assert [
        o.kind for o in _options_on(needs, KINDS[SINGLE], inf1, 0.3, [], _Shared("us-east-1"))
    ] == [SINGLE]
    assert KINDS[ASYNC].type_problem("ml.inf2.xlarge") is None


def test_payload_limits_are_checked_against_the_latency_class():
    with pytest.raises(ValueError) as error:
        catalog(
            [
                {"name": "a", "params_b": 1, "payload_mb": 12},
                {"name": "b", "params_b": 1, "payload_mb": 2000, "latency_class": "batch"},
                {"name": "c", "params_b": 1, "payload_mb": 0},
                {"name": "d", "params_b": 1, "latency_class": "batchy"},
            ]
        )
    assert sorted(error.value.problems) == sorted(
        [
            "models[0].payload_mb=12: a real-time request body is at most 6 MB; larger ones "
            "need an asynchronous endpoint: set latency_class: batch (up to 1024 MB)",
            "models[1].payload_mb=2000: at most 1024 MB",
            "models[2].payload_mb=0: must be > 0",
            "models[3].latency_class='batchy': must be one of strict, standard, relaxed, batch",
        ]
    )


def test_the_bound_spans_every_kind_a_batch_model_may_take():
    planner = Planner(catalog([NIGHTLY, {**NIGHTLY, "name": "other", "peak_rpm": 30}]))
    plan = planner.run()
    assert {e.kind for e in plan.endpoints.values()} == {ASYNC}
    # Batch work may also take Inference Components copies scaled to zero: the relaxation
    # spans both kinds, and the plan is no cheaper than it.
    for name in plan.placements:
        assert {ASYNC, IC} <= set(allowed_kinds(planner.assessed[name]))
    assert lower_bound(planner) <= plan_cost(plan).expected_hourly + 1e-9


def test_a_model_that_stops_being_batch_work_leaves_its_asynchronous_endpoint():
    before = plan_fleet(catalog([NIGHTLY]))
    assert before.placements["nightly"].endpoint == "async-nightly"
    after = Planner(catalog([{**NIGHTLY, "latency_class": "relaxed"}]), before)
    plan = after.run()
    assert plan.endpoints[plan.placements["nightly"].endpoint].kind != ASYNC
    assert "async-nightly" not in plan.endpoints
    assert after.moves["nightly"].startswith(
        "asynchronous no longer allowed: for latency_class: batch only"
    )

"""Fallback pools in the planner: a model with ``fallback_instance_types`` gets its endpoint
up to four more types, cheapest first, on which every model fits at its planned
throughput; the cost stays at the endpoint's own type; the stacks write the plan's pools
into ``InstancePools`` (a single-model pool whose container differs gets its own model);
a change of pools on a re-plan is reported and replaces an Inference Components
endpoint."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from aws_cdk.assertions import Template
from cfnlint.api import ManualArgs, lint

from fm_platform.fleet.deciding.kinds import IC, KINDS, SINGLE
from fm_platform.fleet.outputs.changes import plan_changes
from fm_platform.fleet.outputs.plan import plan_from_json
from fm_platform.fleet.outputs.report import explain, summary
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.fleet.placing.pools import candidate_types
from fm_platform.stacks.fleet import fleet_stacks
from tests.fleet_support import catalog
from tests.support import nag_findings, new_app

MODELS: list[dict[str, Any]] = [
    {"name": "chat", "architecture": "llama-3.1-8b", "peak_rpm": 120, "instance_family": "g6e"},
    {
        "name": "big",
        "architecture": "qwen3-32b",
        "peak_rpm": 60,
        "active_hours": 4,
        "cold_start_tolerant": True,
    },
    {
        "name": "private",
        "architecture": "llama-3.1-8b",
        "isolation": "dedicated",
        "isolation_reason": "PII",
    },
    {
        "name": "nightly",
        "architecture": "llama-3.1-8b",
        "latency_class": "batch",
        "peak_rpm": 120,
        "active_hours": 4,
    },
]
#: ``big`` takes one device on ml.g7e.2xlarge and more on the 4-GPU ml.g6e types of its
#: list; ``chat`` (only g6e) falls back to any g6e type.
#: ``private`` may fall back to a 4-GPU type, where it runs tensor parallel 4.
IC_FALLBACKS = ["ml.g6e.12xlarge", "ml.g6e.24xlarge", "ml.g7e.2xlarge", "ml.g7e.4xlarge"]
ASKED = {
    "chat": "auto",
    "big": IC_FALLBACKS,
    "private": ["ml.g6e.12xlarge", "ml.g6e.2xlarge"],
    "nightly": "auto",
}


def _catalog(asked: dict[str, Any] | None = None):
    asked = ASKED if asked is None else asked
    return catalog(
        [
            {**m, "fallback_instance_types": asked[m["name"]]} if m["name"] in asked else m
            for m in MODELS
        ],
        name="pooled",
    )


@pytest.fixture(scope="module")
def planned():
    planner = Planner(_catalog())
    return planner, planner.run()


def _endpoint_of(plan, model):
    return plan.endpoints[plan.placements[model].endpoint]


def test_pools_are_up_to_four_other_types_cheapest_first(planned):
    _, plan = planned
    chat = _endpoint_of(plan, "chat")
    assert chat.kind == IC
    assert 1 <= len(chat.pools) <= 4
    assert len(chat.pools) == 4  # auto: the four cheapest
    assert [pool.priority for pool in chat.pools] == [2, 3, 4, 5]
    assert chat.instance_type not in chat.fallback_types
    assert all(t.startswith("ml.g6e.") for t in chat.fallback_types)  # its instance_family
    costs = [pool.expected_hourly for pool in chat.pools]
    assert costs == sorted(costs)


def test_every_model_fits_each_pool_at_its_planned_throughput(planned):
    _, plan = planned
    for e in plan.endpoints.values():
        for pool in e.pools:
            assert set(pool.models) == set(e.models)
            for name, shape in pool.models.items():
                assert shape.rpm_per_copy >= plan.placements[name].rpm_per_copy
    big = _endpoint_of(plan, "big")
    assert big.kind == IC
    assert set(big.fallback_types) <= set(IC_FALLBACKS)
    wider = {p.instance_type: p.models["big"].accelerators for p in big.pools}
    assert plan.placements["big"].accelerators == 1
    assert wider["ml.g6e.12xlarge"] == 4  # 61 GiB of weights over 48 GB devices


def test_a_list_limits_the_pools_to_its_types(planned):
    _, plan = planned
    private = _endpoint_of(plan, "private")
    assert private.kind == SINGLE
    assert private.fallback_types == ["ml.g6e.2xlarge", "ml.g6e.12xlarge"]  # by cost
    assert private.pools[1].models["private"].accelerators == 4


def test_kinds_without_instance_pools_get_none_and_explain_says_so(planned):
    planner, plan = planned
    nightly = _endpoint_of(plan, "nightly")
    assert not KINDS[nightly.kind].instance_pools
    assert nightly.pools == []
    assert "fallback pools: none (asynchronous endpoints take none; asked by nightly)" in (
        explain(planner, "nightly")
    )


def test_the_cost_stays_priced_at_the_endpoints_own_type(planned):
    _, plan = planned
    without = plan_fleet(_catalog({}))
    assert all(not e.pools for e in without.endpoints.values())
    assert {n: e.expected_hourly for n, e in plan.endpoints.items()} == {
        n: e.expected_hourly for n, e in without.endpoints.items()
    }
    assert "the cost above is at each endpoint's own type" in "\n".join(summary(plan, None))


def test_explain_says_why_each_pool_is_there(planned):
    planner, plan = planned
    text = explain(planner, "big")
    assert "fallback pools (asked by big; the cost above is at ml.g7e.2xlarge" in text
    for pool in _endpoint_of(plan, "big").pools:
        assert f"  {pool.priority}. {pool.instance_type}: the model fits at no less" in text
        assert "cheapest of" in pool.reason
    assert "this model 0-1 copies of 4 accelerators" in text


def test_the_plan_file_keeps_the_pools(planned):
    _, plan = planned
    again = plan_from_json(plan.to_json())
    assert {n: e.pools for n, e in again.endpoints.items()} == {
        n: e.pools for n, e in plan.endpoints.items()
    }


def test_a_replan_keeps_the_plan_files_pool_types_while_they_qualify(planned):
    _, plan = planned
    previous = plan_from_json(plan.to_json())
    chat = _endpoint_of(previous, "chat")
    chat.pools = list(reversed(chat.pools))  # another order that still qualifies
    replanned = plan_fleet(_catalog(), previous)
    kept = _endpoint_of(replanned, "chat")
    assert kept.fallback_types == chat.fallback_types
    assert all(pool.reason.endswith("kept from the plan file") for pool in kept.pools)


def test_a_pool_change_is_listed_and_replaces_an_inference_components_endpoint(planned):
    _, plan = planned
    without = plan_fleet(_catalog({}), plan_from_json(plan.to_json()))
    chat = _endpoint_of(plan, "chat").name
    lines = plan_changes(plan, without, {})
    assert any(
        line.startswith(f"endpoint {chat}: fallback pools ml.")
        and line.endswith("-> none (replaces the endpoint: docs/day2-changes.md)")
        for line in lines
    ), lines
    before = _endpoint_ids(plan, _catalog())
    after = _endpoint_ids(without, _catalog({}))
    assert before[chat] and after[chat]
    assert before[chat].isdisjoint(after[chat])


def _endpoint_ids(plan, cat) -> dict[str, set[str]]:
    ids: dict[str, set[str]] = {}
    for stack in fleet_stacks(new_app(), plan, cat).values():
        resources = Template.from_stack(stack).to_json()["Resources"]
        for e in plan.endpoints_in(stack.stack_name):
            stem = "".join(c for c in e.name if c.isalnum())
            ids[e.name] = {
                key
                for key, r in resources.items()
                if r["Type"] == "AWS::SageMaker::Endpoint" and stem in key
            }
    return ids


@pytest.fixture(scope="module")
def template(planned) -> dict[str, Any]:
    _, plan = planned
    (stack,) = fleet_stacks(new_app(), plan, _catalog()).values()
    resources: dict[str, Any] = Template.from_stack(stack).to_json()["Resources"]
    return resources


def _variant(resources: dict[str, Any], endpoint: str) -> dict[str, Any]:
    stem = "".join(c for c in endpoint if c.isalnum())
    (config,) = [
        r["Properties"]
        for key, r in resources.items()
        if r["Type"] == "AWS::SageMaker::EndpointConfig" and stem in key
    ]
    (variant,) = config["ProductionVariants"]
    return dict(variant)


def test_the_template_carries_the_plans_pools(planned, template):
    _, plan = planned
    for e in plan.endpoints.values():
        variant = _variant(template, e.name)
        if not e.pools:
            assert variant.get("InstanceType") == e.instance_type
            assert "InstancePools" not in variant
            continue
        assert "InstanceType" not in variant
        pools = [(p["InstanceType"], p["Priority"]) for p in variant["InstancePools"]]
        assert pools == [(e.instance_type, 1)] + [(p.instance_type, p.priority) for p in e.pools]


def _component(resources: dict[str, Any], model: str) -> dict[str, Any]:
    (component,) = [
        r["Properties"]
        for key, r in resources.items()
        if r["Type"] == "AWS::SageMaker::InferenceComponent" and f"Model{model}" in key
    ]
    return dict(component)


def test_components_reserve_the_plans_resources_on_each_pool(planned, template):
    _, plan = planned
    for name in ("chat", "big"):
        endpoint = _endpoint_of(plan, name)
        specs = {
            s["InstanceType"]: s["ComputeResourceRequirements"]
            for s in _component(template, name)["Specifications"]
        }
        p = plan.placements[name]
        expected = {endpoint.instance_type: (p.accelerators, p.cpu_cores, p.memory_mib)} | {
            pool.instance_type: (
                pool.models[name].accelerators,
                pool.models[name].cpu_cores,
                pool.models[name].memory_mib,
            )
            for pool in endpoint.pools
        }
        assert {
            t: (
                r["NumberOfAcceleratorDevicesRequired"],
                r.get("NumberOfCpuCoresRequired"),
                r["MinMemoryRequiredInMb"],
            )
            for t, r in specs.items()
        } == expected


def test_a_component_runs_a_model_of_its_own_where_its_tensor_parallelism_differs(
    planned, template
):
    _, plan = planned
    specs = {
        s["InstanceType"]: s["ModelName"]["Fn::GetAtt"][0]
        for s in _component(template, "big")["Specifications"]
    }
    own = specs[_endpoint_of(plan, "big").instance_type]
    wide = specs["ml.g6e.12xlarge"]
    assert wide != own
    environment = template[wide]["Properties"]["PrimaryContainer"]["Environment"]
    assert environment["OPTION_TENSOR_PARALLEL_DEGREE"] == "4"
    assert (
        template[own]["Properties"]["PrimaryContainer"]["Environment"][
            "OPTION_TENSOR_PARALLEL_DEGREE"
        ]
        == "1"
    )
    # Same role, network isolation and weights as the component's own model.
    for key in ("ExecutionRoleArn", "EnableNetworkIsolation"):
        assert template[wide]["Properties"].get(key) == template[own]["Properties"].get(key)
    assert (
        template[wide]["Properties"]["PrimaryContainer"]["ModelDataSource"]
        == template[own]["Properties"]["PrimaryContainer"]["ModelDataSource"]
    )


def test_a_single_model_pool_with_another_container_gets_its_own_model(planned, template):
    _, plan = planned
    private = _endpoint_of(plan, "private")
    pools = _variant(template, private.name)["InstancePools"]
    override = {p["InstanceType"]: p.get("ModelNameOverride") for p in pools}
    # one L40S runs more sequences than the A10G of the variant's type: a model of its own
    # with its concurrency, as the 4-GPU type with its tensor parallelism
    shapes = {pool.instance_type: pool.models["private"] for pool in private.pools}
    for instance_type, tp in (("ml.g6e.2xlarge", "1"), ("ml.g6e.12xlarge", "4")):
        (model_id,) = override[instance_type]["Fn::GetAtt"][:1]
        environment = template[model_id]["Properties"]["PrimaryContainer"]["Environment"]
        assert environment["OPTION_TENSOR_PARALLEL_DEGREE"] == tp
        concurrency = str(shapes[instance_type].concurrency)
        assert environment["OPTION_MAX_ROLLING_BATCH_SIZE"] == concurrency
    assert shapes["ml.g6e.2xlarge"].concurrency > plan.placements["private"].concurrency


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("always", "models[0].fallback_instance_types='always': 'auto' or a non-empty list"),
        ([], "models[0].fallback_instance_types=[]: 'auto' or a non-empty list"),
        (["ml.g9.xlarge"], "models[0].fallback_instance_types[0]='ml.g9.xlarge': not an"),
        (
            ["ml.g6e.xlarge", "ml.g6e.xlarge"],
            "models[0].fallback_instance_types='ml.g6e.xlarge': must be unique",
        ),
    ],
)
def test_bad_fallback_requests_are_refused_by_key(value, expected):
    with pytest.raises(ValueError) as error:
        catalog([{**MODELS[0], "fallback_instance_types": value}])
    assert expected in str(error.value)


def test_the_pooled_stacks_pass_the_three_compliance_packs(planned):
    _, plan = planned
    app = new_app()
    fleet_stacks(app, plan, _catalog())
    assert nag_findings(app) == []


@pytest.mark.slow  # cfn-lint
def test_the_pooled_stacks_are_cfn_lint_clean(planned):
    _, plan = planned
    app = new_app()
    fleet_stacks(app, plan, _catalog())
    for stack in app.synth().stacks:
        matches = lint(json.dumps(stack.template), config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_auto_allows_every_priced_type_and_lists_intersect():
    priced = ["ml.g5.xlarge", "ml.g6e.xlarge", "ml.g6e.2xlarge"]
    models = [
        dataclasses.replace(m, fallback_instance_types=asked)
        for m, asked in zip(
            catalog([{"name": f"m{i}", "params_b": 1} for i in range(3)]).models,
            ["auto", ["ml.g6e.xlarge", "ml.g6e.2xlarge"], None],
            strict=True,
        )
    ]
    assert candidate_types(models[2:], priced) is None  # nobody asks
    assert candidate_types(models[:1], priced) == set(priced)
    assert candidate_types(models, priced) == {"ml.g6e.xlarge", "ml.g6e.2xlarge"}

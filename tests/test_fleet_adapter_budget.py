"""The stack resource budget counts the LoRA adapter components on a base: one
``AWS::SageMaker::InferenceComponent`` each, and one output per base listing them."""

from __future__ import annotations

from fm_platform.fleet.deciding.kinds import ADAPTER_BASE_OUTPUTS, ADAPTER_RESOURCES
from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.placing.planner import Planner
from tests.fleet_support import catalog


def _base(name):
    return {"name": name, "architecture": "llama-3.1-8b", "cold_start_tolerant": False}


def _adapters(base, count):
    return [
        {
            "name": f"{base}-ft{i}",
            "base_model": base,
            "adapter": f"s3://adapters/{base}/{i}.tar.gz",
            "peak_rpm": 1,
        }
        for i in range(count)
    ]


def _planner(models):
    planner = Planner(planning_catalog(catalog(models)))
    planner.run()
    return planner


def test_each_adapter_adds_its_component_and_each_base_one_output():
    alone = _planner([_base("chat")])
    served = _planner([_base("chat"), *_adapters("chat", 30)])
    stack = served.plan.endpoints[served.plan.placements["chat"].endpoint].stack
    assert served.plan.placements["chat"].min_copies == alone.plan.placements["chat"].min_copies
    assert served.usage[stack][0] == alone.usage[stack][0] + 30 * ADAPTER_RESOURCES
    assert served.usage[stack][1] == alone.usage[stack][1] + ADAPTER_BASE_OUTPUTS


def test_bases_whose_adapters_would_overfill_a_stack_are_sharded_apart():
    # two bases with 200 adapters each: about 420 resources together, over the 400 budget
    chat, helper = ({**_base(n), "group": "assistants"} for n in ("chat", "help"))
    models = [chat, *_adapters("chat", 200), helper, *_adapters("help", 200)]
    planner = _planner(models)
    plan = planner.plan
    chat, helper = (plan.endpoints[plan.placements[n].endpoint] for n in ("chat", "help"))
    assert chat.name != helper.name and chat.stack != helper.stack
    assert all(used[0] <= planner.limits.stack_resources for used in planner.usage.values())
    # without adapters the two bases of the group share one endpoint
    plain = _planner(
        [{**_base(n), "group": "assistants", "peak_rpm": 201} for n in ("chat", "help")]
    ).plan
    assert plain.placements["chat"].endpoint == plain.placements["help"].endpoint

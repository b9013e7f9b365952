"""The fleet planner: catalog validation, hosting choice, groups, stability, sharding."""

from __future__ import annotations

import dataclasses
import gc
import os
import re
import subprocess
import sys

import pytest

from fm_platform.fleet.deciding.kinds import ASYNC, IC, MULTI, SINGLE
from fm_platform.fleet.models.catalog import ModelEntry, catalog_from_data, load_catalog
from fm_platform.fleet.outputs.plan import plan_from_json
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.hardware.instances import instance_spec
from tests.fleet_support import FAMILIES, catalog, catalog_data, example
from tests.support import ROOT


def test_example_catalog_loads_with_over_200_models():
    loaded = load_catalog(ROOT / "examples" / "catalog.yaml", FAMILIES)
    assert len(loaded.models) >= 200


def test_every_bad_entry_is_reported_at_once_with_its_path():
    with pytest.raises(ValueError) as error:
        catalog(
            [
                {"name": "a", "params_b": -1},
                {"name": "a", "params_b": 7, "dtype": "fp64"},
                {"name": "b", "params_b": "seven"},
                {"params_b": 1},
                {"name": "c", "params_b": 1, "isolation": "dedicated"},
                {"name": "d", "params_b": 1, "colour": "red"},
                {
                    "name": "e",
                    "params_b": 1,
                    "isolation": "dedicated",
                    "isolation_reason": "PII",
                    "group": "pool",
                },
                {"name": "f", "architecture": "llama-9"},
                {"name": "g", "params_b": 1, "weights": {"latency": -1, "speed": 2}},
                {"name": "h", "params_b": 1, "attention_heads": 12, "kv_heads": 5},
            ],
            tenants={"acme": {"weights": {"cost": "high"}}},
        )
    message = str(error.value)
    assert "models[0].params_b=-1: must be > 0" in message
    assert "models[1].dtype='fp64': must be one of fp32" in message
    assert "models[2].params_b='seven': must be a number or null" in message
    assert "missing keys: name" in message
    assert "models[4].isolation_reason=None: say why" in message
    assert "models[5].colour='red': unknown key" in message
    assert "models[6].group='pool': conflicts with isolation: dedicated" in message
    assert "models[7].architecture='llama-9'" in message
    assert "models[8].weights.latency=-1: must be a number >= 0" in message
    assert "models[8].weights.speed='speed'" in message
    assert "models[9].kv_heads=5: must divide attention_heads (12)" in message
    assert "tenants.acme.weights.cost='high': must be a number >= 0" in message
    assert "models[].name='a': must be unique" in message


def test_eight_mistakes_in_one_catalog_are_reported_in_one_run():
    # A misspelled key or a wrongly typed value no longer hides the other problems of its
    # item: every mistake comes out of the first run, each under its path, and nothing else
    # (item 2's wrongly typed architecture does not also read as "no size given").
    with pytest.raises(ValueError) as error:
        catalog(
            [
                {"name": "a", "params_b": -1, "peak_rpms": 60, "active_hours": "9"},
                {
                    "name": "b",
                    "params_b": 7,
                    "neuron_compiled": "yes",
                    "isolation": "dedicated",
                    "tennant": "acme",
                },
                {"name": "a", "architecture": 8},
            ]
        )
    assert sorted(error.value.problems) == sorted(
        [
            "models[0].peak_rpms=60: unknown key; did you mean peak_rpm?",
            "models[0].active_hours='9': must be a number",
            "models[0].params_b=-1: must be > 0",
            "models[1].neuron_compiled='yes': must be true or false",
            "models[1].isolation_reason=None: say why the model needs its own endpoint",
            "models[1].tennant='acme': unknown key; did you mean tenant?",
            "models[2].architecture=8: must be a string or null",
            "models[].name='a': must be unique; it appears more than once",
        ]
    )


def test_every_catalog_field_is_documented_in_the_planner_page_table():
    text = (ROOT / "docs" / "planner.md").read_text()
    table = text[text.index("## Catalog fields") : text.index("## The plan file")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert {f.name for f in dataclasses.fields(ModelEntry)} <= documented
    assert "| `payload_mb` | none (small) | MB" in table


def test_a_model_no_type_can_host_says_why_for_the_largest():
    with pytest.raises(ValueError) as error:
        plan_fleet(catalog([{"name": "huge", "params_b": 2000, "dtype": "fp32"}]))
    message = str(error.value)
    assert "models[0]='huge': no instance type in us-east-1 can host it" in message
    assert "the largest, ml.p6-b200.48xlarge: one copy needs" in message


def test_hosting_options_follow_the_guidance():
    plan = plan_fleet(example(220))
    kinds = {e.kind for e in plan.endpoints.values()}
    assert kinds == {IC, SINGLE, MULTI, ASYNC}
    assert plan.endpoints[plan.placements["summarizer-regulated"].endpoint].kind == SINGLE
    # the batch enricher takes a queue at equal cost, else the reason names the saving
    enricher = plan.placements["catalog-enricher"]
    assert (
        plan.endpoints[enricher.endpoint].kind == ASYNC
        and "a queue preferred for batch work" in enricher.reason
    ) or "decides over asynchronous" in enricher.reason
    # the nightly summarizer's own asynchronous endpoint is weighed against a copy on a
    # real-time endpoint with room: it wins at equal cost, else the reason names it
    summarizer = plan.placements["nightly-doc-summarizer"]
    assert (
        plan.endpoints[summarizer.endpoint].kind == ASYNC
        and "a queue preferred for batch work" in summarizer.reason
    ) or "decides over asynchronous" in summarizer.reason
    assert plan.endpoints[plan.placements["acme-minilm-l6-embedder"].endpoint].kind == MULTI
    llama70 = plan.placements["llama-3-1-70b-instruct"]
    assert plan.endpoints[llama70.endpoint].kind == IC and llama70.accelerators >= 4
    assert plan.placements["acme-mistral-7b-ft"].min_copies == 0  # idle 21 h: scales to zero


def test_every_placement_records_a_reason_and_where_its_throughput_comes_from():
    plan = plan_fleet(example(220))
    for p in plan.placements.values():
        assert p.reason and p.throughput in ("measured", "benchmark", "catalog", "estimated")
    data = plan.to_json()
    assert '"reason": "isolation' not in data  # isolation shows as the only option's why
    assert '"reason": "the only option (inference-components: isolation: dedicated' in data


def test_adding_or_removing_a_model_moves_no_other_model():
    base = catalog_data(300)
    before = plan_from_json(plan_fleet(catalog_from_data(base, FAMILIES)).to_json())
    extra = catalog_data(301)["models"][-1]
    grown = plan_fleet(
        catalog_from_data({**base, "models": [*base["models"], extra]}, FAMILIES), before
    )
    shrunk = plan_fleet(catalog_from_data({**base, "models": base["models"][1:]}, FAMILIES), before)
    for after in (grown, shrunk):
        for name, placement in after.placements.items():
            if name in before.placements:
                assert placement.endpoint == before.placements[name].endpoint
                assert after.endpoints[placement.endpoint].stack == (
                    before.endpoints[placement.endpoint].stack
                )
    assert set(grown.placements) - set(before.placements) == {extra["name"]}


def test_replanning_with_the_plan_file_changes_nothing():
    cat = example(250)
    first = plan_fleet(cat)
    assert plan_fleet(cat, plan_from_json(first.to_json())).to_json() == first.to_json()


def test_a_plan_for_another_catalog_is_reported():
    before = plan_fleet(catalog([{"name": "m", "architecture": "llama-3.1-8b"}]))
    with pytest.raises(ValueError) as error:
        plan_fleet(catalog([{"name": "m", "architecture": "llama-3.1-8b"}], "other"), before)
    assert "plan.catalog='fleet': the plan file is for catalog 'fleet', not 'other'" in str(
        error.value
    )


def test_stacks_stay_within_cloudformation_budgets():
    plan = plan_fleet(example(1000))
    assert len(plan.stacks) > 1
    assert max(len(plan.endpoints_in(s)) for s in plan.stacks) * 2 + 3 <= 200


def test_models_sharing_a_group_share_one_endpoint():
    plan = plan_fleet(
        catalog(
            [
                {"name": "a", "architecture": "llama-3.1-8b", "group": "pool"},
                {"name": "b", "architecture": "mistral-7b-v0.3", "group": "pool"},
                {"name": "c", "architecture": "llama-3.1-8b"},
            ]
        )
    )
    assert plan.placements["a"].endpoint == plan.placements["b"].endpoint
    assert plan.placements["a"].endpoint.startswith("ic-pool-")
    assert plan.placements["c"].endpoint != plan.placements["a"].endpoint


def test_a_group_of_models_whose_best_types_differ_is_sized_on_its_endpoints_type():
    # Alone, the 8B model's cheapest copy is on another type than the 32B model's; the
    # group's one endpoint has one type, and every member is sized (memory, rpm) on it.
    data = [
        {"name": "small", "architecture": "llama-3.1-8b", "peak_rpm": 600, "group": "g1"},
        {"name": "large", "architecture": "qwen3-32b", "peak_rpm": 60, "group": "g1"},
    ]
    planner = Planner(catalog(data))
    plan = planner.run()
    endpoint = plan.endpoints[plan.placements["small"].endpoint]
    assert plan.placements["large"].endpoint == endpoint.name
    for name in ("small", "large"):
        options = planner.assessed[name].assessment.options[IC]
        on_type = next(o for o in options if o.instance_type == endpoint.instance_type)
        assert plan.placements[name].rpm_per_copy == pytest.approx(on_type.perf.rpm, rel=1e-3)
        assert "chosen for group g1's models together" in plan.placements[name].reason
    again = Planner(catalog(data), previous=plan_from_json(plan.to_json())).run()
    assert again.placements["small"].rpm_per_copy == plan.placements["small"].rpm_per_copy


def test_neuron_types_only_for_models_compiled_for_neuron():
    plan = plan_fleet(
        catalog(
            [
                {
                    "name": "neuron",
                    "architecture": "llama-3.1-8b",
                    "neuron_compiled": True,
                    "instance_family": "inf2",
                },
                {"name": "gpu", "architecture": "llama-3.1-8b", "instance_family": "inf2"},
            ][:1]
        )
    )
    assert plan.endpoints[plan.placements["neuron"].endpoint].instance_type.startswith("ml.inf2.")
    with pytest.raises(ValueError, match="Neuron types run only models compiled for Neuron"):
        plan_fleet(
            catalog([{"name": "gpu", "architecture": "llama-3.1-8b", "instance_family": "inf2"}])
        )


def test_bf16_models_never_land_on_gpus_without_bf16():
    models = [
        {"name": f"m{i}", "architecture": a, "peak_rpm": 60}
        for i, a in enumerate(["qwen2.5-14b", "phi-3-medium-4k", "gemma-2-27b", "starcoder2-15b"])
    ]
    planner = Planner(catalog(models))
    plan = planner.run()
    for e in plan.endpoints.values():
        assert not e.instance_type.startswith(("ml.g4dn.", "ml.p3.")), e
    rejected = planner.assessed["m0"].assessment.rejected["ml.g4dn.12xlarge"]
    assert (
        rejected
        == "T4 (compute capability 7.5) has no bf16; set allow_fp16 to run the model as fp16"
    )
    fp16 = plan_fleet(
        catalog(
            [
                {
                    "name": "t4",
                    "architecture": "phi-3-mini-4k",
                    "allow_fp16": True,
                    "instance_family": "g4dn",
                }
            ]
        )
    )
    assert plan.endpoints and fp16.endpoints[
        fp16.placements["t4"].endpoint
    ].instance_type.startswith("ml.g4dn.")


def test_generative_models_never_land_on_cpu_or_multi_model_endpoints():
    models = [
        {
            "name": "small-llm",
            "params_b": 1.5,
            "cold_start_tolerant": True,
            "framework": "pytorch",
            "peak_rpm": 10,
            "active_hours": 2,
        },
        {
            "name": "tiny-llm",
            "architecture": "llama-3.2-1b",
            "cold_start_tolerant": True,
            "peak_rpm": 10,
            "active_hours": 2,
        },
    ]
    plan = plan_fleet(catalog(models))
    for p in plan.placements.values():
        endpoint = plan.endpoints[p.endpoint]
        assert endpoint.kind != MULTI
        assert instance_spec(endpoint.instance_type).is_accelerated


_PLAN_EXAMPLE = (
    "from fm_platform.fleet.models.catalog import load_catalog\n"
    "from fm_platform.fleet.deciding.options import family_types\n"
    "from fm_platform.fleet.placing.planner import plan_fleet\n"
    "catalog = load_catalog('examples/catalog.yaml', family_types('us-east-1'))\n"
    "print(plan_fleet(catalog).to_json())\n"
)


def test_a_plan_does_not_depend_on_the_processs_string_hashing():
    # equal-cost moves between instance types were once taken in the order of a set of
    # type names, which differs from one process to the next
    plans = {
        subprocess.run(
            [sys.executable, "-c", _PLAN_EXAMPLE],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "6")
    }
    assert len(plans) == 1


def test_each_grouped_model_is_explained_by_its_own_group():
    entry = {"params_b": 8, "latency_class": "standard", "peak_rpm": 30}
    plan = plan_fleet(
        catalog(
            [{**entry, "name": "a1", "group": "alpha"}, {**entry, "name": "b1", "group": "beta"}]
        )
    )
    assert "group alpha" in plan.placements["a1"].reason
    assert "group beta" in plan.placements["b1"].reason
    assert "alpha" not in plan.placements["b1"].reason


def test_hub_models_get_inference_components_endpoints_of_their_own():
    # an endpoint's network isolation applies to every model on it; a hub model downloads
    entry = {"architecture": "llama-3.2-3b", "peak_rpm": 30, "active_hours": 8}
    hub = {"hub": "meta-llama/Llama-3.1-8B-Instruct", "revision": "abc"}
    models = [
        {**entry, "name": "s3-a"},
        {**entry, "name": "s3-b"},
        {**entry, "name": "hub-a", **hub},
    ]
    plan = plan_fleet(catalog(models))
    assert plan.placements["s3-a"].endpoint == plan.placements["s3-b"].endpoint
    assert plan.placements["hub-a"].endpoint != plan.placements["s3-a"].endpoint
    hub_endpoint = plan.endpoints[plan.placements["hub-a"].endpoint]
    assert hub_endpoint.kind == IC and re.fullmatch(r"ic-[a-z0-9]+-hub-\d{3}", hub_endpoint.name)
    # a plan that had the hub model beside the others moves it, and says why
    shared = plan_from_json(plan.to_json())
    s3_endpoint = shared.placements["s3-a"].endpoint
    shared.endpoints[s3_endpoint].models.append("hub-a")
    shared.placements["hub-a"].endpoint = s3_endpoint
    del shared.endpoints[hub_endpoint.name]
    planner = Planner(catalog(models), shared)
    replanned = planner.run()
    assert replanned.placements["hub-a"].endpoint != s3_endpoint
    assert planner.moves["hub-a"] == (
        "it downloads its weights from the hub and its endpoint is network-isolated; hub "
        "models get endpoints of their own"
    )


def test_planning_leaves_the_garbage_collector_as_it_found_it():
    plan_fleet(example(10))
    assert gc.isenabled()
    gc.disable()
    try:
        plan_fleet(example(10))
        assert not gc.isenabled()
    finally:
        gc.enable()

"""The fleet planner: catalog validation, hosting choice, packing, stability, cost."""

from __future__ import annotations

import sys

import pytest

from fm_platform.fleet.catalog import catalog_from_data, load_catalog
from fm_platform.fleet.cost import dedicated_cost, lower_bound, plan_cost
from fm_platform.fleet.fitness import score
from fm_platform.fleet.plan import plan_from_json
from fm_platform.fleet.planner import IC, MULTI, SINGLE, plan_fleet, repack_moves
from fm_platform.fleet.sizing import copy_memory_gib, families
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "examples"))
from catalog_generator import catalog_data  # noqa: E402


def catalog(models, name="fleet"):
    return catalog_from_data({"name": name, "models": models}, families())


def example(count):
    return catalog_from_data(catalog_data(count), families())


def test_example_catalog_loads_with_over_200_models():
    loaded = load_catalog(ROOT / "examples" / "catalog.yaml", families())
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
            ]
        )
    message = str(error.value)
    assert "models[0].params_b=-1: must be > 0" in message
    assert "models[1].dtype='fp64': must be one of fp32" in message
    assert "models[2].params_b='seven': must be a number or null" in message
    assert "missing keys: name" in message
    assert "models[4].isolation_reason=None: say why" in message
    assert "models[5].colour='red': unknown key" in message
    assert "models[6].group='pool': conflicts with isolation: dedicated" in message
    assert "models[].name='a': must be unique" in message


def test_a_model_fitting_no_instance_type_says_what_it_needs_and_the_largest():
    with pytest.raises(ValueError) as error:
        plan_fleet(catalog([{"name": "huge", "params_b": 405, "dtype": "fp32"}]))
    message = str(error.value)
    assert "models[0].params_b=405" in message
    assert "needs 1811.5 GiB of accelerator memory" in message
    assert "largest: ml.p5.48xlarge, 640 GiB" in message


def test_memory_is_weights_plus_stated_overhead():
    (model,) = catalog([{"name": "m", "params_b": 7.0}]).models
    assert copy_memory_gib(model) == pytest.approx(7e9 * 2 / 1024**3 * 1.2 + 1)


def test_hosting_options_follow_the_guidance():
    plan = plan_fleet(example(220))
    kinds = {e.kind for e in plan.endpoints.values()}
    assert kinds == {IC, SINGLE, MULTI}
    assert plan.endpoints[plan.placements["summarizer-regulated"].endpoint].kind == SINGLE
    assert plan.endpoints[plan.placements["search-embedder-realtime"].endpoint].kind == SINGLE
    assert plan.endpoints[plan.placements["acme-minilm-l6-embedder"].endpoint].kind == MULTI
    llama70 = plan.placements["llama-3-1-70b-instruct"]
    assert plan.endpoints[llama70.endpoint].kind == IC and llama70.accelerators == 8
    assert plan.placements["acme-mistral-7b-ft"].min_copies == 0  # idle: scales to zero


def test_packing_stays_near_the_lower_bound_and_halves_cost():
    cat = example(1000)
    plan = plan_fleet(cat)
    assert plan_cost(plan).min_instances <= 1.1 * lower_bound(plan)
    assert plan_cost(plan).min_hourly < 0.6 * dedicated_cost(cat).min_hourly


def test_fitness_scores_are_normalised_and_follow_their_rules():
    models = example(40).models
    for model in models:
        assert all(0 <= v <= 1 for v in score(model).values())
    by_name = {m.name: score(m) for m in models}
    assert by_name["summarizer-regulated"].isolation == 1.0
    assert by_name["llama-3-1-70b-instruct"].model_size > by_name["flan-t5-xxl"].model_size


def test_adding_or_removing_a_model_moves_no_other_model():
    base = example(300)
    before = plan_from_json(plan_fleet(base).to_json())
    added = catalog_from_data(
        {
            **catalog_data(300),
            "models": [*catalog_data(300)["models"], catalog_data(301)["models"][-1]],
        },
        families(),
    )
    grown = plan_fleet(added, before)
    shrunk = plan_fleet(
        catalog_from_data(
            {**catalog_data(300), "models": catalog_data(300)["models"][1:]}, families()
        ),
        before,
    )
    for after in (grown, shrunk):
        for name, placement in after.placements.items():
            if name in before.placements:
                assert placement.endpoint == before.placements[name].endpoint
                assert after.endpoints[placement.endpoint].stack == (
                    before.endpoints[placement.endpoint].stack
                )
    assert set(grown.placements) - set(before.placements) == {
        catalog_data(301)["models"][-1]["name"]
    }


def test_repack_lists_moves_and_replan_without_it_keeps_everything():
    small = example(60)
    kept = plan_fleet(small)
    # Plan a catalog in two halves: the second half is placed around the first.
    first = catalog_from_data(
        {**catalog_data(60), "models": catalog_data(60)["models"][::2]}, families()
    )
    incremental = plan_fleet(small, plan_fleet(first))
    assert repack_moves(incremental, incremental) == []
    moves = repack_moves(incremental, kept)
    assert all(now != after for _, now, after in moves)


def test_a_plan_no_longer_matching_the_catalog_is_reported_with_paths():
    before = plan_fleet(catalog([{"name": "m", "params_b": 7}, {"name": "n", "params_b": 1}]))
    with pytest.raises(ValueError) as error:
        plan_fleet(
            catalog([{"name": "m", "params_b": 13}, {"name": "n", "params_b": 1}], "other"), before
        )
    message = str(error.value)
    assert "models[0].params_b=13: changed since the plan file (was 7)" in message
    assert "plan.catalog='fleet': the plan file is for catalog 'fleet', not 'other'" in message


def test_stacks_stay_within_cloudformation_budgets():
    plan = plan_fleet(example(1000))
    assert len(plan.stacks) > 1
    assert max(len(plan.endpoints_in(s)) for s in plan.stacks) * 2 + 3 <= 200


def test_replanning_with_the_plan_file_changes_nothing():
    cat = example(250)
    first = plan_fleet(cat)
    assert plan_fleet(cat, plan_from_json(first.to_json())).to_json() == first.to_json()


def test_models_sharing_a_group_share_one_endpoint():
    plan = plan_fleet(
        catalog(
            [
                {"name": "a", "params_b": 7, "group": "pool"},
                {"name": "b", "params_b": 13, "group": "pool"},
                {"name": "c", "params_b": 7},
            ]
        )
    )
    assert plan.placements["a"].endpoint == plan.placements["b"].endpoint == "ic-pool-001"
    assert plan.placements["c"].endpoint != "ic-pool-001"


def test_inferentia_only_when_the_model_asks_for_it():
    plan = plan_fleet(
        catalog(
            [
                {"name": "neuron", "params_b": 7, "instance_family": "inf2"},
                {"name": "gpu", "params_b": 7},
            ]
        )
    )
    types = {n: plan.endpoints[p.endpoint].instance_type for n, p in plan.placements.items()}
    assert types["neuron"].startswith("ml.inf2.") and not types["gpu"].startswith("ml.inf2.")

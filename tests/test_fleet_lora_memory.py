"""A base model's copies reserve room for its LoRA adapters: each adapter's weights from its
rank and the base's architecture, one slot per adapter at the largest rank, recorded in the
plan's memory parts, shown by ``--explain`` and written into LMI's environment."""

from __future__ import annotations

import json

import pytest

from fm_platform.containers.environment import ServingSettings, serving_environment
from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.outputs.report import explain
from fm_platform.fleet.placing.planner import Planner
from fm_platform.fleet.sizing.needs import GIB, lora_adapter_bytes, resolve
from tests.fleet_support import catalog

BASE = {"name": "chat", "architecture": "llama-3.1-8b", "peak_rpm": 30}


def _adapter(name, rank=None):
    entry = {"name": name, "base_model": "chat", "adapter": f"s3://team-adapters/{name}.tar.gz"}
    return entry if rank is None else {**entry, "adapter_rank": rank}


def test_one_adapter_is_rank_times_the_attention_projections_dimensions_times_layers():
    # Llama-3.1-8B: hidden 4096, 32 heads and 8 KV heads of 128, 32 layers; bf16 values.
    # q and o: 4096 + 4096 each; k and v: 4096 + 1024 each -> 26,624 per layer and rank.
    size = lora_adapter_bytes(
        16, hidden=4096, heads=32, kv_heads=8, head_dim=128, layers=32, value_bytes=2
    )
    assert size == 16 * 26_624 * 32 * 2 == 27_262_976  # 26 MiB
    assert (
        lora_adapter_bytes(
            64, hidden=4096, heads=32, kv_heads=8, head_dim=128, layers=32, value_bytes=2
        )
        == 4 * size
    )


def test_the_base_reserves_one_slot_per_adapter_at_the_largest_rank():
    data = catalog([BASE, _adapter("a"), _adapter("b", 64), _adapter("c", 8)])
    needs = resolve(data.models[0], data)
    per_slot = lora_adapter_bytes(
        64, hidden=4096, heads=32, kv_heads=8, head_dim=128, layers=32, value_bytes=2
    )
    assert needs.lora_slots == 3 and needs.lora_rank == 64
    assert needs.adapters_gib == pytest.approx(3 * per_slot / GIB)
    assert "adapter_rank" in needs.defaults  # adapter a gave none: rank 16 assumed
    plain = resolve(data.models[0], catalog([BASE]))
    assert plain.adapters_gib == 0 and plain.lora_slots == 0
    assert needs.copy_gib(1, 8) == pytest.approx(plain.copy_gib(1, 8) + needs.adapters_gib)
    given = catalog([BASE, _adapter("a", 16)])
    assert "adapter_rank" not in resolve(given.models[0], given).defaults


def test_the_plan_records_the_adapters_memory_and_explain_prints_it():
    data = catalog([BASE, *(_adapter(f"tenant-{i}") for i in range(20))])
    planner = Planner(planning_catalog(data))
    plan = planner.run()
    record = json.loads(plan.to_json())["placements"][0]
    parts = record["memory_parts"]
    expected = 20 * lora_adapter_bytes(
        16, hidden=4096, heads=32, kv_heads=8, head_dim=128, layers=32, value_bytes=2
    )
    assert parts["adapters_gib"] == round(expected / GIB, 2) == 0.51
    assert abs(record["device_memory_gib"] - sum(parts.values())) < 0.02
    text = explain(planner, "chat")
    assert "+ adapters 0.51 GiB (20 LoRA slots at rank 16)" in text
    alone = json.loads(Planner(catalog([BASE])).run().to_json())["placements"][0]
    assert "adapters_gib" not in alone["memory_parts"]


def test_lmi_is_told_how_many_adapters_and_their_largest_rank():
    settings = ServingSettings(
        family="lmi",
        hardware="gpu",
        task="text-generation",
        tensor_parallel=1,
        max_concurrency=16,
        max_model_len=8192,
        max_input_tokens=7936,
        adapters=3,
        max_lora_rank=64,
    )
    env = serving_environment(settings)
    assert env["OPTION_ENABLE_LORA"] == "true"
    assert env["OPTION_MAX_LORAS"] == "3" and env["OPTION_MAX_LORA_RANK"] == "64"
    no_adapters = serving_environment(ServingSettings(**{**settings.__dict__, "adapters": 0}))
    assert not {"OPTION_ENABLE_LORA", "OPTION_MAX_LORAS", "OPTION_MAX_LORA_RANK"} & set(no_adapters)


def test_an_adapter_rank_must_be_positive_and_belong_to_an_adapter():
    with pytest.raises(ValueError) as error:
        catalog([BASE, _adapter("a", 0), {**BASE, "name": "other", "adapter_rank": 8}])
    text = str(error.value)
    assert "models[1].adapter_rank=0: must be > 0" in text
    assert "models[2].adapter_rank=8: needs base_model and adapter" in text


def test_a_model_like_a_base_but_without_its_adapters_reserves_no_room_for_them():
    adapters = [{**_adapter(f"tenant-{i}"), "peak_rpm": 0} for i in range(20)]
    data = catalog([BASE, {**BASE, "name": "twin"}, *adapters])
    plan = json.loads(Planner(planning_catalog(data)).run().to_json())
    parts = {r["name"]: r["memory_parts"] for r in plan["placements"]}
    assert parts["chat"]["adapters_gib"] == 0.51
    assert "adapters_gib" not in parts["twin"]

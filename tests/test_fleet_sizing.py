"""Memory from the architecture: weights, KV cache per token, context and concurrency,
tensor parallelism; the LMI container's instance-type guidance."""

from __future__ import annotations

import pytest

from fm_platform.fleet.architectures import architecture
from fm_platform.fleet.planner import plan_fleet
from fm_platform.fleet.sizing import GIB, resolve
from tests.fleet_support import catalog


def needs(**fields):
    cat = catalog([{"name": "m", **fields}])
    return resolve(cat.models[0], cat)


def test_kv_cache_per_token_is_layers_kv_heads_head_dim_two_bytes():
    # FACTS: Llama-3.1-70B 320 KiB, Llama-3.1-8B and Mixtral-8x7B 128 KiB per token.
    assert needs(architecture="llama-3.1-70b").kv_bytes_per_token == 320 * 1024
    assert needs(architecture="llama-3.1-8b").kv_bytes_per_token == 128 * 1024
    assert needs(architecture="mixtral-8x7b").kv_bytes_per_token == 128 * 1024
    custom = needs(params_b=7, layers=10, kv_heads=2, head_dim=64)
    assert custom.kv_bytes_per_token == 10 * 2 * 64 * 2 * 2
    assert "kv_cache" in needs(params_b=7).defaults  # no architecture: a flagged default


def test_one_128k_token_sequence_of_an_8b_model_needs_16_gib():
    n = needs(architecture="llama-3.1-8b", context_tokens=131072, concurrency=1)
    assert n.kv_gib(1, 1) == pytest.approx(16.0)
    assert n.copy_gib(1, 1) == pytest.approx(8.03e9 * 2 / GIB + 16.0)


def test_an_8b_model_gets_more_than_3_gib_for_its_kv_cache_by_default():
    n = needs(architecture="llama-3.1-8b")
    assert (n.context_tokens, n.concurrency) == (8192, 16)  # standard class defaults
    assert n.kv_gib(1, n.concurrency) == pytest.approx(16.0)
    assert {"context_tokens", "concurrency"} <= set(n.defaults)


def test_kv_heads_are_replicated_when_tensor_parallelism_exceeds_them():
    n = needs(architecture="starcoder2-15b")  # 4 KV heads
    assert n.kv_gib(8, 1) == pytest.approx(2 * n.kv_gib(4, 1))


def test_tensor_parallelism_must_divide_the_attention_heads():
    n = needs(params_b=7, layers=32, attention_heads=12, kv_heads=4, head_dim=128)
    assert n.tp_allowed(4) and not n.tp_allowed(8)


@pytest.mark.parametrize(("arch", "gpus"), [("qwen2.5-14b", 4), ("qwen2.5-32b", 8)])
def test_a10g_copies_follow_the_lmi_instance_type_guidance(arch, gpus):
    # deepjavalibrary/djl-serving instance-type-selection.md: ~13-20B -> 4 x A10G
    # (ml.g5.12xlarge), ~35B -> 8 x A10G (ml.g5.48xlarge).
    plan = plan_fleet(catalog([{"name": "m", "architecture": arch, "instance_family": "g5"}]))
    assert plan.placements["m"].accelerators == gpus


def test_mixture_of_experts_computes_with_its_active_parameters():
    arch = architecture("mixtral-8x7b")
    n = needs(architecture="mixtral-8x7b")
    assert n.params_b == arch.params_b and n.active_params_b == pytest.approx(12.9)


def test_memory_gib_replaces_weights_and_kv_cache():
    assert needs(params_b=7, memory_gib=30).copy_gib(2, 16) == 30

"""Memory from the architecture: weights, KV cache per token, context and concurrency,
tensor parallelism; the LMI container's instance-type guidance."""

from __future__ import annotations

import pytest

from fm_platform.fleet.models.architectures import architecture
from fm_platform.fleet.placing.planner import plan_fleet
from fm_platform.fleet.sizing.needs import GIB, Resolver, resolve
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


def test_one_128k_token_sequence_of_an_8b_model_needs_16_gib_plus_headroom():
    n = needs(architecture="llama-3.1-8b", context_tokens=131072, concurrency=1)
    assert n.kv_gib(1, 1) == pytest.approx(16.0)
    # headroom: 0.5 GiB of CUDA graphs + 2,048 batched tokens x 4,096 x 32 bytes + logits
    headroom = 0.5 + (2048 * 4096 * 32 + 128256 * 4) / GIB
    assert n.headroom_gib(1, 1) == pytest.approx(headroom)
    parts = n.parts(1, 1)
    assert parts.device_gib == pytest.approx(8.03e9 * 2 / GIB + 16.0 + headroom)
    assert (parts.weights_gib, parts.kv_pool_gib) == pytest.approx((8.03e9 * 2 / GIB, 16.0))


def test_the_kv_pool_is_paged_for_the_planned_requests_with_one_full_context_guaranteed():
    n = needs(architecture="llama-3.1-8b")
    # the standard class's context; concurrency at most the engine's limit (chosen per type)
    assert (n.context_tokens, n.concurrency) == (8192, 256)
    # 16 sequences of 1,024 + 256 tokens, not 16 full contexts (the old 16 GiB)
    assert n.kv_gib(1, 16) == pytest.approx(16 * 1280 * 128 * 1024 / GIB)
    # two such sequences are less than one full context: the context is guaranteed
    assert n.kv_gib(1, 2) == pytest.approx(8192 * 128 * 1024 / GIB)
    assert "context_tokens" in n.defaults and "concurrency" not in n.defaults


def test_sliding_window_layers_hold_at_most_their_window():
    n = needs(architecture="gemma-3-27b", context_tokens=131072, concurrency=1)
    arch = architecture("gemma-3-27b")
    full = arch.kv_bytes_per_token_per_byte * 2 * 131072 / GIB
    global_layers = arch.layers - arch.sliding_window_layers
    expected = (
        full * global_layers / arch.layers
        + full * (arch.sliding_window_layers / arch.layers) * 1024 / 131072
    )
    assert n.kv_gib(1, 1) == pytest.approx(expected)
    assert n.kv_gib(1, 1) < full / 5


def test_non_generative_models_keep_no_kv_cache_and_size_their_pipeline():
    flux = needs(architecture="flux.1-dev")
    assert flux.task == "image-generation" and flux.kv_gib(1, 16) == 0
    # FLUX.1-dev bf16 on an H100: 36,651 MB peak (microsoft/onnxruntime PR 22986)
    assert flux.copy_gib(1, 1) == pytest.approx(36651 / 1024, rel=0.05)
    whisper = needs(architecture="whisper-large-v3")
    assert whisper.task == "speech-to-text" and whisper.kv_gib(1, 4) == 0
    assert whisper.request_flops > 0 and whisper.decode_bytes_per_token > 0
    bert = needs(architecture="bert-base-uncased", dtype="fp32")
    assert bert.kv_gib(1, 1) == 0 and bert.weights_gib == pytest.approx(0.110e9 * 4 / GIB)


def test_an_unknown_family_is_sized_from_catalog_fields_and_says_what_was_assumed():
    n = needs(params_b=7)
    assert {"kv_cache", "hidden_size"} <= set(n.defaults)
    # grouped-query attention assumed (Llama-3.1-8B per parameter), not multi-head
    assert n.kv_bytes_per_token == pytest.approx(128 * 1024 * 7 / 8.03)
    given = needs(params_b=7, layers=28, kv_heads=4, head_dim=128, attention_heads=28)
    assert "kv_cache" not in given.defaults and "hidden_size" not in given.defaults
    assert given.hidden_size == 28 * 128


def test_kv_heads_are_replicated_when_tensor_parallelism_exceeds_them():
    n = needs(architecture="starcoder2-15b")  # 4 KV heads
    assert n.kv_gib(8, 1) == pytest.approx(2 * n.kv_gib(4, 1))


def test_tensor_parallelism_must_divide_the_attention_heads():
    n = needs(params_b=7, layers=32, attention_heads=12, kv_heads=4, head_dim=128)
    assert n.tp_allowed(4) and not n.tp_allowed(8)


@pytest.mark.parametrize(
    ("arch", "instance_type", "gpus"),
    [("qwen2.5-14b", "ml.g5.12xlarge", (2, 4)), ("qwen2.5-32b", "ml.g5.48xlarge", (8,))],
)
def test_a10g_copies_follow_the_lmi_instance_type_guidance(arch, instance_type, gpus):
    # deepjavalibrary/djl-serving instance-type-selection.md: ~13-20B -> 4 x A10G
    # (ml.g5.12xlarge), ~35B -> 8 x A10G (ml.g5.48xlarge). A 14B copy fits two of the
    # four A10Gs (28 GiB of weights in 40 GiB usable): its Inference Components copies
    # may take two devices each on the same instance, at the same cost.
    plan = plan_fleet(catalog([{"name": "m", "architecture": arch, "instance_family": "g5"}]))
    p = plan.placements["m"]
    assert plan.endpoints[p.endpoint].instance_type == instance_type
    assert p.accelerators in gpus


def test_mixture_of_experts_computes_with_its_active_parameters():
    arch = architecture("mixtral-8x7b")
    n = needs(architecture="mixtral-8x7b")
    assert n.params_b == arch.params_b and n.active_params_b == pytest.approx(12.9)


def test_memory_gib_replaces_weights_and_kv_cache():
    assert needs(params_b=7, memory_gib=30).copy_gib(2, 16) == 30


def test_models_alike_but_for_name_and_traffic_resolve_as_each_would_alone():
    entries = [
        {"name": "a", "architecture": "llama-3.1-8b", "peak_rpm": 30, "active_hours": 8},
        {"name": "b", "architecture": "llama-3.1-8b", "peak_rpm": 90, "active_hours": 24},
        {"name": "c", "architecture": "llama-3.1-8b"},  # peak_rpm a flagged default
        {"name": "d", "architecture": "llama-3.1-8b", "dtype": "int8"},
    ]
    cat = catalog(entries)
    resolver = Resolver(cat)
    shared = [resolver(m) for m in cat.models]
    assert shared == [resolve(m, cat) for m in cat.models]
    assert [n.peak_rpm for n in shared[:2]] == [30.0, 90.0]
    assert "peak_rpm" in shared[2].defaults and "peak_rpm" not in shared[0].defaults
    assert shared[3].weights_gib < shared[0].weights_gib

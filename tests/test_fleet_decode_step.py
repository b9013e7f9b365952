"""The decode step per device family (fm_platform/fleet/sizing/decode_step.py) and the experts a
mixture of experts reads per step (Needs.weights_read_bytes)."""

from __future__ import annotations

import pytest

from fm_platform.fleet.sizing.accuracy import _text_rows, leave_one_out, neuron_points
from fm_platform.fleet.sizing.decode_step import GPU, NEURON, DecodeConstants, DecodePoint, fit
from fm_platform.fleet.sizing.decode_step import for_device as constants_for
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.fleet.sizing.performance import decode_estimate
from fm_platform.hardware.devices import device
from fm_platform.hardware.instances import instance_spec
from tests.fleet_support import catalog


def _needs(**entry):
    cat = catalog([{"name": "m", **entry}])
    return resolve(cat.models[0], cat)


def test_the_neuron_constants_are_the_fit_on_the_inferentia2_rows_of_dense_models():
    points = neuron_points()
    # the 28 Neuron SDK rows and the 4 TGI neuronx rows; the Mixtral rows are held out
    assert len(points) == 32
    found = fit(points)
    assert (round(found.efficiency, 2), round(found.step_ms, 1)) == (
        NEURON.efficiency,
        NEURON.step_ms,
    )
    assert round(found.per_sequence_ms, 1) == NEURON.per_sequence_ms
    assert NEURON.per_doubling_ms == 0.0


def test_the_fit_recovers_the_constants_that_made_its_points():
    truth = DecodeConstants(0.6, 2.5, 0.0, 3.0, "")
    shapes = [(8e9, 1, 300.0, 1), (8e9, 1, 300.0, 8), (70e9, 8, 800.0, 4), (20e9, 4, 800.0, 16)]
    points = [
        DecodePoint(moved, devices, bw, c, truth.step(moved, devices, bw, c))
        for moved, devices, bw, c in shapes
    ]
    found = fit(points)
    assert found.efficiency == pytest.approx(0.6)
    assert found.step_ms == pytest.approx(2.5)
    assert found.per_sequence_ms == pytest.approx(3.0)


def test_neuron_devices_take_the_fitted_step_and_gpus_keep_theirs():
    assert constants_for(device(instance_spec("ml.inf2.48xlarge"))) is NEURON
    assert constants_for(device(instance_spec("ml.trn1.32xlarge"))) is NEURON
    assert constants_for(device(instance_spec("ml.g5.2xlarge"))) is GPU
    assert (GPU.efficiency, GPU.step_ms, GPU.per_doubling_ms) == (0.75, 3.0, 4.0)


def test_tensor_parallelism_over_24_neuron_cores_costs_no_all_reduce_per_doubling():
    # Llama-2-7B over the 12 Inferentia2 devices of an inf2.48xlarge at batch 1 decodes a
    # token in 6.47 ms (aws-neuron-sdk inf2 performance data); the GPU constants put it at
    # 19 ms (3 ms + 4 ms x log2(12) of overhead alone)
    needs = _needs(architecture="llama-2-7b", dtype="bf16", prompt_tokens=128, output_tokens=3968)
    dev = device(instance_spec("ml.inf2.48xlarge"))
    assert decode_estimate(needs, dev, 12, 1).tpot_ms == pytest.approx(6.47, rel=0.15)
    assert decode_estimate(needs, dev, 12, 1, GPU).tpot_ms > 18


def test_one_inferentia2_reads_its_weights_at_the_fitted_share_of_its_bandwidth():
    # Llama-3-8B on the one device of an inf2.xlarge (TGI neuronx 0.0.23, philschmid/llmperf):
    # 52 ms a token at 1 concurrent, 94 ms at 8
    needs = _needs(architecture="llama-3.1-8b", prompt_tokens=550, output_tokens=177)
    dev = device(instance_spec("ml.inf2.xlarge"))
    assert decode_estimate(needs, dev, 1, 1).tpot_ms == pytest.approx(52.2, rel=0.1)
    assert decode_estimate(needs, dev, 1, 8).tpot_ms == pytest.approx(94.0, rel=0.1)


def test_a_mixture_of_experts_reads_the_experts_its_tokens_touch():
    # Mixtral-8x7B: 8 experts, 2 per token (config.json num_local_experts,
    # num_experts_per_tok); 46.7 B parameters, 12.9 B active
    mixtral = _needs(architecture="mixtral-8x7b")
    weights = mixtral.weights_gib * 2**30
    # one token reads the active parameters
    assert mixtral.weights_read_bytes(1) / weights == pytest.approx(12.9 / 46.7)
    # two tokens touch 8 x (1 - 0.75^2) = 3.5 experts per layer on average
    experts = (46.7 - 12.9) / (1 - 2 / 8)
    assert mixtral.weights_read_bytes(2) == pytest.approx(
        weights * (46.7 - experts + experts * 3.5 / 8) / 46.7
    )
    assert mixtral.weights_read_bytes(64) / weights > 0.999
    # 128 experts, 8 per token: 16 sequences touch 64% of them
    qwen = _needs(architecture="qwen3-30b-a3b")
    share = qwen.weights_read_bytes(16) / (qwen.weights_gib * 2**30)
    expert_share = (1 - 3.3 / 30.5) / (1 - 8 / 128)
    assert share == pytest.approx(1 - expert_share + expert_share * (1 - (15 / 16) ** 16))
    dense = _needs(architecture="llama-3.1-8b")
    assert dense.weights_read_bytes(16) == dense.weights_gib * 2**30


def test_the_mixtral_estimate_on_inferentia2_follows_the_experts_it_reads():
    # 6.45 ms a token at 1 concurrent (philschmid/huggingface-inferentia2-samples): reading
    # every expert each step made it 23 ms
    needs = _needs(architecture="mixtral-8x7b", dtype="fp16", prompt_tokens=568, output_tokens=676)
    perf = decode_estimate(needs, device(instance_spec("ml.inf2.48xlarge")), 12, 1)
    assert 6.45 < perf.tpot_ms < 1.6 * 6.45
    assert "reading 28% of the weights a step (experts: 2 of 8 per token)" in perf.detail


def test_the_leave_one_out_refits_the_neuron_constants_without_the_held_out_row():
    rows = _text_rows()
    fitted = [i for i, (r, _, dev) in enumerate(rows) if constants_for(dev) is NEURON]
    dense = [i for i in fitted if rows[i][0]["model"] != "mixtral-8x7b"]
    assert len(neuron_points(dense[0])) == len(neuron_points()) - 1
    mixtral = next(i for i in fitted if rows[i][0]["model"] == "mixtral-8x7b")
    assert len(neuron_points(mixtral)) == len(neuron_points())
    by_task = {task: median for task, _, median in leave_one_out().by_task}
    assert by_task["text-generation"] < 10  # 9.2% (docs/planner-numbers.md)

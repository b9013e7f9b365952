"""Batch before copies: each text-generation copy runs the most concurrent sequences its
memory, the engine's limit and the latency objective allow, the container is told that
number and the plan shows it."""

from __future__ import annotations

import itertools

import pytest

from fm_platform.fleet.outputs.report import explain, model_table
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.fleet.sizing.needs import MAX_CONCURRENCY, resolve
from fm_platform.fleet.sizing.performance import CONCURRENCIES, concurrencies, largest
from fm_platform.fleet.sizing.profiles import checked_concurrency
from tests.fleet_support import catalog

#: The case a serving engineer would not have planned: Qwen2.5-7B at 2,400 requests a
#: minute on A100 80GB instances was 14 copies at 16 sequences each.
QWEN = {"name": "qwen", "architecture": "qwen2.5-7b", "peak_rpm": 2400, "instance_family": "p4de"}


def test_the_candidates_are_the_batch_sizes_vllm_captures_graphs_for():
    assert CONCURRENCIES[:5] == (1, 2, 4, 8, 16) and CONCURRENCIES[-1] == MAX_CONCURRENCY
    assert all(c % 8 == 0 for c in CONCURRENCIES[3:])
    assert concurrencies(256) == CONCURRENCIES
    # a catalog's limit between two sizes is a candidate itself
    assert concurrencies(20) == (1, 2, 4, 8, 16, 20)


@pytest.mark.parametrize("threshold", [0, 1, 2, 3, 7, 8, 100, 255, 256, 300])
def test_the_largest_concurrency_is_found_as_a_linear_scan_would(threshold):
    candidates = concurrencies(256)
    expected = max((c for c in candidates if c <= threshold), default=None)
    assert largest(candidates, lambda c: c <= threshold) == expected


def test_a_busy_copy_batches_instead_of_adding_copies():
    before = plan_fleet(catalog([{**QWEN, "concurrency": 16}])).placements["qwen"]
    after = plan_fleet(catalog([QWEN])).placements["qwen"]
    assert (before.concurrency, before.max_copies) == (16, 14)
    assert after.concurrency >= 64 and after.max_copies <= 7
    assert after.rpm_per_copy > 1.9 * before.rpm_per_copy
    # the objective bounds it, and the estimate says it is past its checked range
    assert (
        after.latency_ms <= resolve(catalog([QWEN]).models[0], catalog([QWEN])).latency_objective_ms
    )
    assert "more misses the objective" in after.throughput_detail
    assert f"above the {checked_concurrency()} concurrent sequences" in after.throughput_detail


def test_memory_bounds_the_concurrency_of_a_copy_that_barely_fits():
    # Llama-3.1-8B on one 24 GB A10G: 15 GiB of weights leave room for a few sequences
    model = {
        "name": "m",
        "architecture": "llama-3.1-8b",
        "instance_family": "g5",
        "latency_class": "relaxed",
        "peak_rpm": 600,
    }
    planner = Planner(catalog([model]))
    p = planner.run().placements["m"]
    needs = planner.assessed["m"].needs
    assert p.accelerators == 1 and 1 < p.concurrency < MAX_CONCURRENCY
    assert needs.copy_gib(1, p.concurrency) <= 22888 / 1024 * 0.9
    bigger = next(c for c in CONCURRENCIES if c > p.concurrency)
    assert needs.copy_gib(1, bigger) > 22888 / 1024 * 0.9 or p.throughput == "measured"


def test_the_catalog_concurrency_is_a_limit_and_never_a_default():
    cat = catalog([{**QWEN, "concurrency": 24}])
    needs = resolve(cat.models[0], cat)
    assert needs.concurrency == 24 and "concurrency" not in needs.defaults
    p = plan_fleet(cat).placements["qwen"]
    assert p.concurrency == 24 and "the catalog's concurrency" in p.throughput_detail
    unset = resolve(catalog([QWEN]).models[0], catalog([QWEN]))
    assert unset.concurrency == MAX_CONCURRENCY and "concurrency" not in unset.defaults


def test_the_table_and_explain_give_the_chosen_concurrency():
    # the container runs it too: tests/test_fleet_containers.py reads the synthesized
    # OPTION_MAX_ROLLING_BATCH_SIZE and TGI's MAX_BATCH_SIZE against the placement's
    planner = Planner(catalog([QWEN]))
    plan = planner.run()
    p = plan.placements["qwen"]
    header, row = model_table(plan).splitlines()[:2]
    assert header.split()[6] == "conc" and row.split()[6] == str(p.concurrency)
    assert "concurrency" not in row.split()[8]  # the defaults column
    text = explain(planner, "qwen")
    assert f"concurrency={p.concurrency} (chosen; at most {MAX_CONCURRENCY})" in text
    assert "(default)" not in text.split("concurrency=")[1].split(",")[0]


def test_an_encoder_runs_one_request_at_a_time_per_copy():
    cat = catalog([{"name": "emb", "params_b": 0.11, "task": "embedding"}])
    assert resolve(cat.models[0], cat).concurrency == 1
    assert plan_fleet(cat).placements["emb"].concurrency == 1


def test_a_catalog_throughput_runs_the_most_sequences_that_fit():
    cat = catalog([{**QWEN, "rpm_per_copy": 500}])
    p = plan_fleet(cat).placements["qwen"]
    assert p.throughput == "catalog" and p.concurrency in CONCURRENCIES
    assert p.concurrency > 16


@pytest.mark.parametrize("latency_class", ["strict", "standard", "relaxed"])
def test_a_tighter_objective_never_runs_more_sequences(latency_class):
    plans = {
        c: plan_fleet(catalog([{**QWEN, "latency_class": c}])).placements["qwen"]
        for c in ("strict", "standard", "relaxed")
    }
    order = ["strict", "standard", "relaxed"]
    for tighter, looser in itertools.pairwise(order):
        if plans[tighter].accelerators == plans[looser].accelerators:
            assert plans[tighter].concurrency <= plans[looser].concurrency
    assert plans[latency_class].concurrency >= 1

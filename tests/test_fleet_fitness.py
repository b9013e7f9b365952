"""Each fitness axis follows the rule its docstring states."""

from __future__ import annotations

import pytest

from fm_platform.fleet.catalog import ModelEntry
from fm_platform.fleet.fitness import max_copies, min_copies, score


def model(**fields):
    return ModelEntry(**{"name": "m", "params_b": 7.0, **fields})


@pytest.mark.parametrize(
    ("fields", "latency"),
    [
        ({"latency_p50_ms": 100}, 1.0),
        ({"latency_p50_ms": 1000}, 0.5),
        ({"latency_p50_ms": 10000}, 0.0),
        ({"latency_class": "relaxed"}, 0.2),
        ({"latency_class": "strict", "cold_start_tolerant": True}, 0.75),
    ],
)
def test_latency(fields, latency):
    assert score(model(**fields)).latency == latency


def test_model_size_is_log_of_copy_memory_against_640_gib():
    assert score(model(memory_gib=0.5)).model_size == 0.0
    assert score(model(memory_gib=640)).model_size == 1.0
    assert score(model(memory_gib=25.3)).model_size == pytest.approx(0.5, abs=0.001)


def test_isolation_cost_and_scalability():
    assert score(model(isolation="dedicated", isolation_reason="PII")).isolation == 1.0
    assert score(model(tenant="acme")).isolation == 0.5
    assert score(model(active_hours=6, peak_rpm=30, rpm_per_copy=60)).cost == 0.875
    busy = model(peak_rpm=1920, rpm_per_copy=60)
    assert max_copies(busy) == 32 and score(busy).scalability == 1.0
    idle = model(active_hours=2, cold_start_tolerant=True)
    assert min_copies(idle) == 0 and score(idle).scalability == 0.2

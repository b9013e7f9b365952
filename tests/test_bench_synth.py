"""scripts/bench_synth.py: the public and the plain L1 fleets are the same resources, round
trips are counted and attributed to the functions that make them, and the printed ratios
are the min and median of the paired runs."""

from __future__ import annotations

import sys
import time

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

import bench_synth  # noqa: E402


@pytest.fixture(scope="module")
def measured():
    return {
        side: bench_synth.measure(side, 3, with_nag=False, by_source=True)
        for side in ("public", "l1")
    }


def test_both_fleets_are_the_same_resources(measured):
    public, l1 = measured["public"], measured["l1"]
    assert public["resource_types"] == l1["resource_types"]
    assert public["resource_types"]["AWS::ApplicationAutoScaling::ScalingPolicy"] == 6


def test_every_round_trip_is_attributed_to_a_function(measured):
    for result in measured.values():
        assert sum(result["sources"].values()) == result["build_trips"] + result["synth_trips"]
    public_sources = measured["public"]["sources"]
    assert public_sources["inference_component.InferenceComponentModel.__init__"] == 3
    assert "component_scaling.ComponentAutoScaling.__init__" in public_sources
    assert set(measured["l1"]["sources"]) <= {
        "bench_synth.l1_fleet",
        "bench_synth._l1_endpoint",
        "bench_synth._measured",
    }


def test_cpu_seconds_count_this_process():
    before = bench_synth._cpu_seconds()
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:
        pass
    assert bench_synth._cpu_seconds() - before >= 0.2


def _run(total_s: float, cpu_s: float) -> dict:
    return {
        "total_s": total_s,
        "cpu_s": cpu_s,
        "build_trips": 300,
        "synth_trips": 0,
        "template_bytes": 3 * 1024,
        "import_s": 1.0,
    }


def test_the_row_gives_min_and_median_of_the_paired_ratios():
    runs = {
        "public": [_run(2.0, 4.0), _run(3.0, 3.0), _run(4.0, 6.0)],
        "l1": [_run(1.0, 2.0), _run(2.0, 2.0), _run(2.0, 4.0)],
    }
    row = bench_synth.summary_row(100, runs, "-").split()
    # pairs: wall 2.0, 1.5, 2.0; cpu 2.0, 1.5, 1.5
    assert row[:5] == ["100", "2.0/3.0", "1.0/2.0", "1.50/2.00", "1.50/1.50"]
    assert row[5] == "3.0/3.0"  # round trips per model of each side


def test_watched_fleets_are_the_same_resources():
    public, l1 = (
        bench_synth.measure(side, 3, with_nag=False, alarms=True) for side in ("public", "l1")
    )
    assert public["resource_types"] == l1["resource_types"]
    # Three wake-up alarms, three model alarms, one endpoint alarm; one topic, one dashboard.
    assert public["resource_types"]["AWS::CloudWatch::Alarm"] == 7
    assert public["resource_types"]["AWS::CloudWatch::Dashboard"] == 1
    assert public["resource_types"]["AWS::SNS::Topic"] == 1

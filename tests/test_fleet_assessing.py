"""Assessing on two processes (:mod:`fm_platform.fleet.assessing`) gives the plan, the
bound, the explanations and the problems that one process gives."""

from __future__ import annotations

import dataclasses
import os

import pytest

from fm_platform.fleet import assessing, bound
from fm_platform.fleet import options as options_module
from fm_platform.fleet.bound import lower_bound
from fm_platform.fleet.catalog import catalog_from_data
from fm_platform.fleet.planner import Planner
from fm_platform.fleet.report import explain
from tests.fleet_support import FAMILIES, realistic_catalog_data, record_forks


@pytest.fixture(scope="module")
def data() -> dict:
    return realistic_catalog_data(1500, seed=5)


def _run(data: dict, split: bool | None) -> Planner:
    planner = Planner(catalog_from_data(data, FAMILIES), split=split)
    planner.run()
    return planner


@pytest.fixture(scope="module")
def one(data: dict) -> Planner:
    return _run(data, split=False)


@pytest.fixture(scope="module")
def two(data: dict) -> Planner:
    return _run(data, split=True)


def test_by_default_a_large_catalog_is_assessed_on_two_processes_a_small_one_on_one(
    data, monkeypatch
):
    forks = []
    real = assessing.forked
    monkeypatch.setattr(assessing, "forked", lambda compute: forks.append(1) or real(compute))
    # as `fmp plan` runs: one thread on two cores (the test session runs others)
    monkeypatch.setattr(assessing, "can_fork", lambda: True)
    _run(data, split=None)
    assert forks == [1]
    _run(realistic_catalog_data(100, seed=5), split=None)
    assert forks == [1]
    monkeypatch.setattr(assessing, "can_fork", lambda: False)
    _run(data, split=None)
    assert forks == [1]


def test_two_processes_plan_what_one_plans(one, two):
    assert two.plan.to_json() == one.plan.to_json()


def test_two_processes_bound_what_one_bounds(one, two):
    assert lower_bound(two) == lower_bound(one)


def test_two_processes_explain_what_one_explains(one, two):
    # a model of every kind the plan chose, and some of each endpoint's others
    names = sorted(one.plan.placements)
    kinds: dict[str, str] = {}
    for name in names:
        kinds.setdefault(one.plan.endpoints[one.plan.placements[name].endpoint].kind, name)
    for name in [*kinds.values(), *names[::97]]:
        assert explain(two, name) == explain(one, name), name


def test_the_forked_half_is_handed_over_and_restored_as_computed(one, data):
    catalog = catalog_from_data(data, FAMILIES)
    planner = Planner(catalog, split=False)
    planner.run()
    work = {}
    for model in catalog.models:
        known = planner.assessed[model.name]
        work.setdefault(id(known), (model, known))
    keys = list(work)
    results = {k: (known.needs, known.assessment, known.decision) for k, (_, known) in work.items()}
    entries = {k: (model, known.needs, known.needs) for k, (model, known) in work.items()}
    restored = assessing._taken_over(assessing._handover(results, keys), keys, entries)
    for key in keys:
        needs, assessment, decision = restored[key]
        known = work[key][1]
        assert needs == known.needs
        assert decision == known.decision
        assert dict(assessment.options.items()) == dict(known.assessment.options.items())
        assert assessment.rejected == known.assessment.rejected
        assert assessment.unavailable == known.assessment.unavailable


def test_a_forked_process_that_fails_leaves_its_half_to_this_one(one, data, monkeypatch):
    def fail(results, keys):
        raise RuntimeError("the forked process fails")

    monkeypatch.setattr(assessing, "_handover", fail)
    assert _run(data, split=True).plan.to_json() == one.plan.to_json()


def test_entries_that_cannot_be_assessed_are_reported_alike_from_either_process(data, tmp_path):
    broken = [
        {
            "name": f"broken-{i}",
            "architecture": arch,
            "benchmark_file": f"missing-{i}.csv",
            "peak_rpm": 100,
        }
        for i, arch in enumerate(["llama-3.1-8b", "qwen2.5-7b", "mistral-7b-v0.3", "gemma-2-9b"])
    ]
    with_broken = {**data, "models": [*data["models"][:700], *broken]}
    messages = []
    for split in (False, True):
        catalog = catalog_from_data(with_broken, FAMILIES)
        catalog = type(catalog)(catalog.name, catalog.models, base_dir=tmp_path)
        with pytest.raises(ValueError) as error:
            Planner(catalog, split=split).run()
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert all(f"missing-{i}.csv" in messages[0] for i in range(len(broken)))


def test_the_bound_computed_beside_placing_is_the_bound_after_it(one, data, monkeypatch):
    forks = []
    real = bound.forked
    monkeypatch.setattr(bound, "forked", lambda compute: forks.append(1) or real(compute))
    monkeypatch.setattr(assessing, "can_fork", lambda: True)
    planner = Planner(catalog_from_data(data, FAMILIES), split=False)
    plan, bound_of = bound.plan_with_bound(planner)
    assert forks == [1]
    assert plan.to_json() == one.plan.to_json()
    assert bound_of() == bound.lower_bound(one)


def test_the_bound_beside_placing_is_stopped_when_placing_raises(data, monkeypatch):
    started = record_forks(monkeypatch, bound)
    monkeypatch.setattr(assessing, "can_fork", lambda: True)
    planner = Planner(catalog_from_data(data, FAMILIES), split=False)

    def fail() -> None:
        raise RuntimeError("placing fails")

    monkeypatch.setattr(planner, "place_all", fail)
    with pytest.raises(RuntimeError, match="placing fails"):
        bound.plan_with_bound(planner)
    assert len(started) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(started[0].pid, 0)  # stopped and reaped, not left behind


def test_without_highs_the_bound_beside_placing_says_what_to_install(data, monkeypatch):
    def missing(planner):
        raise ImportError(f"the cost bound needs HiGHS: {bound.INSTALL_HINT}")

    monkeypatch.setattr(bound, "lower_bound", missing)
    monkeypatch.setattr(assessing, "can_fork", lambda: True)
    _, bound_of = bound.plan_with_bound(Planner(catalog_from_data(data, FAMILIES), split=False))
    with pytest.raises(ImportError, match=r"pip install 'fm-platform\[bound\]'"):
        bound_of()


def test_entries_sized_from_benchmark_files_are_handed_over_too(monkeypatch):
    from fm_platform.fleet.catalog import load_catalog
    from tests.support import ROOT

    catalog = load_catalog(ROOT / "examples" / "catalog-benchmark.yaml", FAMILIES)
    # the second request shape goes to the forked process (the first to this one)
    sized = [m for m in catalog.models if m.benchmark_file]
    others = [m for m in catalog.models if not m.benchmark_file]
    assert sized and others
    catalog = dataclasses.replace(catalog, models=(others[0], *sized, *others[1:]))
    taken = []
    real = assessing._taken_over
    monkeypatch.setattr(assessing, "_taken_over", lambda *handed: taken.append(1) or real(*handed))
    two = Planner(catalog, split=True)
    two.run()
    assert taken == [1]  # the forked process handed its half over (its needs hold paths)
    one = Planner(catalog, split=False)
    one.run()
    assert two.plan.to_json() == one.plan.to_json()


def test_a_later_planner_reuses_the_shapes_handed_over_and_forks_no_more(data, monkeypatch):
    # as a repacking runs: planners of one catalog, one after another, in one process
    monkeypatch.setattr(options_module, "_ALIKE_OPTIONS", {})
    forks = []
    real = assessing.forked
    monkeypatch.setattr(assessing, "forked", lambda compute: forks.append(1) or real(compute))
    monkeypatch.setattr(assessing, "can_fork", lambda: True)
    first = _run(data, split=None)
    again = _run(data, split=None)
    assert forks == [1]
    assert again.plan.to_json() == first.plan.to_json()

#!/usr/bin/env python3
"""Benchmark the fleet planner and its stacks on generated catalogs.

Per synthesized size (10, 100, 1000 models), one line: ``models stacks max_resources plan_s
synth_s baseline_s ratio instances cost cost_bound bound_ratio dedicated cost_ratio``.
``cost`` is the plan's expected USD per hour; ``cost_bound`` the LP relaxation's optimum
over every feasible type for the same options (:mod:`fm_platform.fleet.outputs.bound`, HiGHS);
``dedicated`` one endpoint per model on its cheapest type: single-model, or asynchronous
for a model no real-time endpoint takes. ``synth_s`` is a
cold subprocess building the fleet stacks and synthesizing them; ``baseline_s`` a cold
subprocess creating the same resources as plain L1 code (one ``CfnResource`` per resource
of those templates, declared after what it references, references passed as the
referenced resource's ``ref`` or ``get_att`` and ``DependsOn`` as
``add_resource_dependency``, the way hand-written L1 code does; no validation), timed in
the same run. cdk-nag is off in both.

Per plan-only size (10,000 and 50,000 models), one line: ``models endpoints stacks load_s
plan_s peak_mib cost``: the time to validate the catalog, the time to plan it, and the
peak memory a second, traced planning allocated (``tracemalloc``), which grows linearly
with the catalog.

Per realistic size (1,000, 10,000 and 50,000 models of
``examples/catalog_generator.py``'s :func:`realistic_catalog_data`: every task, all
latency classes, hundreds of tenants), one line ``catalog=realistic models plan_s bound_s
with_bound_s endpoints cost cost_bound bound_ratio``: planning and then the bound over
every kind and type, timed apart, and their sum (``with_bound_s``: `fmp plan` computes
both, one after the other, on one process). Plan-only and realistic runs each start in a
fresh interpreter.

Last, the throughput estimate against the measured rows it ships, each held out in turn
(:mod:`fm_platform.fleet.sizing.accuracy`): one ``leave-one-out`` line with the median and
worst error in percent, and the median per task.

    python scripts/bench_fleet.py [SIZES...] [--plan-only SIZES...] [--realistic SIZES...]

Without arguments every group runs at its default sizes; with any, only the groups named
(``--realistic 50000`` plans one realistic catalog, then the leave-one-out line).
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

from catalog_generator import catalog_data, realistic_catalog_data  # noqa: E402

from fm_platform.fleet.deciding.kinds import ASYNC, SINGLE, min_copies  # noqa: E402
from fm_platform.fleet.deciding.options import family_types  # noqa: E402
from fm_platform.fleet.models.catalog import catalog_from_data  # noqa: E402
from fm_platform.fleet.outputs.bound import lower_bound  # noqa: E402
from fm_platform.fleet.placing.cost import plan_cost  # noqa: E402
from fm_platform.fleet.placing.planner import Planner  # noqa: E402
from fm_platform.fleet.sizing.accuracy import leave_one_out  # noqa: E402

_T = TypeVar("_T")
SIZES = (10, 100, 1000)
PLAN_ONLY = (10_000, 50_000)
REALISTIC = (1_000, 10_000, 50_000)

_SYNTH = """
import sys, json, aws_cdk as cdk
sys.path.insert(0, {root!r})
from fm_platform.fleet.models.catalog import load_catalog
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.outputs.plan import read_plan
from fm_platform.stacks.fleet import fleet_stacks
catalog = load_catalog({catalog!r}, family_types("us-east-1"))
app = cdk.App(outdir={outdir!r})
fleet_stacks(app, read_plan({plan!r}), catalog)
app.synth()
"""

_BASELINE = """
import json, pathlib, aws_cdk as cdk

def order(resources):
    # Each resource after those it references or depends on, as plain code declares them.
    done, ordered = set(), []
    def needs(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "Ref" and value in resources:
                    yield value
                elif key == "Fn::GetAtt" and value[0] in resources:
                    yield value[0]
                else:
                    yield from needs(value)
        elif isinstance(node, list):
            for item in node:
                yield from needs(item)
    def visit(name):
        if name in done:
            return
        done.add(name)
        resource = resources[name]
        depends = resource.get("DependsOn", [])
        depends = [depends] if isinstance(depends, str) else depends
        for other in [*needs(resource.get("Properties", {{}})), *depends]:
            visit(other)
        ordered.append(name)
    for name in resources:
        visit(name)
    return ordered

def value(node, created):
    # References become the referenced construct's attributes, as in hand-written L1 code.
    if isinstance(node, dict):
        if set(node) == {{"Ref"}} and node["Ref"] in created:
            return created[node["Ref"]].ref
        if set(node) == {{"Fn::GetAtt"}} and node["Fn::GetAtt"][0] in created:
            target, attribute = node["Fn::GetAtt"]
            return created[target].get_att(attribute)
        return {{key: value(item, created) for key, item in node.items()}}
    if isinstance(node, list):
        return [value(item, created) for item in node]
    return node

app = cdk.App(outdir={outdir!r})
for path in sorted(pathlib.Path({source!r}).glob("*.template.json")):
    template = json.loads(path.read_text())
    stack = cdk.Stack(app, path.name.split(".")[0])
    resources, created = template["Resources"], {{}}
    for logical_id in order(resources):
        resource = resources[logical_id]
        created[logical_id] = cfn = cdk.CfnResource(
            stack, logical_id, type=resource["Type"],
            properties=value(resource.get("Properties"), created),
        )
        depends = resource.get("DependsOn", [])
        for other in [depends] if isinstance(depends, str) else depends:
            cfn.add_resource_dependency(created[other])
    for output_id, output in template.get("Outputs", {{}}).items():
        cdk.CfnOutput(stack, output_id, value=cdk.Token.as_string(value(output["Value"], created)))
app.synth()
"""


def _timed(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    return time.perf_counter() - start


def dedicated_hourly(planner: Planner) -> float:
    """One endpoint per model on its cheapest single-model type, or asynchronous type for a
    model without single-model options (expected)."""
    total = 0.0
    for known in planner.assessed.values():
        for kind in (SINGLE, ASYNC):
            options = known.assessment.options.get(kind)
            if options:
                low = min_copies(kind, to_zero=False)
                total += options[0].expected_hourly(low, known.needs.active_hours)
                break
    return total


def bench(count: int, work: Path) -> str:
    data = catalog_data(count)
    catalog_file = work / f"catalog-{count}.json"
    catalog_file.write_text(json.dumps(data))
    catalog = catalog_from_data(data, family_types("us-east-1"))
    start = time.perf_counter()
    planner = Planner(catalog)
    plan = planner.run()
    plan_s = time.perf_counter() - start
    plan_file = work / f"plan-{count}.json"
    plan.write(plan_file)
    out, base = work / f"out-{count}", work / f"base-{count}"
    synth_s = _timed(
        _SYNTH.format(
            root=str(ROOT), catalog=str(catalog_file), plan=str(plan_file), outdir=str(out)
        )
    )
    baseline_s = _timed(_BASELINE.format(outdir=str(base), source=str(out)))
    templates = [json.loads(p.read_text()) for p in out.glob("*.template.json")]
    cost, bound, dedicated = plan_cost(plan), lower_bound(planner), dedicated_hourly(planner)
    return " ".join(
        [
            f"models={count}",
            f"stacks={len(templates)}",
            f"max_resources={max(len(t['Resources']) for t in templates)}",
            f"plan_s={plan_s:.3f}",
            f"synth_s={synth_s:.1f}",
            f"baseline_s={baseline_s:.1f}",
            f"ratio={synth_s / baseline_s:.2f}",
            f"instances={cost.min_instances}-{cost.max_instances}",
            f"cost={cost.expected_hourly:.2f}",
            f"cost_bound={bound:.2f}",
            f"bound_ratio={cost.expected_hourly / bound:.3f}",
            f"dedicated={dedicated:.2f}",
            f"cost_ratio={cost.expected_hourly / dedicated:.2f}",
        ]
    )


def plan_only(count: int) -> str:
    data = catalog_data(count)
    start = time.perf_counter()
    catalog = catalog_from_data(data, family_types("us-east-1"))
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    plan = Planner(catalog).run()
    plan_s = time.perf_counter() - start
    tracemalloc.start()  # a second run, traced (tracing slows it down)
    Planner(catalog).run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return " ".join(
        [
            f"models={count}",
            f"endpoints={len(plan.endpoints)}",
            f"stacks={len(plan.stacks)}",
            f"load_s={load_s:.2f}",
            f"plan_s={plan_s:.2f}",
            f"peak_mib={peak / 2**20:.0f}",
            f"cost={plan_cost(plan).expected_hourly:.2f}",
        ]
    )


def realistic(count: int) -> tuple[float, float, float, int, float]:
    """Plan then bound a realistic catalog: plan_s, bound_s, the bound, endpoints, cost."""
    catalog = catalog_from_data(realistic_catalog_data(count), family_types("us-east-1"))
    start = time.perf_counter()
    planner = Planner(catalog)
    plan = planner.run()
    plan_s = time.perf_counter() - start
    start = time.perf_counter()
    bound = lower_bound(planner)
    bound_s = time.perf_counter() - start
    return plan_s, bound_s, bound, len(plan.endpoints), plan_cost(plan).expected_hourly


def realistic_line(count: int) -> str:
    plan_s, bound_s, bound, endpoints, cost = _cold(realistic, count)
    return " ".join(
        [
            "catalog=realistic",
            f"models={count}",
            f"plan_s={plan_s:.2f}",
            f"bound_s={bound_s:.2f}",
            f"with_bound_s={plan_s + bound_s:.2f}",
            f"endpoints={endpoints}",
            f"cost={cost:.2f}",
            f"cost_bound={bound:.2f}",
            f"bound_ratio={cost / bound:.3f}",
        ]
    )


def accuracy() -> str:
    loo = leave_one_out()
    return (
        f"leave-one-out: {loo.rows} measured rows, median error {loo.median_pct:.1f}%, "
        f"worst {loo.worst_pct:.1f}% (estimate calibrated on the other rows of its task); "
        f"uncalibrated: median {loo.raw_median_pct:.1f}%, worst {loo.raw_worst_pct:.1f}%; "
        "median by task: "
        + ", ".join(f"{task} {n} rows {pct:.1f}%" for task, n, pct in loo.by_task)
    )


def _sizes(argv: list[str], flag: str, default: tuple[int, ...]) -> list[int]:
    if not argv:
        return list(default)
    if flag not in argv:
        return []
    rest = argv[argv.index(flag) + 1 :]
    return [
        int(a)
        for a in rest[: next((i for i, a in enumerate(rest) if a.startswith("--")), len(rest))]
    ]


def _cold(line: Callable[[int], _T], count: int) -> _T:
    """``line(count)`` in a fresh interpreter, as `fmp plan` starts: no size reuses what an
    earlier one assessed (a 50,000-model realistic plan after a 10,000-model one in the
    same process took a fifth less)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:
        return fresh.submit(line, count).result()


def main(argv: list[str]) -> int:
    first = next((i for i, a in enumerate(argv) if a.startswith("--")), len(argv))
    sizes = [int(a) for a in argv[:first]] if argv else list(SIZES)
    with tempfile.TemporaryDirectory() as tmp:
        for count in sizes:
            print(bench(count, Path(tmp)), flush=True)
    for count in _sizes(argv, "--plan-only", PLAN_ONLY):
        print(_cold(plan_only, count), flush=True)
    for count in _sizes(argv, "--realistic", REALISTIC):
        print(realistic_line(count), flush=True)
    print(accuracy(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

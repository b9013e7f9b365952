#!/usr/bin/env python3
"""Benchmark: how long building and synthesizing large model catalogs takes.

Builds Inference Components catalogs of several sizes (models packed ten to an endpoint,
eighty to a stack, so that each stack stays under CloudFormation's 500 resources), then
times construction, synthesis, and synthesis with the three cdk-nag packs. Prints one row
per catalog size. Run with ``make bench`` (or ``python scripts/bench_synth.py 50 200``).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import aws_cdk as cdk

from fm_platform.compliance import apply_compliance_packs
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.stacks.inference import (
    IcEndpointSpec,
    IcModelSpec,
    InferenceConfig,
    InferenceStack,
)

ROOT = Path(__file__).resolve().parent.parent
CONTEXT = json.loads((ROOT / "cdk.json").read_text())["context"]
MODELS_PER_ENDPOINT = 10
MODELS_PER_STACK = 80
DEFAULT_SIZES = (10, 100, 300)


def catalog(model_count: int) -> list[InferenceConfig]:
    """``model_count`` one-GPU models (every fourth scaling to zero), as stack configs."""
    models = [
        IcModelSpec(
            model_name=f"model-{index:04d}",
            accelerators=1,
            cpu_cores=2,
            min_memory_mib=16384,
            scaling=ComponentScaling(min_copies=0 if index % 4 == 0 else 1, max_copies=2),
        )
        for index in range(model_count)
    ]
    configs = []
    for first in range(0, model_count, MODELS_PER_STACK):
        in_stack = models[first : first + MODELS_PER_STACK]
        endpoints = tuple(
            IcEndpointSpec(
                name=f"ep-{(first + start) // MODELS_PER_ENDPOINT:03d}",
                instance_type="ml.g5.12xlarge",
                max_instance_count=4,
                models=tuple(in_stack[start : start + MODELS_PER_ENDPOINT]),
            )
            for start in range(0, len(in_stack), MODELS_PER_ENDPOINT)
        )
        configs.append(
            InferenceConfig(
                ic_endpoints=endpoints, single_model_endpoints=(), multi_model_endpoints=()
            )
        )
    return configs


def measure(model_count: int, *, with_nag: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as outdir:
        app = cdk.App(context=CONTEXT, outdir=outdir)
        started = time.perf_counter()
        stacks = [
            InferenceStack(app, f"Catalog{index}", config=config)
            for index, config in enumerate(catalog(model_count))
        ]
        built = time.perf_counter()
        if with_nag:
            apply_compliance_packs(app)
        assembly = app.synth()
        synthesized = time.perf_counter()
        templates = [assembly.get_stack_by_name(s.stack_name).template for s in stacks]
        return {
            "stacks": len(stacks),
            "build_s": built - started,
            "synth_s": synthesized - built,
            "max_resources": max(len(t["Resources"]) for t in templates),
            "max_template_kib": max(len(json.dumps(t)) for t in templates) / 1024,
        }


def main(argv: list[str]) -> int:
    sizes = [int(arg) for arg in argv] or list(DEFAULT_SIZES)
    measure(MODELS_PER_ENDPOINT, with_nag=True)  # warm up the jsii runtime; not reported
    header = (
        f"{'models':>6} {'stacks':>6} {'build s':>8} {'synth s':>8} {'synth+nag s':>11} "
        f"{'ms/model':>8} {'max res':>7} {'max KiB':>7}"
    )
    print(header)
    for size in sizes:
        plain = measure(size, with_nag=False)
        nagged = measure(size, with_nag=True)
        total = plain["build_s"] + plain["synth_s"]
        print(
            f"{size:>6} {plain['stacks']:>6} {plain['build_s']:>8.2f} {plain['synth_s']:>8.2f} "
            f"{nagged['synth_s']:>11.2f} {1000 * total / size:>8.1f} "
            f"{plain['max_resources']:>7} {plain['max_template_kib']:>7.0f}"
        )
    print(
        f"({MODELS_PER_ENDPOINT} models per ml.g5.12xlarge endpoint, at most "
        f"{MODELS_PER_STACK} per stack; CloudFormation allows {500} resources and 1 MiB "
        f"per template; ms/model = build + synth without nag)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The serverless kind: a small CPU model with sporadic traffic gets a serverless endpoint
of the smallest memory size it fits, MaxConcurrency by Little's law, a cost per request
from the shipped us-east-1 prices, a cold start without an instance launch; every reason
the kind cannot host a model is said, and the bound counts the kind."""

from __future__ import annotations

import math

import aws_cdk as cdk
import pytest

from fm_platform.fleet.deciding.kinds import KINDS, SERVERLESS
from fm_platform.fleet.outputs.bound import lower_bound
from fm_platform.fleet.outputs.report import explain, summary
from fm_platform.fleet.outputs.serving import annotate
from fm_platform.fleet.placing.cost import plan_cost
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.fleet.sizing.serverless import (
    PING_LIMIT_S,
    cold_start_problem,
    memory_spec,
    memory_type,
    request_seconds,
    type_memory,
)
from fm_platform.hardware.serverless_prices import serverless_price_source, serverless_prices
from fm_platform.stacks.fleet import fleet_stacks
from tests.fleet_support import catalog

TAGGER = {
    "name": "tagger",
    "architecture": "bge-small-en-v1.5",
    "peak_rpm": 30,
    "active_hours": 2,
    "cold_start_tolerant": True,
}


def _why_not(entry: dict, region: str = "us-east-1") -> str | None:
    planner = Planner(catalog([entry]), region=region)
    planner.run()
    decision = planner.assessed[entry["name"]].decision
    assert decision is not None
    (candidate,) = (c for c in decision.candidates if c.kind == SERVERLESS)
    return candidate.why_not


def test_a_sporadic_small_encoder_is_planned_serverless_with_its_numbers():
    planner = Planner(catalog([TAGGER]))
    plan = planner.run()
    p = plan.placements["tagger"]
    e = plan.endpoints[p.endpoint]
    assert e.kind == SERVERLESS and e.name == "sls-tagger"
    assert e.instance_type == memory_type(p.memory_mib) == "serverless-1024MB"
    seconds = 60 / p.rpm_per_copy
    # Little's law: peak arrival rate x time per request, rounded up.
    assert e.max_instances == max(1, math.ceil(30 / 60 * seconds)) and e.min_instances == 0
    prices = serverless_prices("us-east-1")
    assert prices is not None
    assert p.cost_per_request == pytest.approx(prices.usd_per_second[1024] * seconds, rel=1e-3)
    hourly = 2 / 24 * 30 * 60 * p.cost_per_request
    assert p.expected_hourly == pytest.approx(hourly, abs=1e-4)
    assert e.min_hourly == 0 and e.expected_hourly == p.expected_hourly
    assert p.min_copies == 0 and p.scale_to_zero.startswith("scales to zero: serverless")
    assert "instance launch" not in p.cold_start and p.cold_start_s is not None
    cost = plan_cost(plan)
    assert (cost.min_instances, cost.max_instances, cost.expected_instances) == (0, 0, 0)
    text = explain(planner, "tagger")
    assert "serverless: 1024 MB, MaxConcurrency 1 (Little's law: 30 rpm / 60 x" in text
    assert f"${p.cost_per_request:.8f} per request" in text
    assert "1000 concurrent invocations per region" in text
    assert "cold start: about" in text and "estimated" in text
    cited = serverless_price_source()
    assert any(
        cited["retrieved"] in line and "serverless: 1 endpoint," in line
        for line in summary(plan, None)
    )


def test_data_processed_counts_a_given_payload_twice():
    def per_request(entry: dict) -> float:
        planner = Planner(catalog([entry]))
        planner.run()
        option = planner.assessed["tagger"].assessment.options[SERVERLESS][0]
        return option.price * request_seconds(option.perf) / 3600

    prices = serverless_prices("us-east-1")
    assert prices is not None
    extra = 2 * 2 / 1024 * prices.usd_per_gb_processed
    assert per_request({**TAGGER, "payload_mb": 2}) == pytest.approx(
        per_request(TAGGER) + extra, rel=1e-3
    )


def test_the_bound_counts_the_serverless_option():
    planner = Planner(catalog([TAGGER]))
    plan = planner.run()
    assert 0 < lower_bound(planner) <= plan_cost(plan).expected_hourly + 1e-9


@pytest.mark.parametrize(
    ("entry", "region", "expected"),
    [
        (
            TAGGER,
            "eu-west-1",
            "no Serverless Inference prices for eu-west-1 (fm_platform/hardware/"
            "serverless_prices.json cites us-east-1 only)",
        ),
        (
            {**TAGGER, "architecture": "llama-3.1-8b"},
            "us-east-1",
            "text generation is not served on serverless endpoints (CPU only, no GPUs)",
        ),
        (
            {**TAGGER, "payload_mb": 5},
            "us-east-1",
            "payload_mb 5 exceeds the 4 MB a request body may have",
        ),
        (
            {**TAGGER, "architecture": "sdxl-base-1.0"},  # its task's container: stabilityai
            "us-east-1",
            "container stabilityai has no cpu image (it has gpu); name another container or "
            "an image",
        ),
        (
            {**TAGGER, "instance_family": "c6i"},
            "us-east-1",
            "instance_family c6i asks for instances",
        ),
        (
            {**TAGGER, "peak_rpm": 100_000, "rpm_per_copy": 60},
            "us-east-1",
            "its peak needs 1667 concurrent invocations (peak rpm / 60 x seconds per "
            "request), a serverless endpoint allows at most 200",
        ),
        (
            {**TAGGER, "cold_start_tolerant": False},
            "us-east-1",
            "cold starts not tolerated (cold_start_tolerant: False)",
        ),
        (
            {**TAGGER, "weights_uri": "s3://team-models/tagger/"},
            "us-east-1",
            "its weights_uri is a prefix of uncompressed files, which a serverless endpoint "
            "cannot read (it reads a model.tar.gz only): name a .tar.gz to allow serverless",
        ),
    ],
)
def test_every_reason_the_kind_cannot_host_a_model_is_said(entry, region, expected):
    assert _why_not(entry, region) == expected


def test_a_model_larger_than_the_largest_memory_size_is_refused_with_the_sizes():
    # 1.6 B parameters in fp32: 6.0 GiB, over the 5.5 GiB 6144 MB leaves beside the
    # container's 512 MiB.
    why = _why_not({**TAGGER, "architecture": None, "params_b": 1.6, "task": "embedding"})
    assert (
        why == "a copy needs 6.0 GiB (fp32), 6144 MB leaves 5.5 GiB beside the container's 512 MiB"
    )


def test_a_cold_start_over_the_ping_limit_rules_the_kind_out():
    needs = resolve(catalog([{**TAGGER, "memory_gib": 50}]).models[0], catalog([TAGGER]))
    why = cold_start_problem(needs)
    assert why is not None and why.endswith(
        f"exceeds the {PING_LIMIT_S:g} s a serverless endpoint allows to download the model "
        "and answer /ping"
    )


def test_a_memory_size_stands_where_a_type_would():
    assert type_memory("serverless-3072MB") == 3072 and type_memory("ml.c5.large") is None
    spec = memory_spec("serverless-3072MB")
    assert (spec.memory_mib, spec.vcpus, spec.accelerator) == (3072, 2, "none")
    with pytest.raises(ValueError, match="names no serverless memory size"):
        memory_spec("ml.c5.large")


def test_the_kind_never_keeps_a_copy_and_is_paid_per_request():
    kind = KINDS[SERVERLESS]
    assert kind.serverless and kind.cold_start and not kind.accelerated
    assert kind.max_payload_mb == 4.0 and kind.max_request_s == 60.0


def _serverless_container(entry: dict) -> dict:
    """The synthesized PrimaryContainer of ``entry`` planned alone (on a serverless
    endpoint)."""
    planned = catalog([entry])
    plan = annotate(plan_fleet(planned, region="us-east-1"), planned)
    assert plan.endpoints[plan.placements[entry["name"]].endpoint].kind == SERVERLESS
    app = cdk.App()
    fleet_stacks(app, plan, planned)
    (container,) = [
        resource["Properties"]["PrimaryContainer"]
        for stack in app.synth().stacks
        for resource in stack.template["Resources"].values()
        if resource["Type"] == "AWS::SageMaker::Model"
    ]
    return container


@pytest.mark.parametrize(
    ("weights_uri", "url"),
    [
        (None, "/models/sls-tagger/model.tar.gz"),
        ("s3://team-models/tagger/model.tar.gz", "s3://team-models/tagger/model.tar.gz"),
    ],
)
def test_a_serverless_model_reads_an_archive_through_model_data_url(weights_uri, url):
    # Serverless endpoints cannot use ModelDataSource (botocore ContainerDefinition):
    # the model reads a model.tar.gz, its catalog's or the artifacts bucket's.
    entry = {**TAGGER, "weights_uri": weights_uri} if weights_uri else TAGGER
    container = _serverless_container(entry)
    assert "ModelDataSource" not in container
    assert url in str(container["ModelDataUrl"])

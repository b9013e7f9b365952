"""Serving limits come from the traffic: a copy accepts the requests its planned rate
brings within the request limit, requests carry the catalog's inputs, and a request may
take what its endpoint kind allows; the synthesized templates are read for each."""

from __future__ import annotations

import dataclasses
import math
import re

import aws_cdk as cdk
import botocore.session
import pytest

from fm_platform.containers.environment import (
    PIPELINES,
    TEI_CLIENT_BATCH_SIZE,
    ServingSettings,
    serving_environment,
)
from fm_platform.containers.images import families
from fm_platform.fleet.deciding.kinds import ASYNC, ASYNC_REQUEST_S, IC, REALTIME_REQUEST_S, SINGLE
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.catalog import DTYPE_BYTES, catalog_from_data
from fm_platform.fleet.outputs.plan import Placement
from fm_platform.fleet.outputs.serving import (
    ASYNC_DEFAULT_INVOCATION_S,
    annotate,
    model_serving,
    requests_accepted,
    serving_line,
)
from fm_platform.fleet.placing.planner import plan_fleet
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.stacks.fleet import fleet_stacks
from tests.support import ROOT

MODELS = [
    {
        "name": "doc-reranker",
        "params_b": 0.56,
        "task": "reranking",
        "peak_rpm": 300,
        "inputs_per_request": 20,
    },
    {"name": "reranker-one", "params_b": 0.56, "task": "reranking", "peak_rpm": 300},
    {
        "name": "bulk-embedder",
        "architecture": "bge-large-en-v1.5",
        "peak_rpm": 120,
        "inputs_per_request": 64,
    },
    {
        "name": "nightly-doc-summarizer",
        "architecture": "llama-3.1-8b",
        "latency_class": "batch",
        "peak_rpm": 240,
        "active_hours": 4,
        "prompt_tokens": 6000,
        "output_tokens": 512,
    },
]


@pytest.fixture(scope="module")
def fleet():
    catalog = catalog_from_data(
        {"name": "limits", "models": MODELS}, family_types("us-east-1"), region="us-east-1"
    )
    plan = annotate(plan_fleet(catalog, region="us-east-1"), catalog)
    app = cdk.App()
    fleet_stacks(app, plan, catalog)
    assembly = app.synth()
    resources = {
        logical: resource
        for stack in assembly.stacks
        for logical, resource in stack.template["Resources"].items()
    }
    return catalog, plan, resources


def _environment(resources, model: str) -> dict[str, str]:
    found = [
        r["Properties"]["PrimaryContainer"]["Environment"]
        for logical, r in resources.items()
        if r["Type"] == "AWS::SageMaker::Model"
        and model.replace("-", "") in logical.replace("-", "")
    ]
    assert len(found) == 1, model
    return found[0]


def _in_flight(plan, name: str) -> float:
    """Requests in flight per copy at the planned peak, by Little's law, when the fewest
    copies that run (at least one) take the whole peak."""
    p = plan.placements[name]
    assert p.latency_ms is not None
    return p.peak_rpm / 60 * p.latency_ms / 1000 / max(1, p.min_copies)


def _problems(models):
    with pytest.raises(ValueError) as error:
        catalog_from_data({"models": models}, set())
    return str(error.value).splitlines()[1:]


def test_inputs_per_request_is_checked_naming_the_key_the_value_and_what_is_allowed():
    assert _problems(
        [
            {"name": "a", "params_b": 0.5, "task": "reranking", "inputs_per_request": 0},
            {"name": "b", "architecture": "llama-3.1-8b", "inputs_per_request": 4},
            {"name": "c", "params_b": 0.5, "task": "embedding", "inputs_per_request": "20"},
            {"name": "d", "params_b": 0.5, "task": "embedding", "inputs_per_request": 2.5},
        ]
    ) == [
        "  - models[0].inputs_per_request=0: must be > 0",
        "  - models[1].inputs_per_request=4: a text-generation request carries one input; "
        "inputs_per_request is for embedding, reranking, classification models (texts per "
        "call, documents per rerank)",
        "  - models[2].inputs_per_request='20': must be an integer or null",
        "  - models[3].inputs_per_request=2.5: must be an integer or null",
    ]
    # one input is what every request carries: allowed for any task, and the default
    catalog = catalog_from_data(
        {"models": [{"name": "g", "architecture": "llama-3.1-8b", "inputs_per_request": 1}]},
        set(),
    )
    assert resolve(catalog.models[0], catalog).inputs_per_request == 1


def test_inputs_multiply_the_work_and_activations_of_a_request(fleet):
    catalog, plan, _ = fleet
    many, one = (
        resolve(next(m for m in catalog.models if m.name == n), catalog)
        for n in ("doc-reranker", "reranker-one")
    )
    assert many.request_flops == pytest.approx(20 * one.request_flops)
    assert many.headroom_gib(1, 1) - many.fixed_headroom_gib == pytest.approx(
        20 * (one.headroom_gib(1, 1) - one.fixed_headroom_gib)
    )
    # on the same type, a copy answers fewer requests of 20 documents: 20 times the
    # compute, the same 10 ms of overhead per request
    a, b = plan.placements["doc-reranker"], plan.placements["reranker-one"]
    assert plan.endpoints[a.endpoint].instance_type == plan.endpoints[b.endpoint].instance_type
    assert a.latency_ms is not None and b.latency_ms is not None
    # (the plan rounds latencies to 0.1 ms)
    assert a.latency_ms - 10 == pytest.approx(20 * (b.latency_ms - 10), abs=20 * 0.05)
    assert a.rpm_per_copy < b.rpm_per_copy / 5
    assert "20 inputs of 256 tokens per request" in a.throughput_detail


def test_a_reranker_takes_its_documents_and_queues_its_planned_requests(fleet):
    _, plan, resources = fleet
    for name, inputs in (("doc-reranker", 20), ("bulk-embedder", 64), ("reranker-one", 1)):
        env = _environment(resources, name)
        p = plan.placements[name]
        # every request of the planned size is taken ...
        assert int(env["MAX_CLIENT_BATCH_SIZE"]) == max(inputs, TEI_CLIENT_BATCH_SIZE)
        # ... and a permit per input for every request a copy answers within 60 s: above
        # the requests in flight even were the whole peak on one copy
        permits = int(env["MAX_CONCURRENT_REQUESTS"])
        assert permits == inputs * math.ceil(p.rpm_per_copy) > inputs * _in_flight(plan, name)
        assert permits >= inputs * p.peak_rpm / max(1, p.max_copies) * REALTIME_REQUEST_S / 60
        # the batch holds the tokens the plan sized activations for, and one whole input
        needs_tokens = 256 * inputs * max(1, p.concurrency)
        assert int(env["MAX_BATCH_TOKENS"]) >= needs_tokens
    assert int(_environment(resources, "bulk-embedder")["MAX_CLIENT_BATCH_SIZE"]) == 64


def test_a_batch_model_may_take_its_planned_seconds_in_container_and_invocation(fleet):
    _, plan, resources = fleet
    p = plan.placements["nightly-doc-summarizer"]
    endpoint = plan.endpoints[p.endpoint]
    assert endpoint.kind == ASYNC and p.latency_ms is not None
    env = _environment(resources, "nightly-doc-summarizer")
    seconds = p.latency_ms / 1000
    assert int(env["OPTION_PREDICT_TIMEOUT"]) == ASYNC_REQUEST_S >= seconds
    # SageMaker sends each instance its planned concurrency; the container queues them all
    config = next(
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig"
        and "AsyncInferenceConfig" in r["Properties"]
    )
    sent = config["AsyncInferenceConfig"]["ClientConfig"]["MaxConcurrentInvocationsPerInstance"]
    assert int(env["SERVING_JOB_QUEUE_SIZE"]) >= sent == p.concurrency
    assert env["OPTION_MAX_ROLLING_BATCH_SIZE"] == str(p.concurrency)
    # an invocation without InvocationTimeoutSeconds waits 15 minutes: enough, and
    # --explain says what to pass
    assert seconds < ASYNC_DEFAULT_INVOCATION_S
    assert serving_line(plan, "nightly-doc-summarizer").splitlines()[1] == (
        f"limits: a copy accepts {p.concurrency} requests at once (running and waiting), "
        f"each for up to 3,600 s; invoke with InvocationTimeoutSeconds >= {math.ceil(seconds)} "
        "(planned seconds per request; 900 when not given)"
    )


def _serving(name: str, kind: str, **placement):
    catalog = catalog_from_data({"models": [m for m in MODELS if m["name"] == name]}, set())
    entry = catalog.models[0]
    return model_serving(
        entry,
        resolve(entry, catalog),
        Placement(name=name, endpoint="e", **placement),
        "ml.g5.2xlarge",
        "us-east-1",
        kind=kind,
    )


def test_a_request_longer_than_its_kind_allows_is_refused_at_synth():
    # 152 s per request: an asynchronous endpoint takes it, LMI waits for it (its own
    # default is 120 s), and the toolkit's server (60 s) would too
    slow = {"concurrency": 32, "rpm_per_copy": 12.6, "latency_ms": 152_000.0, "accelerators": 1}
    env = _serving("nightly-doc-summarizer", ASYNC, **slow).environment
    assert int(env["OPTION_PREDICT_TIMEOUT"]) >= 152 and env["SERVING_JOB_QUEUE_SIZE"] == "32"
    with pytest.raises(ValueError) as error:
        _serving("nightly-doc-summarizer", IC, **slow)
    assert str(error.value) == (
        "model nightly-doc-summarizer: planned 152 s per request exceeds the 60 s an endpoint "
        "of kind inference-components waits for a request; plan it again, or set "
        "latency_class: batch (an asynchronous endpoint processes a request for up to an hour)"
    )


def test_requests_accepted_follow_the_rate_and_the_kind():
    p = Placement(name="m", endpoint="e", concurrency=16, rpm_per_copy=40.2)
    assert requests_accepted(p, IC) == requests_accepted(p, SINGLE) == 41
    assert requests_accepted(p, ASYNC) == 16  # SageMaker's queue holds the rest
    slow = dataclasses.replace(p, rpm_per_copy=3.0)
    assert requests_accepted(slow, IC) == 16  # never below the sequences it runs


def _emitted() -> dict[str, set[str]]:
    """Every variable :func:`serving_environment` can set, per family."""
    base = ServingSettings(
        family="lmi",
        hardware="gpu",
        task="text-generation",
        tensor_parallel=1,
        max_concurrency=4,
        max_model_len=4096,
        max_input_tokens=3840,
    )
    found: dict[str, set[str]] = {}
    for family in families():
        for hardware in ("gpu", "neuron", "cpu"):
            for dtype in DTYPE_BYTES:
                for task in PIPELINES:
                    settings = dataclasses.replace(
                        base,
                        family=family,
                        hardware=hardware,
                        dtype=dtype,
                        task=task,
                        hub="org/model",
                        revision="abc",
                        token_secret_arn="arn:aws:secretsmanager:us-east-1:1:secret:t",
                        adapters=2,
                        max_lora_rank=16,
                    )
                    for variant in (settings, dataclasses.replace(settings, hub=None)):
                        found.setdefault(family, set()).update(serving_environment(variant))
    return found


def test_the_serving_limits_table_lists_exactly_the_variables_the_code_sets():
    text = (ROOT / "docs" / "catalog.md").read_text()
    section = text[text.index("\n## Serving limits\n") :]
    section = section[: section.index("\n## ", 1)]
    listed: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not line.startswith("| `") or len(cells) != 5:
            continue
        variable = cells[1].strip("`")
        assert re.fullmatch(r"[A-Z0-9_]+", variable), line
        assert cells[3] and cells[4], line  # what it means, and refuse or queue
        for family in re.findall(r"`([a-z]+)`", cells[0]):
            listed.setdefault(family, set()).add(variable)
    assert listed == _emitted()


def test_the_async_invocation_default_is_botocores():
    runtime = botocore.session.get_session().get_service_model("sagemaker-runtime")
    member = runtime.operation_model("InvokeEndpointAsync").input_shape.members[
        "InvocationTimeoutSeconds"
    ]
    assert f"or {ASYNC_DEFAULT_INVOCATION_S} seconds" in member.documentation
    assert member.metadata["max"] == ASYNC_REQUEST_S

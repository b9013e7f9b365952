"""What one more model on an Inference Components endpoint, and one more endpoint, cost in
calls into the CDK runtime (jsii round trips, each a message to the Node.js process): a
fleet of a thousand models builds near plain L1 code only while a model stays near the 11
calls such code makes per model (see scripts/bench_synth.py, ``--by-source`` for where
they go). Counted, not timed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import aws_cdk as cdk
from aws_cdk import aws_kms as kms
from jsii._kernel.providers import process

from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
)
from fm_platform.constructs.inference.model_container import ModelContainer

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


@contextlib.contextmanager
def counted_round_trips() -> Iterator[list[int]]:
    """Count the messages sent to the jsii runtime inside the block."""
    count = [0]
    send = process._NodeProcess.send

    def counting_send(self, request, response_type):
        count[0] += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counting_send
    try:
        yield count
    finally:
        process._NodeProcess.send = send


def _endpoint(stack: cdk.Stack, construct_id: str) -> InferenceComponentEndpoint:
    return InferenceComponentEndpoint(
        stack,
        construct_id,
        # Room for 20 initial copies of one GPU: no capacity warning (once per endpoint).
        InferenceComponentEndpointProps(
            instance_type="ml.g5.12xlarge",
            min_instance_count=0,
            initial_instance_count=5,
            max_instance_count=5,
        ),
    )


def _add_model(
    stack: cdk.Stack, endpoint: InferenceComponentEndpoint, key: kms.IKey, index: int
) -> None:
    InferenceComponentModel(
        stack,
        f"Model{index}",
        InferenceComponentModelProps(
            model_name=f"model-{index:04d}",
            endpoint=endpoint,
            container=ModelContainer(
                image=IMAGE, model_data_url=f"s3://artifacts/models/model-{index:04d}/"
            ),
            accelerators=1,
            min_memory_mib=8192,
            artifact_key=key,
            scaling=ComponentScaling(min_copies=0, max_copies=2),
        ),
    )


def test_a_model_scaling_to_zero_costs_17_round_trips():
    stack = cdk.Stack(cdk.App(), "Fleet")
    key = kms.Key.from_key_arn(stack, "ArtifactKey", KEY)
    endpoint = _endpoint(stack, "Endpoint")
    _add_model(stack, endpoint, key, 0)  # the first model starts the role's shared grants
    with counted_round_trips() as count:
        for index in range(1, 11):
            _add_model(stack, endpoint, key, index)
    # Per model: its construct (1), model with its name and its wait for the role's policy
    # (3), component (1), scaling (12: its construct, four resources each under the
    # construct the L2 had, which keeps their logical IDs, two Refs, the target's wait for
    # the component). Its image, artifact read, prefix listing and wildcard
    # acknowledgement are collected by the role: no call.
    assert count[0] / 10 <= 17


def test_an_endpoint_costs_under_50_round_trips_with_what_its_role_collects():
    app = cdk.App()
    stack = cdk.Stack(app, "Fleet")
    key = kms.Key.from_key_arn(stack, "ArtifactKey", KEY)
    _add_model(stack, _endpoint(stack, "First"), key, 0)  # the stack's values, looked up once
    with counted_round_trips() as built:
        endpoint = _endpoint(stack, "Endpoint")
        for index in range(1, 21):
            _add_model(stack, endpoint, key, index)
    with counted_round_trips() as synthesized:
        app.synth()
    # The endpoint (31: its construct, the hosting role with its three base statements and
    # the aspect that adds what the role collects, the config, the endpoint, the wait for
    # the role's policy, the capacity check), its first model's grants (8: three
    # statements, the key, the bucket rendered once) and, at synth, what its role
    # collected (8: four visits of the aspect, one call per continued statement, one for
    # the acknowledgements).
    assert built[0] - 20 * 17 <= 39
    # Synth itself (1), each endpoint's capacity check (1 each), what each role collected
    # (the second role 8 as above; the first one, with one model, only its acknowledgements:
    # 4 visits, 2 calls).
    assert synthesized[0] <= 1 + 2 + 8 + 6

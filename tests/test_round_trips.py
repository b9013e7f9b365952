"""What one more model on an Inference Components endpoint costs in calls into the CDK
runtime (jsii round trips, each a message to the Node.js process): a fleet of a thousand
models builds within 1.5x of plain L1 code only while this stays near the 11 calls such
code makes per model (see scripts/bench_synth.py). Counted, not timed."""

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


def test_a_model_scaling_to_zero_costs_about_20_round_trips():
    stack = cdk.Stack(cdk.App(), "Fleet")
    key = kms.Key.from_key_arn(stack, "ArtifactKey", KEY)
    endpoint = InferenceComponentEndpoint(
        stack,
        "Endpoint",
        # Room for every initial copy: no capacity warning, which is once per endpoint.
        InferenceComponentEndpointProps(
            instance_type="ml.g5.12xlarge",
            min_instance_count=0,
            initial_instance_count=3,
            max_instance_count=3,
        ),
    )

    def add_model(index: int) -> None:
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

    add_model(0)  # the first model also grants what every model of the endpoint shares
    with counted_round_trips() as count:
        for index in range(1, 11):
            add_model(index)
    # Per model: its construct (1), model with its name and its wait for the role's policy
    # (3), component (1), scaling (12: its construct, four resources each under the
    # construct the L2 had, two Refs, the target's wait for the component), its prefix
    # added to the role's shared read and list statements and its wildcard acknowledged (3).
    assert count[0] / 10 <= 20

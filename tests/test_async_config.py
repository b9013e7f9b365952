"""Asynchronous endpoints in the configuration (``inference.async_endpoints``) and in the
inference stack: keys read into the construct's options, every mistake named by its key,
one shared bucket with a prefix per endpoint, and the stack's outputs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from aws_cdk.assertions import Template

from fm_platform.config import AsyncEndpointConfig, InferenceConfig, load_config
from fm_platform.constructs.inference.async_scaling import AsyncScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.inference import InferenceStack
from tests.support import fixture_config, new_app

ONLY_ASYNC = {"ic_endpoints": [], "single_model_endpoints": [], "multi_model_endpoints": []}


def test_from_mapping_reads_the_construct_options():
    config = InferenceConfig.from_mapping(
        {
            **ONLY_ASYNC,
            "async_endpoints": [
                {
                    "name": "transcribe",
                    "instance_type": "ml.g6.xlarge",
                    "container": {
                        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/w:1",
                        "model_size_gib": 8,
                    },
                    "scaling": {"max_instances": 3, "target_backlog_per_instance": 2},
                    "max_concurrent_invocations_per_instance": 2,
                },
                {"name": "embed", "instance_type": "ml.m5.xlarge", "scaling": None},
            ],
        }
    )
    assert config.async_endpoints == (
        AsyncEndpointConfig(
            name="transcribe",
            instance_type="ml.g6.xlarge",
            container=ModelContainer(
                image="123456789012.dkr.ecr.us-east-1.amazonaws.com/w:1", model_size_gib=8
            ),
            scaling=AsyncScaling(max_instances=3, target_backlog_per_instance=2),
            max_concurrent_invocations_per_instance=2,
        ),
        AsyncEndpointConfig(name="embed", instance_type="ml.m5.xlarge", scaling=None),
    )
    first, second = config.async_endpoints
    assert (first.model_name, first.prefix) == ("transcribe", "async/transcribe")
    assert first.scaling is not None and first.scaling.min_instances == 0
    assert (second.scaling, second.prefix) == (None, "async/embed")


def test_the_demo_fleet_has_one_asynchronous_endpoint_that_scales_to_zero():
    [default] = fixture_config().inference.async_endpoints
    assert (default.name, default.instance_type) == ("batch-summarizer", "ml.g5.2xlarge")
    assert default.scaling == AsyncScaling(min_instances=0, max_instances=2)
    # The library type holds none: the demo lives in the configuration file.
    assert InferenceConfig.from_mapping({}).async_endpoints == ()
    assert InferenceConfig.from_mapping({"async_endpoints": []}).async_endpoints == ()


def test_every_mistake_is_named_by_its_key():
    data = {
        "deploy_training": False,
        "inference": {
            **ONLY_ASYNC,
            "single_model_endpoints": [{"name": "same", "instance_type": "ml.m5.xlarge"}],
            "async_endpoints": [
                {
                    "name": "a",
                    "instance_type": "ml.inf1.xlarge",
                    "initial_instance_count": 0,
                    "scaling": {"min_instances": 2, "max_instances": 1, "cooldown": 5},
                    "max_concurrent_invocations_per_instance": 0,
                    "s3_prefix": "shared",
                },
                {"name": "b", "instance_type": "ml.m5.xlarge", "s3_prefix": "shared"},
                {
                    "name": "same",
                    "instance_type": "ml.m5.xlarge",
                    "container": {"model_size_gib": 0},
                },
            ],
        },
    }
    with pytest.raises(ValidationError) as error:
        load_config(data)
    assert list(error.value.problems) == [
        "inference.async_endpoints[0].scaling.cooldown=5: unknown key; allowed keys: "
        "max_instances, min_instances, target_backlog_per_instance, scale_in_cooldown_seconds, "
        "scale_out_cooldown_seconds, wake_cooldown_seconds",
        "inference.async_endpoints[2].name='same': must be unique among the endpoint names",
        "inference.async_endpoints[1].s3_prefix='shared': must be unique among the stack's "
        "asynchronous endpoints: they share its bucket, so the readers of one endpoint's "
        "results would read the other's",
        "inference.async_endpoints[0].instance_type='ml.inf1.xlarge' (endpoint 'a'): "
        "asynchronous inference does not run on inf1 instances (SageMaker's supported "
        "features of each inference option); use inf2 or a GPU type, e.g. ml.g5.2xlarge",
        "inference.async_endpoints[0].initial_instance_count=0 (endpoint 'a'): must be at "
        "least 1: SageMaker creates an endpoint with instances; scale to zero with "
        "scaling.min_instances=0",
        "inference.async_endpoints[0].max_concurrent_invocations_per_instance=0 (endpoint "
        "'a'): below the minimum 1; allowed: 1-1000",
        "inference.async_endpoints[0].scaling.min_instances=2 (endpoint 'a'): must not exceed "
        "max_instances (1)",
        "inference.async_endpoints[2].container.model_size_gib=0 (endpoint 'same'): must be "
        "greater than 0",
    ]


def test_endpoints_of_a_stack_share_one_bucket_each_under_its_prefix():
    config = InferenceConfig(
        ic_endpoints=(),
        single_model_endpoints=(),
        multi_model_endpoints=(),
        async_endpoints=(
            AsyncEndpointConfig(name="transcribe", instance_type="ml.g5.xlarge"),
            AsyncEndpointConfig(
                name="embed", instance_type="ml.m5.xlarge", s3_prefix="backfills/embed"
            ),
        ),
    )
    stack = InferenceStack(new_app(), "Queues", config=config)
    template = Template.from_stack(stack).to_json()
    storage = stack.async_storage
    assert storage is not None
    for endpoint in stack.async_endpoints.values():
        assert endpoint.results_bucket is storage.bucket
        assert endpoint.results_key is storage.encryption_key
        assert endpoint.node.try_find_child("Results") is None
    buckets = [r for r in template["Resources"].values() if r["Type"] == "AWS::S3::Bucket"]
    assert len(buckets) == 2  # asynchronous inference with its logs (artifacts: their own stack)
    bucket = {"Ref": stack.get_logical_id(storage.bucket.node.default_child)}
    outputs = template["Outputs"]
    assert outputs["AsyncInputTranscribe"]["Value"] == {
        "Fn::Join": ["", ["s3://", bucket, "/async/transcribe/inputs"]]
    }
    assert outputs["AsyncOutputEmbed"]["Value"] == {
        "Fn::Join": ["", ["s3://", bucket, "/backfills/embed/outputs"]]
    }
    assert outputs["AsyncFailureEmbed"]["Value"] == {
        "Fn::Join": ["", ["s3://", bucket, "/backfills/embed/failures"]]
    }
    names = [
        {"Fn::GetAtt": [stack.get_logical_id(e.endpoint), "EndpointName"]}
        for e in stack.async_endpoints.values()
    ]
    assert outputs["AsyncEndpoints"]["Value"] == {"Fn::Join": [",", names]}
    assert outputs["EndpointNames"]["Value"] == {"Fn::Join": [",", names]}
    # 3 fixed (EndpointNames, InvokeExample, NotificationTopicArn), 2 endpoint names, 3
    # locations each and AsyncEndpoints; no InvokeExample here.
    assert config.output_count == 3 + 2 + 3 * 2 + 1
    assert len(outputs) == config.output_count - 1
    # Artifacts default to the artifacts stack's bucket, like the other kinds.
    model = stack.async_endpoints["embed"].model
    source = template["Resources"][stack.get_logical_id(model)]["Properties"]["PrimaryContainer"]
    artifacts = stack.resolve(stack.artifacts.bucket.bucket_name)
    assert "QueuesArtifacts:" in str(artifacts)
    assert source["ModelDataSource"]["S3DataSource"]["S3Uri"] == {
        "Fn::Join": ["", ["s3://", artifacts, "/models/embed/"]]
    }


def test_a_stack_without_asynchronous_endpoints_has_no_bucket_or_outputs_for_them():
    config = replace(fixture_config().inference, async_endpoints=())
    stack = InferenceStack(new_app(), "NoQueues", config=config)
    assert stack.async_storage is None
    outputs = Template.from_stack(stack).to_json()["Outputs"]
    assert not [key for key in outputs if key.startswith("Async")]
    assert len(outputs) == config.output_count

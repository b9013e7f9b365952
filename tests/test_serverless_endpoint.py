"""ServerlessEndpoint: a serverless variant (memory, maximum and provisioned concurrency),
its endpoint config encrypted with a customer-managed key (the image copy SageMaker
keeps), no network isolation (unsupported), clean under cfn-lint and the three cdk-nag
packs, and every limit botocore states refused by key."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms
from aws_cdk.assertions import Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.serverless_endpoint import (
    ServerlessEndpoint,
    ServerlessEndpointProps,
)
from fm_platform.core.compliance import apply_compliance_packs
from tests.support import nag_findings, new_app

CONTAINER = ModelContainer(
    image="763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-inference:2.5.1-cpu-py311",
    model_data_url="s3://models/classifier/model.tar.gz",
)


def _endpoint(app: cdk.App, **options: object) -> cdk.Stack:
    stack = cdk.Stack(app, "Sporadic")
    ServerlessEndpoint(
        stack,
        "Classifier",
        ServerlessEndpointProps(**{"model_name": "classifier", "container": CONTAINER, **options}),  # type: ignore[arg-type]
    )
    return stack


def test_the_variant_is_serverless_with_its_memory_and_concurrency():
    template = Template.from_stack(
        _endpoint(new_app(), memory_size_mib=4096, max_concurrency=20, provisioned_concurrency=2)
    ).to_json()
    (config,) = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig"
    ]
    (variant,) = config["ProductionVariants"]
    assert variant["ServerlessConfig"] == {
        "MemorySizeInMB": 4096,
        "MaxConcurrency": 20,
        "ProvisionedConcurrency": 2,
    }
    assert "InstanceType" not in variant
    matches = lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_the_model_reads_its_archive_through_model_data_url():
    # botocore ContainerDefinition.ModelDataSource: not with SageMaker serverless endpoints.
    template = Template.from_stack(_endpoint(new_app()))
    template.has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "PrimaryContainer": {
                "ModelDataUrl": "s3://models/classifier/model.tar.gz",
                "ModelDataSource": Match.absent(),
            }
        },
    )


def test_defaults_are_two_gib_and_five_concurrent_invocations():
    template = Template.from_stack(_endpoint(new_app()))
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                {"ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5}}
            ]
        },
    )
    template.has_resource_properties(
        "AWS::SageMaker::Model", {"EnableNetworkIsolation": Match.absent()}
    )


def test_the_endpoint_config_is_encrypted_with_a_key_of_its_own_the_role_may_use():
    template = Template.from_stack(_endpoint(new_app()))
    (key,) = template.find_resources("AWS::KMS::Key")
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig", {"KmsKeyId": {"Fn::GetAtt": [key, "Arn"]}}
    )
    template.has_resource_properties(
        "AWS::KMS::Key",
        {"EnableKeyRotation": True, "Description": Match.string_like_regexp("image")},
    )
    template.has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
                                "Resource": {"Fn::GetAtt": [key, "Arn"]},
                            }
                        )
                    ]
                )
            }
        },
    )


def test_a_key_passed_in_encrypts_the_endpoint_config_and_none_is_created():
    app = new_app()
    stack = cdk.Stack(app, "Sporadic")
    key = kms.Key.from_key_arn(
        stack,
        "Given",
        "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    )
    ServerlessEndpoint(
        stack,
        "Classifier",
        ServerlessEndpointProps(model_name="classifier", container=CONTAINER, encryption_key=key),
    )
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::KMS::Key", 0)
    template.has_resource_properties("AWS::SageMaker::EndpointConfig", {"KmsKeyId": key.key_arn})


def test_the_three_compliance_packs_pass():
    app = new_app()
    _endpoint(app, provisioned_concurrency=1)
    apply_compliance_packs(app)
    assert nag_findings(app) == []


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"memory_size_mib": 512}, "memory_size_mib=512: below the minimum 1024"),
        ({"memory_size_mib": 8192}, "memory_size_mib=8192: above the maximum 6144"),
        ({"memory_size_mib": 1500}, "memory_size_mib=1500: a multiple of 1024"),
        ({"max_concurrency": 0}, "max_concurrency=0: below the minimum 1"),
        ({"max_concurrency": 201}, "max_concurrency=201: above the maximum 200"),
        ({"provisioned_concurrency": 0}, "provisioned_concurrency=0: below the minimum 1"),
        (
            {"max_concurrency": 4, "provisioned_concurrency": 8},
            "provisioned_concurrency=8: at most max_concurrency (4)",
        ),
        (
            {"network_isolation": True},
            "network_isolation=True: false: Serverless Inference does not support network "
            "isolation",
        ),
        (
            {"container": ModelContainer(model_data_url="s3://models/classifier/")},
            "container.model_data_url='s3://models/classifier/': is a prefix of uncompressed "
            "files, which a serverless endpoint cannot read (botocore "
            "ContainerDefinition.ModelDataSource: not with SageMaker serverless endpoints): "
            "pack them into a model.tar.gz (tar czf model.tar.gz -C <dir> .), upload it and "
            "name it instead",
        ),
    ],
)
def test_bad_values_are_refused_by_key(options, expected):
    with pytest.raises(ValueError, match="invalid ServerlessEndpointProps") as error:
        _endpoint(new_app(), **options)
    assert expected in str(error.value)

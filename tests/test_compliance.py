"""cdk-nag acknowledgements and the rendering of values inside finding ids."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3

from fm_platform.core.compliance import (
    Acknowledgements,
    acknowledge,
    acknowledge_wildcard_resource,
    nag_rendered,
    nag_rendered_all,
    suppress_scanner_findings,
)
from tests.support import nag_findings, new_app


@pytest.fixture
def stack() -> cdk.Stack:
    return cdk.Stack(new_app(), "Nag")


def test_nag_rendered_prints_values_as_cdk_nag_does(stack):
    bucket = s3.Bucket(stack, "Models")
    logical_id = stack.get_logical_id(bucket.node.default_child)
    assert nag_rendered(stack, bucket.arn_for_objects("a/*")) == f"<{logical_id}.Arn>/a/*"
    assert nag_rendered(stack, f"arn:{stack.partition}:s3:::{bucket.bucket_name}/b/*") == (
        f"arn:<AWS::Partition>:s3:::<{logical_id}>/b/*"
    )
    assert nag_rendered(stack, cdk.Fn.import_value("Shared")) == "Shared"
    assert nag_rendered(stack, cdk.Fn.sub("arn:${AWS::Partition}:s3:::x/*")) == (
        "arn:<AWS::Partition>:s3:::x/*"
    )
    assert nag_rendered(stack, "*") == "*"
    assert nag_rendered(stack, "arn:aws:s3:::${x}/*") == "arn:aws:s3:::<x>/*"


def test_nag_rendered_all_renders_each_value(stack):
    bucket = s3.Bucket(stack, "Models")
    values = ["*", bucket.arn_for_objects("a/*"), "arn:aws:s3:::b/*", cdk.Aws.ACCOUNT_ID]
    assert nag_rendered_all(stack, values) == [nag_rendered(stack, v) for v in values]


def test_acknowledge_rejects_a_rule_of_a_pack_the_project_does_not_run(stack):
    with pytest.raises(ValueError, match="rule 'PCI.DSS.321-S3BucketLoggingEnabled' belongs"):
        acknowledge(stack, "a reason", "PCI.DSS.321-S3BucketLoggingEnabled")


def test_wildcard_acknowledgement_matches_the_finding_cdk_nag_raises():
    app = new_app()
    stack = cdk.Stack(app, "Wildcard")
    bucket = s3.Bucket(
        stack,
        "Data",
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=True,
        versioned=True,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
    )
    role = iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    policy = iam.ManagedPolicy(
        stack,
        "ReadPolicy",
        roles=[role],
        statements=[
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[bucket.arn_for_objects("models/*")]
            )
        ],
    )
    acknowledge_wildcard_resource(
        policy, "reads every model under the prefix", bucket.arn_for_objects("models/*")
    )
    findings = nag_findings(app)
    assert not [f for f in findings if f.startswith("AwsSolutions-IAM5")]


def test_collected_acknowledgements_cover_the_findings():
    app = new_app()
    stack = cdk.Stack(app, "Collected")
    role = iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    objects = [f"arn:aws:s3:::models/m{index}/*" for index in range(10)]
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=objects))
    collected = Acknowledgements(role)
    for arn in objects[:5]:
        collected.acknowledge_wildcard_resource("reads one model's prefix", arn)
    collected.acknowledge_rendered("reads one model's prefix", *objects[5:])
    collected.acknowledge(
        "the role's own policy",
        "HIPAA.Security-IAMNoInlinePolicy",
        "NIST.800.53.R5-IAMNoInlinePolicy",
    )
    collected.add_collected()
    collected.add_collected()  # nothing new: adds nothing twice
    assert not [finding for finding in nag_findings(app) if "Reader" in finding]


def test_without_adding_the_collected_acknowledgements_the_findings_stay():
    app = new_app()
    stack = cdk.Stack(app, "NotAdded")
    role = iam.Role(stack, "Reader", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    arn = "arn:aws:s3:::models/m/*"
    role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[arn]))
    Acknowledgements(role).acknowledge_wildcard_resource("reads one model's prefix", arn)
    assert [f for f in nag_findings(app) if f.startswith("AwsSolutions-IAM5")]


def test_scanner_suppressions_are_written_where_checkov_and_cfn_nag_read_them(stack):
    bucket = s3.Bucket(stack, "Logs")
    resource = bucket.node.default_child
    suppress_scanner_findings(resource, checkov={"CKV_AWS_18": "first reason"})
    suppress_scanner_findings(
        resource, checkov={"CKV_AWS_145": "second reason"}, cfn_nag={"W35": "third reason"}
    )
    metadata = stack.resolve(resource.cfn_options.metadata)
    assert metadata["checkov"] == {
        "skip": [
            {"id": "CKV_AWS_18", "comment": "first reason"},
            {"id": "CKV_AWS_145", "comment": "second reason"},
        ]
    }
    assert metadata["cfn_nag"] == {"rules_to_suppress": [{"id": "W35", "reason": "third reason"}]}

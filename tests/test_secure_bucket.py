"""SecureBucket: its policies follow the buckets' removal policy; the access-log bucket's
acknowledged findings reach checkov and cfn_nag."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from tests.support import new_app


def _template(**options) -> Template:
    stack = cdk.Stack(new_app(), "Buckets")
    SecureBucket(stack, "Data", SecureBucketProps(purpose="test data", **options))
    return Template.from_stack(stack)


@pytest.mark.parametrize(
    ("removal_policy", "expected"),
    [(cdk.RemovalPolicy.RETAIN, {"Retain"}), (cdk.RemovalPolicy.DESTROY, {"Delete"})],
)
def test_bucket_policies_follow_the_removal_policy(removal_policy, expected):
    # A retained bucket keeps its TLS-only policy (and the log bucket its delivery grant).
    policies = _template(removal_policy=removal_policy).find_resources("AWS::S3::BucketPolicy")
    assert len(policies) == 2
    assert {p["DeletionPolicy"] for p in policies.values()} == expected


def test_access_log_bucket_findings_are_acknowledged_for_checkov_and_cfn_nag():
    buckets = _template().find_resources("AWS::S3::Bucket")
    (access_logs,) = [b for b in buckets.values() if "LoggingConfiguration" not in b["Properties"]]
    metadata = access_logs["Metadata"]
    assert [e["id"] for e in metadata["checkov"]["skip"]] == ["CKV_AWS_18", "CKV_AWS_145"]
    assert [e["id"] for e in metadata["cfn_nag"]["rules_to_suppress"]] == ["W35"]
    assert all(len(e["comment"]) > 40 for e in metadata["checkov"]["skip"])


def test_bucket_name_is_passed_on():
    buckets = _template(bucket_name="sagemaker-test-data").find_resources(
        "AWS::S3::Bucket", {"Properties": {"BucketName": "sagemaker-test-data"}}
    )
    assert len(buckets) == 1

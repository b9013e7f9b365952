"""SecureBucket: its policies follow the buckets' removal policy; the access-log bucket's
acknowledged findings reach checkov and cfn_nag; the lifecycle rule both buckets have, and
what BucketOptions add (a bad value refused by its configuration key)."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.config import load_config
from fm_platform.constructs.secure_bucket import (
    BucketOptions,
    BucketOptionsAspect,
    SecureBucket,
    SecureBucketProps,
)
from fm_platform.rules.problems import ValidationError
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


def _with_options(options: BucketOptions, **props) -> dict[str, dict]:
    """Both buckets' properties, by construct ID, after the aspect applied ``options``."""
    stack = cdk.Stack(new_app(), "Buckets")
    SecureBucket(stack, "Data", SecureBucketProps(purpose="test data", **props))
    BucketOptionsAspect(options).add_to(stack)
    buckets = Template.from_stack(stack).find_resources("AWS::S3::Bucket")
    return {
        "AccessLogs" if key.startswith("DataAccessLogs") else "Bucket": r["Properties"]
        for key, r in buckets.items()
    }


def test_both_buckets_remove_incomplete_uploads_after_a_week_by_default():
    for properties in _with_options(BucketOptions()).values():
        assert properties["LifecycleConfiguration"]["Rules"] == [
            {
                "Id": "AbortIncompleteUploads",
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
                "Status": "Enabled",
            }
        ]
        assert "NotificationConfiguration" not in properties
        assert "ObjectLockEnabled" not in properties


def test_options_expire_old_versions_send_events_and_lock_objects():
    options = BucketOptions(
        noncurrent_version_expiration_days=90, event_bridge_enabled=True, object_lock_enabled=True
    )
    buckets = _with_options(options)
    assert set(buckets) == {"Bucket", "AccessLogs"}
    for properties in buckets.values():
        rules = properties["LifecycleConfiguration"]["Rules"]
        assert {
            "Id": "ExpireNoncurrentVersions",
            "NoncurrentVersionExpiration": {"NoncurrentDays": 90},
            "Status": "Enabled",
        } in rules
        assert properties["NotificationConfiguration"] == {
            "EventBridgeConfiguration": {"EventBridgeEnabled": True}
        }
        assert properties["ObjectLockEnabled"] is True


def test_object_lock_skips_a_bucket_whose_objects_are_replaced_in_place():
    buckets = _with_options(BucketOptions(object_lock_enabled=True), replaced_in_place=True)
    assert "ObjectLockEnabled" not in buckets["Bucket"]
    # Log delivery only adds objects.
    assert buckets["AccessLogs"]["ObjectLockEnabled"] is True


def test_options_are_applied_once():
    stack = cdk.Stack(new_app(), "Buckets")
    bucket = SecureBucket(stack, "Data", SecureBucketProps(purpose="test data"))
    bucket.apply_options(BucketOptions())
    with pytest.raises(ValueError, match="Buckets/Data: bucket options are applied already"):
        bucket.apply_options(BucketOptions())


@pytest.mark.parametrize("days", [0, -30])
def test_noncurrent_version_days_below_one_are_refused_by_key(days):
    with pytest.raises(ValidationError) as error:
        load_config({"buckets": {"noncurrent_version_expiration_days": days}})
    assert error.value.problems == (
        f"buckets.noncurrent_version_expiration_days={days}: must be a whole number of days, "
        "at least 1 (counted from when a newer version replaces the object); leave it unset "
        "to keep old versions",
    )


def test_a_central_bucket_takes_the_access_logs_and_no_companion_is_created():
    options = BucketOptions(
        access_logs_bucket="central-logs-111122223333", event_bridge_enabled=True
    )
    buckets = _with_options(options)
    assert set(buckets) == {"Bucket"}
    assert buckets["Bucket"]["LoggingConfiguration"] == {
        "DestinationBucketName": "central-logs-111122223333",
        "LogFilePrefix": "access-logs/Buckets/Data/",
    }
    assert "NotificationConfiguration" in buckets["Bucket"]


def test_a_central_access_logs_bucket_must_be_a_bucket_name():
    with pytest.raises(ValidationError) as error:
        load_config({"buckets": {"access_logs_bucket": "s3://central-logs"}})
    assert error.value.problems == (
        "buckets.access_logs_bucket='s3://central-logs': must be an S3 bucket name: 3-63 "
        "lowercase letters, digits, dots and hyphens, beginning and ending with a letter or "
        "digit (not an s3:// URI)",
    )

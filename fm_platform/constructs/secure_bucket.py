"""An S3 bucket that is secure by default, with its access-log bucket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from aws_cdk import CfnResource, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from fm_platform.core.compliance import acknowledge, suppress_scanner_findings
from fm_platform.core.encryption import customer_managed_key

_ACCESS_LOGS_USE_BUCKET_POLICY = "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy"
_LOGS_ITSELF = (
    "This bucket receives the server access logs of its companion bucket; logging it too "
    "would need a third bucket and so on without end."
)
_SSE_S3_ONLY = (
    "S3 server access log delivery supports only SSE-S3 (AES256) on the target bucket, not SSE-KMS."
)


@dataclass(frozen=True, kw_only=True)
class SecureBucketProps:
    """Options for :class:`SecureBucket`.

    purpose: what the bucket holds, used in the KMS key's description.
    encryption_key: the KMS key for objects; by default a customer-managed key with
        rotation is created.
    removal_policy: what happens to the bucket on stack deletion; by default RETAIN.
    bucket_name: the bucket's name (may hold tokens); by default CloudFormation generates
        one.
    """

    purpose: str
    encryption_key: kms.IKey | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    bucket_name: str | None = None


class SecureBucket(Construct):
    """A versioned, KMS-encrypted, TLS-only bucket with public access blocked and server
    access logs written to a companion bucket. Both bucket policies follow the removal
    policy (a retained bucket stays TLS-only). The companion bucket's own findings (no
    access log, SSE-S3) are acknowledged for cdk-nag, checkov and cfn_nag.

    Attributes: ``bucket``, ``encryption_key``, ``access_log_bucket``. Construct IDs
    ``Key``, ``Bucket`` and ``AccessLogs`` are stable: renaming them replaces the resources.
    """

    def __init__(self, scope: Construct, construct_id: str, props: SecureBucketProps) -> None:
        """Create the bucket, its key and its access-log bucket under ``scope``."""
        super().__init__(scope, construct_id)
        # Grant log delivery through the bucket policy, not an ACL (which would need
        # ObjectWriter ownership), whatever the embedding app's feature flags say.
        self.node.set_context(_ACCESS_LOGS_USE_BUCKET_POLICY, True)
        self.encryption_key: kms.IKey = props.encryption_key or customer_managed_key(
            self, "Key", purpose=props.purpose
        )
        self.access_log_bucket = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=props.removal_policy,
        )
        acknowledge(
            self.access_log_bucket,
            _LOGS_ITSELF,
            "AwsSolutions-S1",
            "HIPAA.Security-S3BucketLoggingEnabled",
            "NIST.800.53.R5-S3BucketLoggingEnabled",
        )
        acknowledge(
            self.access_log_bucket,
            _SSE_S3_ONLY,
            "HIPAA.Security-S3DefaultEncryptionKMS",
            "NIST.800.53.R5-S3DefaultEncryptionKMS",
        )
        suppress_scanner_findings(
            cast(CfnResource, self.access_log_bucket.node.default_child),
            checkov={"CKV_AWS_18": _LOGS_ITSELF, "CKV_AWS_145": _SSE_S3_ONLY},
            cfn_nag={"W35": _LOGS_ITSELF},
        )
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            bucket_name=props.bucket_name,
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.encryption_key,
            bucket_key_enabled=True,
            enforce_ssl=True,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="access-logs/",
            removal_policy=props.removal_policy,
        )
        for bucket in (self.bucket, self.access_log_bucket):
            # The policies (TLS only, log delivery) stay with the buckets they protect.
            if bucket.policy is not None:
                bucket.policy.apply_removal_policy(props.removal_policy)
            acknowledge(
                bucket,
                "Single-region platform bucket: its contents are reproducible from source "
                "(scripts, configuration, logs); versioning and retain-on-delete protect it, "
                "and cross-region replication is left to the deploying account's policy.",
                "HIPAA.Security-S3BucketReplicationEnabled",
                "NIST.800.53.R5-S3BucketReplicationEnabled",
            )

"""An S3 bucket that is secure by default, with its access-log bucket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import jsii
from aws_cdk import AspectPriority, Aspects, CfnResource, Duration, IAspect, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct, IConstruct

from fm_platform.core.compliance import acknowledge, suppress_scanner_findings
from fm_platform.core.encryption import customer_managed_key
from fm_platform.rules.buckets import check_noncurrent_version_days
from fm_platform.rules.inference import check_bucket_name
from fm_platform.rules.problems import Problems

_ACCESS_LOGS_USE_BUCKET_POLICY = "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy"
_LOGS_ITSELF = (
    "This bucket receives the server access logs of its companion bucket; logging it too "
    "would need a third bucket and so on without end."
)
_SSE_S3_ONLY = (
    "S3 server access log delivery supports only SSE-S3 (AES256) on the target bucket, not SSE-KMS."
)
#: Days after which S3 removes the parts of a multipart upload that never completed (the
#: Amazon S3 User Guide's example, "Configuring a bucket lifecycle configuration to delete
#: incomplete multipart uploads"). The parts are never an object, so no data is lost; the
#: rule is every bucket's active lifecycle rule (Control Tower CT.S3.PR.3 and CT.S3.PR.6).
ABORT_INCOMPLETE_UPLOADS_DAYS = 7


@dataclass(frozen=True, kw_only=True)
class BucketOptions:
    """Options every :class:`SecureBucket` of an app takes, both its buckets (the
    configuration's ``buckets`` keys too); :class:`BucketOptionsAspect` applies them.

    noncurrent_version_expiration_days: S3 deletes an object version this many days after
        a newer one replaced it (or it was deleted). By default none: old versions are
        kept, since how long to keep them is the data owner's decision.
    event_bridge_enabled: send the buckets' S3 events to Amazon EventBridge (the default
        bus; rules there route them). By default false: nothing in the stacks consumes them.
    object_lock_enabled: turn S3 Object Lock on (no default retention: an object is locked
        only when a retention or legal hold is set on it) for the buckets whose objects are
        never replaced in place, that is every bucket except the lifecycle scripts' and the
        model artifacts'. By default false: Object Lock cannot be turned off again.
    access_logs_bucket: the name of an existing bucket (a landing zone's central log
        bucket) that receives every bucket's server access logs, under the prefix
        ``access-logs/<construct path>/``; no companion access-log bucket is then created.
        Its policy must let ``logging.s3.amazonaws.com`` put objects for this account (Amazon
        S3 User Guide, "Enabling Amazon S3 server access logging"), and it must use SSE-S3.
        By default none: each bucket gets its own companion bucket.
    """

    noncurrent_version_expiration_days: int | None = None
    event_bridge_enabled: bool = False
    object_lock_enabled: bool = False
    access_logs_bucket: str | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_noncurrent_version_days(
            problems,
            "noncurrent_version_expiration_days",
            self.noncurrent_version_expiration_days,
        )
        check_bucket_name(problems, "access_logs_bucket", self.access_logs_bucket)


@dataclass(frozen=True, kw_only=True)
class SecureBucketProps:
    """Options for :class:`SecureBucket`.

    purpose: what the bucket holds, used in the KMS key's description.
    encryption_key: the KMS key for objects; by default a customer-managed key with
        rotation is created.
    removal_policy: what happens to the bucket on stack deletion; by default RETAIN.
    bucket_name: the bucket's name (may hold tokens); by default CloudFormation generates
        one.
    replaced_in_place: whether the bucket's objects are replaced in place as a matter of
        course (uploaded scripts, model artifacts): Object Lock (write once, read many) is
        then never turned on for it, whatever :class:`BucketOptions` say; by default false.
    """

    purpose: str
    encryption_key: kms.IKey | None = None
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    bucket_name: str | None = None
    replaced_in_place: bool = False


class SecureBucket(Construct):
    """A versioned, KMS-encrypted, TLS-only bucket with public access blocked and server
    access logs written to a companion bucket. Both bucket policies follow the removal
    policy (a retained bucket stays TLS-only). The companion bucket's own findings (no
    access log, SSE-S3) are acknowledged for cdk-nag, checkov and cfn_nag. Both buckets
    have one lifecycle rule, removing incomplete multipart uploads after
    ``ABORT_INCOMPLETE_UPLOADS_DAYS``; :meth:`apply_options` adds the rest.

    Attributes: ``bucket``, ``encryption_key``, ``access_log_bucket`` (the companion, or
    the central bucket of :attr:`BucketOptions.access_logs_bucket`). Construct IDs
    ``Key``, ``Bucket`` and ``AccessLogs`` are stable: renaming them replaces the resources.
    """

    def __init__(self, scope: Construct, construct_id: str, props: SecureBucketProps) -> None:
        """Create the bucket, its key and its access-log bucket under ``scope``."""
        super().__init__(scope, construct_id)
        self.replaced_in_place = props.replaced_in_place
        self._options: BucketOptions | None = None
        abort_uploads = s3.LifecycleRule(
            id="AbortIncompleteUploads",
            abort_incomplete_multipart_upload_after=Duration.days(ABORT_INCOMPLETE_UPLOADS_DAYS),
        )
        # Grant log delivery through the bucket policy, not an ACL (which would need
        # ObjectWriter ownership), whatever the embedding app's feature flags say.
        self.node.set_context(_ACCESS_LOGS_USE_BUCKET_POLICY, True)
        self.encryption_key: kms.IKey = props.encryption_key or customer_managed_key(
            self, "Key", purpose=props.purpose
        )
        self._companion = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=props.removal_policy,
            lifecycle_rules=[abort_uploads],
        )
        self.access_log_bucket: s3.IBucket = self._companion
        acknowledge(
            self._companion,
            _LOGS_ITSELF,
            "AwsSolutions-S1",
            "HIPAA.Security-S3BucketLoggingEnabled",
            "NIST.800.53.R5-S3BucketLoggingEnabled",
        )
        acknowledge(
            self._companion,
            _SSE_S3_ONLY,
            "HIPAA.Security-S3DefaultEncryptionKMS",
            "NIST.800.53.R5-S3DefaultEncryptionKMS",
        )
        suppress_scanner_findings(
            cast(CfnResource, self._companion.node.default_child),
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
            server_access_logs_bucket=self._companion,
            server_access_logs_prefix="access-logs/",
            removal_policy=props.removal_policy,
            lifecycle_rules=[abort_uploads],
        )
        for bucket in (self.bucket, self._companion):
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

    def apply_options(self, options: BucketOptions) -> None:
        """Apply ``options`` to both buckets (once: a second call raises ``ValueError``)."""
        if self._options is not None:
            raise ValueError(f"{self.node.path}: bucket options are applied already")
        self._options = options
        own: tuple[s3.Bucket, ...] = (self.bucket, self._companion)
        if options.access_logs_bucket is not None:
            self._log_to(options.access_logs_bucket)
            own = (self.bucket,)
        for bucket in own:
            cfn = cast(s3.CfnBucket, bucket.node.default_child)
            if options.noncurrent_version_expiration_days is not None:
                bucket.add_lifecycle_rule(
                    id="ExpireNoncurrentVersions",
                    noncurrent_version_expiration=Duration.days(
                        options.noncurrent_version_expiration_days
                    ),
                )
            if options.event_bridge_enabled:
                # On the bucket itself: aws-cdk-lib's ``event_bridge_enabled`` sets it
                # through a custom resource function instead.
                cfn.notification_configuration = s3.CfnBucket.NotificationConfigurationProperty(
                    event_bridge_configuration=s3.CfnBucket.EventBridgeConfigurationProperty(
                        event_bridge_enabled=True
                    )
                )
            if options.object_lock_enabled and not (
                self.replaced_in_place and bucket is self.bucket
            ):
                cfn.object_lock_enabled = True

    def _log_to(self, bucket_name: str) -> None:
        """Deliver the bucket's server access logs to ``bucket_name`` instead of the
        companion bucket, which is removed (with its policy) before it is synthesized."""
        self.node.try_remove_child("AccessLogs")
        cfn = cast(s3.CfnBucket, self.bucket.node.default_child)
        cfn.logging_configuration = s3.CfnBucket.LoggingConfigurationProperty(
            destination_bucket_name=bucket_name,
            log_file_prefix=f"access-logs/{self.node.path}/",
        )
        self.access_log_bucket = s3.Bucket.from_bucket_name(self, "CentralAccessLogs", bucket_name)


@jsii.implements(IAspect)
class BucketOptionsAspect:
    """Applies :class:`BucketOptions` to every :class:`SecureBucket` under the scope it is
    added to (``Aspects.of(scope).add(...)``, or :meth:`add_to`)."""

    def __init__(self, options: BucketOptions) -> None:
        self.options = options

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, SecureBucket):
            node.apply_options(self.options)

    def add_to(self, scope: IConstruct) -> None:
        """Add the aspect to ``scope`` before the read-only aspects (the cdk-nag packs)."""
        Aspects.of(scope).add(self, priority=AspectPriority.MUTATING)

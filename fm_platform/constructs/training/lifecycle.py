"""HyperPod lifecycle scripts: uploaded to S3 with their provisioning parameters."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from aws_cdk import CfnResource, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct, IConstruct

from fm_platform.compliance import acknowledge, nag_rendered
from fm_platform.constructs.dependencies import drop_redundant_depends_on
from fm_platform.constructs.encryption import customer_managed_key
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.validation import Problems, is_unresolved

ON_CREATE_SCRIPT = "on_create.sh"
PARAMETERS_FILE = "provisioning_parameters.json"
REQUIRED_PARAMETERS = ("controller_group", "worker_groups")
# S3's "safe" key characters, in slash-separated segments without empty ones.
_PREFIX = re.compile(r"^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*$")
_PREFIX_MAX_CHARS = 900
_DEPLOYMENT_SINGLETON_ID = "Custom::CDKBucketDeployment"
_UPLOAD_MEMORY_MIB = 512


def default_assets_path() -> str:
    """The lifecycle_assets folder shipped in this package."""
    return str(Path(__file__).resolve().parent.parent.parent / "lifecycle_assets")


@dataclass(frozen=True, kw_only=True)
class LifecycleScriptsProps:
    """Options for :class:`LifecycleScripts`.

    provisioning_parameters: the content of provisioning_parameters.json (``version``,
        ``workload_manager``, ``controller_group``, optional ``login_group``,
        ``worker_groups``, ``fsx_dns_name``, ``fsx_mountname``, ``fsx_mount_path``); values
        may be CDK tokens.
    assets_path: folder uploaded as the scripts; by default the package's own
        ``lifecycle_assets`` (on_create.sh and provision.py).
    prefix: S3 key prefix the files go under, without leading or trailing slash; by default
        ``lifecycle-scripts``.
    bucket: bucket receiving the files; by default a SecureBucket (KMS, TLS-only, versioned,
        access-logged, retained) is created.
    """

    provisioning_parameters: Mapping[str, Any]
    assets_path: str | None = None
    prefix: str = "lifecycle-scripts"
    bucket: s3.IBucket | None = None

    def validate(self) -> None:
        """Raise one ValueError listing every problem in these props."""
        problems = Problems("LifecycleScriptsProps")
        assets = Path(self.assets_path or default_assets_path())
        if not assets.is_dir():
            problems.add("assets_path", str(assets), "must be an existing folder")
        else:
            if not (assets / ON_CREATE_SCRIPT).is_file():
                problems.add("assets_path", str(assets), f"must contain {ON_CREATE_SCRIPT}")
            if (assets / PARAMETERS_FILE).exists():
                problems.add(
                    "assets_path",
                    str(assets),
                    f"must not contain {PARAMETERS_FILE}: it is written from "
                    "provisioning_parameters",
                )
        if not is_unresolved(self.prefix) and (
            not _PREFIX.match(self.prefix) or len(self.prefix) > _PREFIX_MAX_CHARS
        ):
            problems.add(
                "prefix",
                self.prefix,
                "must be an S3 key prefix of letters, digits and !_.*'()- in '/'-separated "
                f"parts, without leading, trailing or double slash, at most "
                f"{_PREFIX_MAX_CHARS} characters",
            )
        for key in REQUIRED_PARAMETERS:
            if key not in self.provisioning_parameters:
                problems.add(
                    f"provisioning_parameters.{key}", None, "is required for classic Slurm mode"
                )
        workers = self.provisioning_parameters.get("worker_groups")
        if workers is not None and not is_unresolved(workers):
            for index, worker in enumerate(workers):
                if not isinstance(worker, Mapping) or not {
                    "instance_group_name",
                    "partition_name",
                } <= set(worker):
                    problems.add(
                        f"provisioning_parameters.worker_groups[{index}]",
                        worker,
                        "must be a mapping with instance_group_name and partition_name",
                    )
        problems.raise_if_any()


class LifecycleScripts(Construct):
    """The lifecycle scripts HyperPod runs on each node, uploaded as plain files under
    ``<prefix>/`` together with a ``provisioning_parameters.json`` rendered at deploy time.

    Attributes: ``bucket``, ``prefix``, ``s3_uri`` (``s3://<bucket>/<prefix>/``, read from
    the upload, so whatever uses it is created after the files exist), ``on_create_script``,
    ``deployment`` (the BucketDeployment, to depend on explicitly), ``objects_arn``,
    ``read_grant_finding`` (the cdk-nag finding :meth:`grant_read` raises on the grantee's
    policy, to acknowledge there), ``files`` (the staged scripts folder), ``upload_policy``
    and ``upload_log_group`` (None when an earlier LifecycleScripts in the stack made the
    shared upload Lambda). Construct IDs ``Bucket``, ``Upload`` and ``UploadLogs`` are stable.
    """

    on_create_script = ON_CREATE_SCRIPT

    def __init__(self, scope: Construct, construct_id: str, props: LifecycleScriptsProps) -> None:
        super().__init__(scope, construct_id)
        props.validate()
        self.prefix = props.prefix
        self.bucket: s3.IBucket = props.bucket or self._secure_bucket()
        self.objects_arn = self.bucket.arn_for_objects(f"{self.prefix}/*")
        # The finding grant_read and the upload policy raise: acknowledge it next to a grantee.
        self.read_grant_finding = (
            f"AwsSolutions-IAM5[Resource::{nag_rendered(self, self.objects_arn)}]"
        )
        # The upload Lambda is shared per stack: only the first LifecycleScripts creates its
        # role and log group; later ones attach their own policy to that role.
        shared = _deployment_singleton(Stack.of(self)) is not None
        self.upload_log_group: logs.LogGroup | None = None if shared else self._upload_log_group()
        upload_role = None if shared else self._upload_role()
        self.files = s3_assets.Asset(
            self,
            "Files",
            path=props.assets_path or default_assets_path(),
            exclude=["__pycache__", "*.pyc"],
        )
        self.deployment = s3deploy.BucketDeployment(
            self,
            "Upload",
            destination_bucket=self.bucket,
            destination_key_prefix=f"{self.prefix}/",
            sources=[
                s3deploy.Source.bucket(self.files.bucket, self.files.s3_object_key),
                s3deploy.Source.json_data(PARAMETERS_FILE, dict(props.provisioning_parameters)),
            ],
            extract=True,
            prune=True,
            retain_on_delete=True,
            memory_limit=_UPLOAD_MEMORY_MIB,
            log_group=self.upload_log_group,
            role=upload_role,
        )
        # Through deployed_bucket, whatever uses the URI waits for the upload to finish.
        self.s3_uri = f"s3://{self.deployment.deployed_bucket.bucket_name}/{self.prefix}/"
        self.upload_policy = self._upload_policy()
        self.deployment.node.add_dependency(self.upload_policy)
        self._acknowledge_upload_handler()

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` list the bucket, read the lifecycle objects and decrypt them."""
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["s3:GetObject"],
            resource_arns=[self.objects_arn],
        )
        grant = grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee, actions=["s3:ListBucket"], resource_arns=[self.bucket.bucket_arn]
            )
        )
        if self.bucket.encryption_key is not None:
            grant = grant.combine(self.bucket.encryption_key.grant_decrypt(grantee))
        return grant

    def _secure_bucket(self) -> s3.IBucket:
        purpose = "HyperPod lifecycle scripts"
        return SecureBucket(self, "Bucket", SecureBucketProps(purpose=purpose)).bucket

    def _upload_role(self) -> iam.IRole:
        """The upload Lambda's role; immutable, as its grants are written exactly, once, in
        the managed policy (BucketDeployment's own grants use wildcards)."""
        role = iam.Role(
            self,
            "UploadRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Copies HyperPod lifecycle scripts into their bucket prefix",
        )
        return role.without_policy_updates()

    def _upload_log_group(self) -> logs.LogGroup:
        """A KMS-encrypted log group for the upload handler, kept for a year."""
        key = customer_managed_key(self, "UploadLogsKey", purpose="lifecycle upload logs")
        key.grant_encrypt_decrypt(
            iam.ServicePrincipal(f"logs.{Stack.of(self).region}.amazonaws.com")
        )
        return logs.LogGroup(
            self,
            "UploadLogs",
            encryption_key=key,
            retention=logs.RetentionDays.ONE_YEAR,
            removal_policy=RemovalPolicy.RETAIN,
        )

    def _upload_policy(self) -> iam.ManagedPolicy:
        """Exactly what the upload handler needs: read the two staged assets, write and prune
        the prefix, use the bucket key, write its logs."""
        staged = [self.files] + [
            child for child in self.deployment.node.children if isinstance(child, s3_assets.Asset)
        ]
        statements = [
            iam.PolicyStatement(
                actions=["s3:GetObject"],
                resources=[a.bucket.arn_for_objects(a.s3_object_key) for a in staged],
            ),
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn]),
            iam.PolicyStatement(
                actions=["s3:PutObject", "s3:DeleteObject"], resources=[self.objects_arn]
            ),
        ]
        if self.upload_log_group is not None:
            statements.append(
                iam.PolicyStatement(
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[self.upload_log_group.log_group_arn],
                )
            )
        if self.bucket.encryption_key is not None:
            statements.append(
                iam.PolicyStatement(
                    actions=["kms:Decrypt", "kms:GenerateDataKey"],
                    resources=[self.bucket.encryption_key.key_arn],
                )
            )
        policy = iam.ManagedPolicy(
            self,
            "UploadPolicy",
            description="Copies HyperPod lifecycle scripts into their bucket prefix",
            statements=statements,
            roles=[self.deployment.handler_role],
        )
        acknowledge(
            policy,
            "The upload writes and prunes every object under the lifecycle prefix, whose "
            "names come from the scripts folder; the grant stops at that prefix.",
            self.read_grant_finding,
        )
        return policy

    def _acknowledge_upload_handler(self) -> None:
        """Acknowledge what props cannot fix on BucketDeployment's stack-wide Lambda."""
        handler = _deployment_singleton(Stack.of(self))
        if handler is not None:
            # Its DependsOn on the role repeats the function's GetAtt on that role.
            drop_redundant_depends_on(cast(CfnResource, handler.node.default_child))
            acknowledge(
                handler,
                "aws-cdk-lib's BucketDeployment handler: a deploy-time custom resource invoked "
                "synchronously by CloudFormation (no DLQ target, no steady traffic to reserve "
                "concurrency for); it reaches only S3, outside any VPC; its runtime is pinned "
                "by aws-cdk-lib and moves with library upgrades.",
                "AwsSolutions-L1",
                "HIPAA.Security-LambdaConcurrency",
                "HIPAA.Security-LambdaDLQ",
                "HIPAA.Security-LambdaInsideVPC",
                "NIST.800.53.R5-LambdaConcurrency",
                "NIST.800.53.R5-LambdaDLQ",
                "NIST.800.53.R5-LambdaInsideVPC",
            )


def _deployment_singleton(stack: Stack) -> IConstruct | None:
    """The BucketDeployment Lambda these uploads use: one per stack and memory size, under a
    fixed id prefix with the size as suffix."""
    return next(
        (
            child
            for child in stack.node.children
            if child.node.id.startswith(_DEPLOYMENT_SINGLETON_ID)
            and child.node.id.endswith(f"{_UPLOAD_MEMORY_MIB}MiB")
        ),
        None,
    )

"""HyperPod lifecycle scripts: uploaded to S3 with the file that tells them the cluster's
Slurm mode (provisioning parameters or node setup) and, optionally, the shared users."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from aws_cdk import Annotations, ArnFormat, CfnElement, CfnResource, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct, IConstruct

from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.core.compliance import (
    acknowledge,
    acknowledge_wildcard_resource,
    nag_rendered,
    suppress_scanner_findings,
)
from fm_platform.core.dependencies import drop_redundant_depends_on
from fm_platform.core.encryption import allow_cloudwatch_logs, customer_managed_key
from fm_platform.core.function_roles import vpc_function_role
from fm_platform.core.options import Props, checked
from fm_platform.core.tokens import is_unresolved
from fm_platform.rules.lifecycle import (
    NODE_SETUP_FILE,
    ON_CREATE_SCRIPT,
    PARAMETERS_FILE,
    USERS_FILE,
    check_assets_path,
    check_node_setup,
    check_prefix,
    check_provisioning_parameters,
    check_shared_users,
)
from fm_platform.rules.problems import Problems

_DEPLOYMENT_SINGLETON_ID = "Custom::CDKBucketDeployment"
#: What a log group name cannot hold (CloudWatch Logs API Reference, CreateLogGroup:
#: ``[\.\-_/#A-Za-z0-9]+``).
_UPLOAD_MEMORY_MIB = 512
LIFECYCLE_BUCKET_PREFIX = "sagemaker-lc-"
_NO_RESERVED_CONCURRENCY = (
    "It runs once per deployment; reserving concurrency would take it from the account's "
    "unreserved pool, which Lambda keeps at a minimum (accounts with a low quota cannot "
    "reserve any, and the deployment would fail)."
)
_NO_DLQ = (
    "CloudFormation is its only caller and reports a failed run as a failed stack "
    "operation; a dead-letter queue would hold CloudFormation's request with nothing to "
    "replay it."
)
_OUTSIDE_VPC = "No VPC was given, so it reaches S3 from outside any VPC."
_RUNTIME_PINNED = "Its runtime is pinned by aws-cdk-lib and moves with library upgrades."


def lifecycle_bucket_name(scope: Construct) -> str:
    """``sagemaker-lc-<8 hex>-<GUID of the stack>``, at most 58 characters (S3 allows 63).

    HyperPod asks for lifecycle scripts in a bucket whose name starts with ``sagemaker-``
    (botocore, ``ClusterLifeCycleConfig.SourceS3Uri``), and the managed instance policy
    reads only such buckets. The stack ID's GUID is unique to each creation of a stack (in
    any account and Region), so a bucket retained by a deleted stack never blocks creating
    the stack again; the hex part, from ``scope``'s path, keeps two buckets of one stack
    apart.
    """
    stack_guid = Fn.select(2, Fn.split("/", Stack.of(scope).stack_id))
    return f"{LIFECYCLE_BUCKET_PREFIX}{scope.node.addr[2:10]}-{stack_guid}"


def default_assets_path() -> str:
    """The lifecycle_assets folder shipped in this package."""
    return str(Path(__file__).resolve().parent.parent.parent / "lifecycle_assets")


@dataclass(frozen=True, kw_only=True)
class SharedUser:
    """An account the lifecycle scripts create on every node (a line of
    ``shared_users.txt``): the same uid everywhere, a home on the shared file system and an
    SSH key pair kept there, so the user can ssh from node to node.

    name: a user name of lowercase letters, digits, ``_`` and ``-`` (at most 32).
    uid: the user's (and group's) id, 1000-60000 (the node checks its own login.defs range
        again).
    home: the home directory; by default ``<home root>/<name>``: the home file system's
        mount path in managed mode when there is one, else ``<FSx mount path>/home``.
    """

    name: str
    uid: int
    home: str | None = None

    @property
    def line(self) -> str:
        """This user's line of ``shared_users.txt`` (``name,uid`` or ``name,uid,home``)."""
        return ",".join([self.name, str(self.uid), *([self.home] if self.home else [])])


@dataclass(frozen=True, kw_only=True)
class LifecycleScriptsOptions:
    """Plain options of :class:`LifecycleScripts` (the configuration's ``training`` keys
    too).

    assets_path: folder uploaded as the scripts; by default the package's own
        ``lifecycle_assets`` (on_create.sh, provision.py and its node_*.py modules).
    prefix: S3 key prefix the files go under, without leading or trailing slash; by default
        ``lifecycle-scripts``.
    shared_users: accounts to create on every node (:class:`SharedUser`), written to
        ``shared_users.txt`` beside the scripts (the assets folder must then hold no such
        file). By default none (a ``shared_users.txt`` of your own assets folder is used as
        it is).
    """

    assets_path: str | None = None
    prefix: str = "lifecycle-scripts"
    shared_users: tuple[SharedUser, ...] | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_assets_path(
            problems,
            "assets_path",
            self.assets_path or default_assets_path(),
            shared_users=self.shared_users is not None,
        )
        check_prefix(problems, "prefix", self.prefix)
        if self.shared_users is not None:
            check_shared_users(
                problems,
                "shared_users",
                [
                    (u.name, u.uid, u.home) if u is not None else (None, None, None)
                    for u in self.shared_users
                ],
            )

    @property
    def shared_users_text(self) -> str | None:
        """The content of ``shared_users.txt``, None without ``shared_users``."""
        if self.shared_users is None:
            return None
        return "".join(f"{user.line}\n" for user in self.shared_users)


@dataclass(frozen=True, kw_only=True)
class LifecycleScriptsProps(LifecycleScriptsOptions, Props):
    """Options for :class:`LifecycleScripts`: the fields of :class:`LifecycleScriptsOptions`,
    and

    provisioning_parameters: lifecycle Slurm mode: the content of
        provisioning_parameters.json (``version``, ``workload_manager``,
        ``controller_group``, optional ``login_group``, ``worker_groups``,
        ``fsx_dns_name``, ``fsx_mountname``, ``fsx_mount_path``); values may be CDK tokens.
    node_setup: managed Slurm mode: the content of fmp_node_setup.json (``version`` 1,
        ``mode`` "managed", ``fsx_mount_path``, optional ``home_mount_path``, optional
        ``fsx_dns_name`` with ``fsx_mountname``; see
        :func:`~fm_platform.constructs.training.instance_groups.node_setup`). Give exactly
        one of the two: the scripts pick their mode by the file beside them.
    bucket: bucket receiving the files; by default a SecureBucket (KMS, TLS-only, versioned,
        access-logged, retained) named ``sagemaker-lc-<8 hex>-<stack GUID>`` is created.
    upload_log_group: where the upload function logs; by default a KMS-encrypted log group
        kept for a year (and retained) is created.
    vpc, subnet: run the upload function in this private subnet; it reaches S3 through the
        VPC's S3 gateway endpoint (or NAT). By default the function runs outside any VPC.
    security_group: the upload function's group when it runs in a VPC; by default one that
        allows only outbound HTTPS is created next to the function.

    Give every LifecycleScripts of a stack the same network: they share one upload
    function, whose role and log group the first one creates.
    """

    provisioning_parameters: Mapping[str, Any] | None = None
    node_setup: Mapping[str, Any] | None = None
    bucket: s3.IBucket | None = None
    upload_log_group: logs.ILogGroup | None = None
    vpc: ec2.IVpc | None = None
    subnet: ec2.ISubnet | None = None
    security_group: ec2.ISecurityGroup | None = None

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        if (props.vpc is None) != (props.subnet is None):
            problems.add(
                "vpc/subnet",
                "only " + ("vpc" if props.subnet is None else "subnet"),
                "give both to run the upload function in the VPC, or neither",
            )
        if props.security_group is not None and props.vpc is None:
            problems.add("security_group", "given", "applies only with vpc and subnet")
        parameters, setup = props.provisioning_parameters, props.node_setup
        if (parameters is None) == (setup is None):
            problems.add(
                "provisioning_parameters/node_setup",
                "both" if parameters is not None else "neither",
                "give exactly one: provisioning_parameters in lifecycle Slurm mode, node_setup "
                "in managed Slurm mode (the scripts refuse both and neither)",
            )
        if isinstance(parameters, Mapping):
            workers = parameters.get("worker_groups")
            check_provisioning_parameters(
                problems,
                "provisioning_parameters",
                {**parameters, "worker_groups": None} if is_unresolved(workers) else parameters,
            )
        if isinstance(setup, Mapping):
            check_node_setup(
                problems,
                "node_setup",
                {key: None if is_unresolved(value) else value for key, value in setup.items()},
            )


class LifecycleScripts(Construct):
    """The lifecycle scripts HyperPod runs on each node, uploaded as plain files under
    ``<prefix>/`` together with ``provisioning_parameters.json`` (lifecycle Slurm mode) or
    ``fmp_node_setup.json`` (managed Slurm mode), rendered at deploy time, and
    ``shared_users.txt`` when ``shared_users`` is given. A deployment that changes the mode
    removes the other file (the upload prunes the prefix).

    Attributes: ``bucket``, ``prefix``, ``s3_uri`` (``s3://<bucket>/<prefix>/``, read from
    the upload, so whatever uses it is created after the files exist), ``on_create_script``,
    ``deployment`` (the BucketDeployment, to depend on explicitly), ``objects_arn``,
    ``read_grant_finding`` (the cdk-nag finding :meth:`grant_read` raises on a grantee's
    policy in this stack, to acknowledge there; for a grantee in another stack use
    :func:`~fm_platform.core.compliance.acknowledge_wildcard_resource` with ``objects_arn``),
    ``files`` (the staged scripts folder), ``upload_policy`` and ``upload_log_group`` (None
    when an earlier LifecycleScripts in the stack made the shared upload Lambda). Construct
    IDs ``Bucket``, ``Upload`` and ``UploadLogs`` are stable.
    """

    on_create_script = ON_CREATE_SCRIPT

    def __init__(self, scope: Construct, construct_id: str, props: LifecycleScriptsProps) -> None:
        """Upload the scripts under ``scope``; ``props`` is validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.prefix = props.prefix
        self.bucket: s3.IBucket = props.bucket or lifecycle_bucket(self)
        name = self.bucket.bucket_name
        if not is_unresolved(name) and not name.startswith("sagemaker-"):
            Annotations.of(self).add_warning_v2(
                "fm_platform:lifecycle-bucket-name",
                f"Lifecycle bucket {name!r} does not start with 'sagemaker-': HyperPod asks "
                "for lifecycle scripts in such a bucket (ClusterLifeCycleConfig.SourceS3Uri).",
            )
        self.objects_arn = self.bucket.arn_for_objects(f"{self.prefix}/*")
        # The finding grant_read and the upload policy raise: acknowledge it next to a grantee.
        self.read_grant_finding = (
            f"AwsSolutions-IAM5[Resource::{nag_rendered(self, self.objects_arn)}]"
        )
        # The upload Lambda is shared per stack: only the first LifecycleScripts creates its
        # role and log group; later ones attach their own policy to that role.
        shared = _deployment_singleton(Stack.of(self)) is not None
        self.upload_log_group: logs.ILogGroup | None = None
        if not shared:
            self.upload_log_group = props.upload_log_group or upload_log_group(self)
        upload_role = None if shared else self._upload_role(in_vpc=props.vpc is not None)
        security_groups = None
        if props.vpc is not None:
            security_groups = [props.security_group or upload_security_group(self, props.vpc)]
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
            sources=_sources(self.files, props),
            extract=True,
            prune=True,
            retain_on_delete=True,
            memory_limit=_UPLOAD_MEMORY_MIB,
            log_group=self.upload_log_group,
            role=upload_role,
            vpc=props.vpc,
            vpc_subnets=ec2.SubnetSelection(subnets=[props.subnet]) if props.subnet else None,
            security_groups=security_groups,
        )
        # Through deployed_bucket, whatever uses the URI waits for the upload to finish.
        self.s3_uri = f"s3://{self.deployment.deployed_bucket.bucket_name}/{self.prefix}/"
        self.upload_policy = self._upload_policy()
        self.deployment.node.add_dependency(self.upload_policy)
        self._acknowledge_upload_handler(in_vpc=props.vpc is not None)

    def read_statements(self) -> list[iam.PolicyStatement]:
        """What a reader needs: get the lifecycle objects, list the bucket, decrypt them."""
        statements = [
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[self.objects_arn]),
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn]),
        ]
        if self.bucket.encryption_key is not None:
            statements.append(
                iam.PolicyStatement(
                    actions=["kms:Decrypt"], resources=[self.bucket.encryption_key.key_arn]
                )
            )
        return statements

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read the scripts (:meth:`read_statements`: get the objects, list
        the bucket, decrypt); returns the grant."""
        grants = [
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=list(statement.actions),
                resource_arns=list(statement.resources),
            )
            for statement in self.read_statements()
        ]
        grant = grants[0]
        for other in grants[1:]:
            grant = grant.combine(other)
        return grant

    def _upload_role(self, *, in_vpc: bool) -> iam.IRole:
        """The upload Lambda's role; immutable, as its grants are written exactly, once, in
        the managed policy (BucketDeployment's own grants use wildcards). In a VPC it has
        the AWS managed policy Lambda documents for VPC access from its creation on, as
        Lambda checks the network-interface permissions when it creates the function."""
        description = "Copies HyperPod lifecycle scripts into their bucket prefix"
        role = (
            vpc_function_role(self, "UploadRole", description)
            if in_vpc
            else iam.Role(
                self,
                "UploadRole",
                assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                description=description,
            )
        )
        return role.without_policy_updates()

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
        acknowledge_wildcard_resource(
            policy,
            "The upload writes and prunes every object under the lifecycle prefix, whose "
            "names come from the scripts folder; the grant stops at that prefix.",
            self.objects_arn,
            after_references=True,
        )
        return policy

    def _acknowledge_upload_handler(self, *, in_vpc: bool) -> None:
        """Acknowledge what props cannot fix on BucketDeployment's stack-wide Lambda, for
        cdk-nag and in the template for checkov and cfn_nag."""
        handler = _deployment_singleton(Stack.of(self))
        if handler is None:
            return
        function = cast(CfnResource, handler.node.default_child)
        # Its DependsOn on the role repeats the function's GetAtt on that role.
        drop_redundant_depends_on(function)
        rules = [
            "AwsSolutions-L1",
            "HIPAA.Security-LambdaConcurrency",
            "HIPAA.Security-LambdaDLQ",
            "NIST.800.53.R5-LambdaConcurrency",
            "NIST.800.53.R5-LambdaDLQ",
        ]
        checkov = {
            "CKV_AWS_115": _NO_RESERVED_CONCURRENCY,
            "CKV_AWS_116": _NO_DLQ,
            "CKV_AWS_173": "Its one environment variable is the path of the CA bundle file "
            "(AWS_CA_BUNDLE), set by aws-cdk-lib; nothing secret to encrypt.",
        }
        cfn_nag = {
            "W92": _NO_RESERVED_CONCURRENCY,
            "W58": "The role writes logs through its customer-managed policy, a separate "
            "resource (logs:CreateLogStream and logs:PutLogEvents on its own log group).",
        }
        reason = f"aws-cdk-lib's BucketDeployment handler. {_NO_RESERVED_CONCURRENCY} {_NO_DLQ}"
        if not in_vpc:
            rules += ["HIPAA.Security-LambdaInsideVPC", "NIST.800.53.R5-LambdaInsideVPC"]
            checkov["CKV_AWS_117"] = _OUTSIDE_VPC
            cfn_nag["W89"] = _OUTSIDE_VPC
            reason += f" {_OUTSIDE_VPC}"
        acknowledge(handler, f"{reason} {_RUNTIME_PINNED}", *rules)
        suppress_scanner_findings(function, checkov=checkov, cfn_nag=cfn_nag)


def _sources(files: s3_assets.Asset, props: LifecycleScriptsProps) -> list[s3deploy.ISource]:
    """The staged scripts folder, the file naming the Slurm mode and the shared users."""
    sources: list[s3deploy.ISource] = [s3deploy.Source.bucket(files.bucket, files.s3_object_key)]
    if props.provisioning_parameters is not None:
        sources.append(
            s3deploy.Source.json_data(PARAMETERS_FILE, dict(props.provisioning_parameters))
        )
    if props.node_setup is not None:
        sources.append(s3deploy.Source.json_data(NODE_SETUP_FILE, dict(props.node_setup)))
    users = props.shared_users_text
    if users is not None:
        sources.append(s3deploy.Source.data(USERS_FILE, users))
    return sources


def lifecycle_bucket(scope: Construct) -> s3.IBucket:
    """A SecureBucket ``Bucket`` in ``scope`` for lifecycle scripts, named by
    :func:`lifecycle_bucket_name`."""
    props = SecureBucketProps(
        purpose="HyperPod lifecycle scripts",
        bucket_name=lifecycle_bucket_name(scope),
        # Each deploy uploads the scripts over the last ones and prunes what is gone.
        replaced_in_place=True,
    )
    return SecureBucket(scope, "Bucket", props).bucket


def upload_log_group(scope: Construct) -> logs.LogGroup:
    """A KMS-encrypted log group ``UploadLogs`` (key ``UploadLogsKey``) in ``scope`` for the
    upload function, kept for a year and retained with its key.

    The key lets CloudWatch Logs use it for this log group only: the group's name is
    generated (a retained group of a destroyed stack never blocks a new one), and
    CloudFormation generates it as ``<stack name>-<logical ID>-<suffix>``, which the key's
    condition names up to the suffix."""
    stack = Stack.of(scope)
    key = customer_managed_key(scope, "UploadLogsKey", purpose="lifecycle upload logs")
    group = logs.LogGroup(
        scope,
        "UploadLogs",
        encryption_key=key,
        retention=logs.RetentionDays.ONE_YEAR,
        removal_policy=RemovalPolicy.RETAIN,
    )
    logical_id = stack.get_logical_id(cast(CfnElement, group.node.default_child))
    generated = stack.format_arn(
        service="logs",
        resource="log-group",
        resource_name=f"{stack.stack_name}-{logical_id}-*",
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )
    allow_cloudwatch_logs(key, stack.region, [generated])
    return group


def upload_security_group(scope: Construct, vpc: ec2.IVpc) -> ec2.SecurityGroup:
    """The upload function's security group ``UploadSecurityGroup``: no inbound rule,
    outbound HTTPS only (S3, and CloudFormation's response URL, which is in S3 too)."""
    group = ec2.SecurityGroup(
        scope,
        "UploadSecurityGroup",
        vpc=vpc,
        description="Lifecycle script upload function: outbound HTTPS only",
        allow_all_outbound=False,
    )
    group.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to Amazon S3")
    return group


class LifecycleStorage(Construct):
    """What the lifecycle scripts keep between deployments, for a stack of its own: the
    bucket (as :func:`lifecycle_bucket`), the upload function's log group (as
    :func:`upload_log_group`) and, given a VPC, the function's security group (as
    :func:`upload_security_group`). Pass them to :class:`LifecycleScriptsProps`.

    Attributes: ``bucket``, ``upload_log_group``, ``upload_log_key`` (its key),
    ``upload_security_group`` (None without a VPC). Construct IDs are those
    :class:`LifecycleScripts` uses for the same resources, so logical IDs match when this
    construct has the ID LifecycleScripts used.
    """

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc | None = None):
        """Create the bucket, the upload log group and security group under ``scope``."""
        super().__init__(scope, construct_id)
        self.bucket = lifecycle_bucket(self)
        self.upload_log_group = upload_log_group(self)
        #: The log group's key; CloudWatch Logs may use it (for the cluster's logs too).
        self.upload_log_key = cast(kms.IKey, self.node.find_child("UploadLogsKey"))
        self.upload_security_group = upload_security_group(self, vpc) if vpc else None


def _deployment_singleton(stack: Stack) -> IConstruct | None:
    """The BucketDeployment Lambda these uploads use: one per stack, memory size and
    network, under a fixed id prefix with the size (and network) as suffix."""
    return next(
        (
            child
            for child in stack.node.children
            if child.node.id.startswith(_DEPLOYMENT_SINGLETON_ID)
            and f"{_UPLOAD_MEMORY_MIB}MiB" in child.node.id
        ),
        None,
    )

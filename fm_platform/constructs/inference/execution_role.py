"""The SageMaker hosting execution role: a least-privilege :class:`HostingRole` and the
grants each model adds to it (image pull, artifact read, VPC access).

A role's grants and acknowledgements are collected per role: a grant that continues a
statement, and an acknowledgement, costs no call into the CDK runtime when it is made; what
a role collected is added in one call per statement and one for its acknowledgements, by
an aspect of the role that runs before aws-cdk-lib's own (among them the role's splitting
of an oversized policy into managed policies).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import jsii
from aws_cdk import Annotations, Aspects, CfnResource, IAspect
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct, IConstruct

from fm_platform.constructs.inference.container_image import ContainerImage
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.core.compliance import Acknowledgements, nag_rendered
from fm_platform.core.scopes import arn_in, inherit_stack, partition_of, stack_of
from fm_platform.core.tokens import is_unresolved

# s3://<bucket>/<key>; the bucket may be a token (e.g. a bucket created in the same stack).
_S3_URL = re.compile(r"^s3://(?P<bucket>[^/]+)/(?P<key>.*)$")
_PULL_ACTIONS = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetDownloadUrlForLayer",
)


SAGEMAKER_LOG_GROUP_KINDS = ("Endpoints", "InferenceComponents")


@dataclass(frozen=True, kw_only=True)
class HostingRoleProps:
    """Options for :class:`HostingRole`.

    images: container images (URIs or :class:`ContainerImage`) the role may pull; by
        default none (add with :meth:`HostingRole.grant_image_pull`).
    model_data_urls: S3 artifacts (object URI or prefix ending in ``/``) the role may read;
        by default none (add with :meth:`HostingRole.grant_model_artifacts`).
    artifact_key: the KMS key encrypting the artifacts; by default no KMS grant.
    in_vpc: True when the endpoint runs in a VPC: grants the ENI actions SageMaker needs;
        by default False.
    """

    images: Sequence[str | ContainerImage] = ()
    model_data_urls: Sequence[str] = ()
    artifact_key: kms.IKey | None = None
    in_vpc: bool = False


class HostingRole(Construct):
    """A SageMaker hosting execution role with only what hosting needs.

    Always granted: ``ecr:GetAuthorizationToken``, writing logs under
    ``/aws/sagemaker/Endpoints/`` and ``/aws/sagemaker/InferenceComponents/``,
    ``cloudwatch:PutMetricData`` into ``/aws/sagemaker/*``
    namespaces. Each model adds its image and artifacts with the ``grant_*`` methods; what
    continues a statement of the role, and the role's cdk-nag acknowledgements, reach it when
    the app is synthesized (see the module docstring). Attribute: ``role`` (construct ID
    ``Role``).
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: HostingRoleProps | None = None
    ) -> None:
        """Create the role under ``scope`` with ``props`` (by default no image, artifact or VPC
        grants)."""
        super().__init__(scope, construct_id)
        inherit_stack(self, scope)
        props = props or HostingRoleProps()
        stack = stack_of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="SageMaker hosting execution role (fm_platform)",
        )
        inherit_stack(self.role, self)
        grants = _grants_of(self.role)
        grants.acknowledgements.acknowledge(
            "Each model placed on the endpoint adds its own image and artifact grants to this "
            "role's policy; the policy belongs to this role alone, CDK merges its statements "
            "and moves any overflow into managed policies.",
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
        )
        self.role.add_to_policy(
            iam.PolicyStatement(actions=["ecr:GetAuthorizationToken"], resources=["*"])
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],
                conditions={"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}},
            )
        )
        # Containers log to /aws/sagemaker/Endpoints/<endpoint>, and containers of inference
        # components to /aws/sagemaker/InferenceComponents/<component>.
        log_groups = [
            arn_in(stack, "logs", "log-group", f"/aws/sagemaker/{kind}/*", separator=":")
            for kind in SAGEMAKER_LOG_GROUP_KINDS
        ]
        log_resources = [arn for group in log_groups for arn in (group, f"{group}:log-stream:*")]
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:DescribeLogStreams",
                ],
                resources=log_resources,
            )
        )
        grants.acknowledgements.acknowledge_wildcard_resource(
            "ecr:GetAuthorizationToken and cloudwatch:PutMetricData support no resource-level "
            "permissions (PutMetricData is limited to /aws/sagemaker/* namespaces by a "
            "condition); SageMaker names the log groups after endpoints and components whose "
            "names are chosen at deploy time, so they are matched by their fixed "
            "/aws/sagemaker/Endpoints/ and /aws/sagemaker/InferenceComponents/ prefixes.",
            "*",
            *log_resources,
        )
        self._vpc_granted = False
        for image in props.images:
            self.grant_image_pull(image)
        for url in props.model_data_urls:
            self.grant_model_artifacts(url, props.artifact_key)
        if props.in_vpc:
            self.grant_vpc_access()

    def grant_image_pull(self, image: str | ContainerImage) -> None:
        """Let the role pull ``image``: layer download on its ECR repository; when the
        account or repository is only known at deploy time, every repository of this
        account and region."""
        ContainerImage.of(image).bind(self, self.role)

    def grant_model_artifacts(self, model_data_url: str, key: kms.IKey | None = None) -> None:
        """Let the role read ``model_data_url`` (an object, or every object under a prefix
        ending in ``/``; its bucket may be a token) and decrypt with ``key`` when given."""
        grant_model_artifacts(self.role, model_data_url, key)

    def grant_vpc_access(self) -> None:
        """Let SageMaker attach the endpoint's network interfaces in a VPC (idempotent)."""
        if self._vpc_granted:
            return
        self._vpc_granted = True
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=[
                    "ec2:CreateNetworkInterface",
                    "ec2:CreateNetworkInterfacePermission",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DeleteNetworkInterfacePermission",
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeVpcs",
                    "ec2:DescribeDhcpOptions",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeSecurityGroups",
                ],
                resources=["*"],
            )
        )
        _grants_of(self.role).acknowledgements.acknowledge_rendered(
            "SageMaker creates the endpoint's network interfaces in subnets and security "
            "groups chosen per endpoint; the EC2 Describe* actions support no resource-level "
            "permissions.",
            "*",
        )


def grant_image_pull(role: iam.IRole, uri: str, image: ContainerImage | None = None) -> None:
    """Add ECR layer download for the image at ``uri`` (described by ``image``, by default
    read from the URI) to ``role`` (any role, imported ones too); a repository already
    granted to ``role`` is not granted again.

    Scoped to the image's repository when it is known (an ECR URI naming its account and
    repository literally, whose region may be a token; an ECR repository; a Deep Learning
    Container); otherwise to every repository of this account and region, with the
    wildcard acknowledged. A repository that continues the role's pull statement, and the
    acknowledgement, reach the role when the app is synthesized.
    """
    _grants_of(role).pull(uri, image or ContainerImage.from_uri(uri))


def grant_model_artifacts(role: iam.IRole, model_data_url: str, key: kms.IKey | None) -> None:
    """Add read of ``model_data_url`` (object, or prefix ending in ``/`` with listing of
    that prefix) to ``role``, and decrypt with ``key`` when given.

    The bucket may be a token (e.g. a bucket created in the same stack); when the URL is not
    an ``s3://`` URI with a literal key, no read is granted and a warning asks for an
    explicit grant (e.g. ``bucket.grant_read(role)``) instead. Every object and prefix a
    role reads sits in one ``s3:GetObject`` statement, and every prefix of a bucket in one
    ``s3:ListBucket`` statement (a new one once a statement holds
    :data:`STATEMENT_BUDGET` characters of ARNs or prefixes). An object or prefix that
    continues a statement, and the acknowledgement of a prefix's wildcard, reach the role
    when the app is synthesized, before aws-cdk-lib splits an oversized policy.
    """
    grants = _grants_of(role)
    if key is not None:
        grants.decrypt(key)
    match = _S3_URL.match(model_data_url)
    if match is None or is_unresolved(match["key"]):
        Annotations.of(role).add_warning_v2(
            "fm_platform:artifactGrantSkipped",
            f"model artifacts {model_data_url!r} are not an s3:// URI with a literal key, so "
            "no read grant was added; grant read on them to the execution role yourself.",
        )
        return
    bucket, key_path = match["bucket"], match["key"]
    if not key_path.endswith("/"):
        grants.read(bucket, key_path)
        return
    grants.read(bucket, f"{key_path}*")
    if grants.list_prefix(bucket, f"{key_path}*"):
        grants.acknowledge_wildcard(
            f"uncompressed model artifacts are every object under the prefix "
            f"{model_data_url}; read is limited to that prefix.",
            bucket,
            f"{key_path}*",
        )


#: Characters of resource ARNs (or ``s3:prefix`` values) after which a grant starts a new
#: statement: CDK's policy minimisation merges statements only up to about 2000 characters,
#: so that an oversized policy can still be split into managed policies.
STATEMENT_BUDGET = 1500

#: Priority of the aspect that adds what a role collected: before every aspect aws-cdk-lib
#: adds to a role, whatever the app's flags. aws-cdk-lib's ``AspectPriority`` is MUTATING
#: 200, DEFAULT 500, READONLY 1000; a role splits an oversized policy into managed policies
#: in an aspect of priority MUTATING (flag ``@aws-cdk/core:aspectPrioritiesMutating``) or
#: DEFAULT (without it). With or without ``@aws-cdk/core:aspectStabilization`` aspects run
#: in order of priority on each construct.
COLLECTED_GRANTS_PRIORITY = 100


class _Statement:
    """A policy statement of a role that later grants extend instead of adding their own:
    ``values`` are its resources (``condition`` None) or the values of its ``condition``
    (operator, key), ``size`` their characters; the statement holds the first ``added``
    of them, the others wait for :meth:`add_collected`."""

    def __init__(
        self, statement: iam.PolicyStatement, value: str, condition: tuple[str, str] | None
    ) -> None:
        self.statement = statement
        self.values = [value]
        self.size = len(value)
        self.condition = condition
        self.added = 1

    def has_room_for(self, value: str) -> bool:
        return self.size + len(value) <= STATEMENT_BUDGET

    def add(self, value: str) -> None:
        self.values.append(value)
        self.size += len(value)

    def add_collected(self) -> None:
        """Add the values collected since the last call to the statement, in one call."""
        if self.added == len(self.values):
            return
        if self.condition is None:
            self.statement.add_resources(*self.values[self.added :])
        else:
            operator, key = self.condition
            self.statement.add_condition(operator, {key: list(self.values)})
        self.added = len(self.values)


class _RoleGrants:
    """What this module has granted one role: each image, key, object and prefix once,
    objects and prefixes collected in shared statements, and the acknowledgements of the
    wildcards granted. A statement is added to the role when it is started, so that the
    policy keeps its order; what continues it, and every acknowledgement, waits for
    :meth:`add_collected`, which an aspect of the role calls (see
    :data:`COLLECTED_GRANTS_PRIORITY`)."""

    def __init__(self, role: iam.IRole) -> None:
        self.role = role
        self.stack = stack_of(role)
        self.partition = partition_of(self.stack)
        self.granted: set[tuple[str, str]] = set()
        self.keys: list[kms.IKey] = []
        self.bucket_arns: dict[str, str] = {}
        self.rendered_bucket_arns: dict[str, str] = {}
        self.statements: dict[tuple[str, str], _Statement] = {}
        self.continued: list[_Statement] = []
        self.acknowledgements = Acknowledgements(role)
        Aspects.of(role).add(_AddCollectedGrants(self), priority=COLLECTED_GRANTS_PRIORITY)

    def _first_time(self, kind: str, value: str) -> bool:
        if (kind, value) in self.granted:
            return False
        self.granted.add((kind, value))
        return True

    def pull(self, image: str, container_image: ContainerImage) -> None:
        if not self._first_time("image", image):
            return
        repository = container_image.repository_arn(self.role, self.partition)
        if repository is None:
            repository = self.stack.format_arn(
                service="ecr", resource="repository", resource_name="*"
            )
            self.acknowledgements.acknowledge_wildcard_resource(
                f"the image URI {image!r} names its account or repository only at deploy "
                "time (e.g. a CDK image asset), so its repository cannot be named: pulls are "
                "limited to this account's and region's repositories.",
                repository,
            )
        if self._first_time("repository", repository):
            self._add_resource("pull", _PULL_ACTIONS, repository)

    def decrypt(self, key: kms.IKey) -> None:
        if any(known is key for known in self.keys):
            return
        self.keys.append(key)
        key.grant_decrypt(self.role)

    def bucket_arn(self, bucket: str) -> str:
        arn = self.bucket_arns.get(bucket)
        if arn is None:
            arn = self.bucket_arns[bucket] = f"arn:{self.partition}:s3:::{bucket}"
        return arn

    def read(self, bucket: str, key_pattern: str) -> None:
        arn = f"{self.bucket_arn(bucket)}/{key_pattern}"
        if self._first_time("object", arn):
            self._add_resource("read", ("s3:GetObject",), arn)

    def list_prefix(self, bucket: str, prefix: str) -> bool:
        """Let the role list ``prefix`` in ``bucket``; False when it already could."""
        if not self._first_time(f"prefix of {bucket}", prefix):
            return False
        current = self.statements.get(("list", bucket))
        if current is not None and current.has_room_for(prefix):
            self._continue(current, prefix)
            return True
        statement = iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[self.bucket_arn(bucket)],
            conditions={"StringLike": {"s3:prefix": prefix}},
        )
        self._add_statement(statement)
        self.statements["list", bucket] = _Statement(statement, prefix, ("StringLike", "s3:prefix"))
        return True

    def acknowledge_wildcard(self, reason: str, bucket: str, key_pattern: str) -> None:
        """Collect the acknowledgement of the ``AwsSolutions-IAM5`` finding of the objects
        ``key_pattern`` in ``bucket`` (the bucket ARN is rendered once per bucket)."""
        rendered = self.rendered_bucket_arns.get(bucket)
        if rendered is None:
            rendered = nag_rendered(self.role, self.bucket_arn(bucket))
            self.rendered_bucket_arns[bucket] = rendered
        finding = rendered + nag_rendered(self.role, f"/{key_pattern}")
        self.acknowledgements.acknowledge_rendered(reason, finding)

    def add_collected(self) -> None:
        """Add what was collected since the last call: one call per continued statement,
        one for the acknowledgements."""
        for statement in self.continued:
            statement.add_collected()
        self.continued = []
        self.acknowledgements.add_collected()

    def _add_resource(self, kind: str, actions: Sequence[str], arn: str) -> None:
        current = self.statements.get((kind, ""))
        if current is not None and current.has_room_for(arn):
            self._continue(current, arn)
            return
        statement = iam.PolicyStatement(actions=list(actions), resources=[arn])
        self._add_statement(statement)
        self.statements[kind, ""] = _Statement(statement, arn, None)

    def _continue(self, statement: _Statement, value: str) -> None:
        if statement.added == len(statement.values):
            self.continued.append(statement)
        statement.add(value)

    def _add_statement(self, statement: iam.PolicyStatement) -> None:
        # Role.add_to_policy returns a boolean; add_to_principal_policy (all an imported
        # role has) a struct that costs two more calls.
        if isinstance(self.role, iam.Role):
            self.role.add_to_policy(statement)
        else:
            self.role.add_to_principal_policy(statement)


@jsii.implements(IAspect)
class _AddCollectedGrants:
    """The aspect of a role that adds what its :class:`_RoleGrants` collected (when it
    visits the role, before the role's own aspects; a no-op on the role's children)."""

    def __init__(self, grants: _RoleGrants) -> None:
        self._grants = grants

    def visit(self, node: IConstruct) -> None:
        self._grants.add_collected()


_GRANTS: weakref.WeakKeyDictionary[iam.IRole, _RoleGrants] = weakref.WeakKeyDictionary()


def _grants_of(role: iam.IRole) -> _RoleGrants:
    grants = _GRANTS.get(role)
    if grants is None:
        grants = _GRANTS[role] = _RoleGrants(role)
    return grants


def role_policies(role: iam.IRole) -> list[IConstruct]:
    """The policies CDK attached to ``role`` for its grants (its default policy), for
    resources that must wait for them: depending on these instead of the role itself
    avoids a dependency the role ARN reference already implies. Once found they are
    remembered (a role's default policy, once created, stays)."""
    known = _POLICIES.get(role)
    if known:
        return known
    node = role.node
    found: list[IConstruct] = [
        child
        for name in ("DefaultPolicy", "Policy")
        if (child := node.try_find_child(name)) is not None
    ]
    if found:
        _POLICIES[role] = found
    return found


def depend_on_role_policies(resource: CfnResource, role: iam.IRole) -> None:
    """Make ``resource`` wait for :func:`role_policies` of ``role`` (a ``DependsOn`` on
    each policy's resource), so that SageMaker can use the grants at once."""
    for policy in role_policies(role):
        if policy not in _POLICY_RESOURCES:
            _POLICY_RESOURCES[policy] = policy.node.default_child
        policy_resource = _POLICY_RESOURCES[policy]
        if isinstance(policy_resource, CfnResource):
            resource.add_resource_dependency(policy_resource)
        else:
            resource.node.add_dependency(policy)


def role_arn(role: iam.IRole) -> str:
    """``role.role_arn``, read once per role."""
    arn = _ROLE_ARNS.get(role)
    if arn is None:
        arn = _ROLE_ARNS[role] = role.role_arn
    return arn


_POLICIES: weakref.WeakKeyDictionary[iam.IRole, list[IConstruct]] = weakref.WeakKeyDictionary()
_POLICY_RESOURCES: weakref.WeakKeyDictionary[IConstruct, IConstruct | None] = (
    weakref.WeakKeyDictionary()
)
_ROLE_ARNS: weakref.WeakKeyDictionary[iam.IRole, str] = weakref.WeakKeyDictionary()


def hosting_execution_role(
    scope: Construct,
    construct_id: str,
    *,
    images: Sequence[str | ContainerImage] = (),
    model_data_urls: Sequence[str] = (),
    artifact_key: kms.IKey | None = None,
    in_vpc: bool = False,
) -> iam.Role:
    """A :class:`HostingRole` under ``scope`` with the given grants; returns its role."""
    hosting = HostingRole(
        scope,
        construct_id,
        HostingRoleProps(
            images=images,
            model_data_urls=model_data_urls,
            artifact_key=artifact_key,
            in_vpc=in_vpc,
        ),
    )
    return hosting.role


def execution_role_for(
    scope: Construct,
    *,
    role: iam.IRole | None,
    containers: Sequence[ModelContainer],
    artifact_key: kms.IKey | None,
    in_vpc: bool,
) -> iam.IRole:
    """``role`` extended with image pull and artifact read for ``containers``, or a new
    least-privilege :class:`HostingRole` (construct ID ``ExecutionRole``) with them."""
    if role is None:
        return hosting_execution_role(
            scope,
            "ExecutionRole",
            images=_images(containers),
            model_data_urls=_model_data_urls(containers),
            artifact_key=artifact_key,
            in_vpc=in_vpc,
        )
    grant_containers(scope, role, containers, artifact_key)
    return role


def grant_containers(
    scope: Construct,
    role: iam.IRole,
    containers: Sequence[ModelContainer],
    artifact_key: kms.IKey | None,
) -> None:
    """Let ``role`` pull each container's image (as named in ``scope``'s stack) and read
    its artifacts (decrypting with ``artifact_key`` when given); each image and location is
    granted once."""
    for image in _images(containers):
        image.bind(scope, role)
    for url in _model_data_urls(containers):
        grant_model_artifacts(role, url, artifact_key)


def _images(containers: Sequence[ModelContainer]) -> list[ContainerImage]:
    return list(dict.fromkeys(c.container_image() for c in containers))


def _model_data_urls(containers: Sequence[ModelContainer]) -> list[str]:
    return list(dict.fromkeys(c.model_data_url for c in containers if c.model_data_url))

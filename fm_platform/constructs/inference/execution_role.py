"""The SageMaker hosting execution role: a least-privilege :class:`HostingRole` and the
grants each model adds to it (image pull, artifact read, VPC access)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Annotations, ArnFormat, Stack, Token
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct, IConstruct

from fm_platform.compliance import acknowledge, acknowledge_wildcard_resource
from fm_platform.constructs.inference.model_container import ModelContainer

# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]; the region may
# be a token (e.g. Stack.region), whose text holds dots.
_ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr(?:-fips)?\.(?P<region>.+?)\.amazonaws\.com"
    r"(?P<cn>\.cn)?/(?P<repository>[^:@]+)(?:[:@].*)?$"
)
_REGION = re.compile(r"^[a-z0-9-]+$")
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

    images: container images the role may pull; by default none (add with
        :meth:`HostingRole.grant_image_pull`).
    model_data_urls: S3 artifacts (object URI or prefix ending in ``/``) the role may read;
        by default none (add with :meth:`HostingRole.grant_model_artifacts`).
    artifact_key: the KMS key encrypting the artifacts; by default no KMS grant.
    in_vpc: True when the endpoint runs in a VPC: grants the ENI actions SageMaker needs;
        by default False.
    """

    images: Sequence[str] = ()
    model_data_urls: Sequence[str] = ()
    artifact_key: kms.IKey | None = None
    in_vpc: bool = False


class HostingRole(Construct):
    """A SageMaker hosting execution role with only what hosting needs.

    Always granted: ``ecr:GetAuthorizationToken``, writing logs under
    ``/aws/sagemaker/Endpoints/`` and ``/aws/sagemaker/InferenceComponents/``,
    ``cloudwatch:PutMetricData`` into ``/aws/sagemaker/*``
    namespaces. Each model adds its image and artifacts with the ``grant_*`` methods.
    Attribute: ``role`` (construct ID ``Role``).
    """

    def __init__(
        self, scope: Construct, construct_id: str, props: HostingRoleProps | None = None
    ) -> None:
        super().__init__(scope, construct_id)
        props = props or HostingRoleProps()
        stack = Stack.of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="SageMaker hosting execution role (fm_platform)",
        )
        acknowledge(
            self.role,
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
            stack.format_arn(
                service="logs",
                resource="log-group",
                resource_name=f"/aws/sagemaker/{kind}/*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
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
        acknowledge_wildcard_resource(
            self.role,
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

    def grant_image_pull(self, image: str) -> None:
        """Let the role pull ``image``: layer download on its ECR repository, parsed from
        the URI (whose region may be a token); when the account or repository is only
        known at deploy time, every repository of this account and region."""
        grant_image_pull(self.role, image)

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
        acknowledge_wildcard_resource(
            self.role,
            "SageMaker creates the endpoint's network interfaces in subnets and security "
            "groups chosen per endpoint; the EC2 Describe* actions support no resource-level "
            "permissions.",
            "*",
        )


def grant_image_pull(role: iam.IRole, image: str) -> None:
    """Add ECR layer download for ``image`` to ``role`` (any role, imported ones too).

    Scoped to the image's repository when the URI names its account and repository
    literally (the region may be a token); otherwise to every repository of this account
    and region, with the wildcard acknowledged.
    """
    stack = Stack.of(role)
    repository = _image_repository_arn(stack, image)
    if repository is None:
        repository = stack.format_arn(service="ecr", resource="repository", resource_name="*")
        acknowledge_wildcard_resource(
            role,
            f"the image URI {image!r} names its account or repository only at deploy time "
            "(e.g. a CDK image asset), so its repository cannot be named: pulls are limited "
            "to this account's and region's repositories.",
            repository,
        )
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=list(_PULL_ACTIONS), resources=[repository])
    )


def _image_repository_arn(stack: Stack, image: str) -> str | None:
    """The ARN of the ECR repository of ``image``, or None when the URI is not an ECR image
    URI with a literal account and repository (a token region stays a token in the ARN)."""
    match = _ECR_IMAGE.match(image)
    if match is None or Token.is_unresolved(match["repository"]):
        return None
    region = match["region"]
    if not (Token.is_unresolved(region) or _REGION.match(region)):
        return None
    partition = "aws-cn" if match["cn"] else stack.partition
    return f"arn:{partition}:ecr:{region}:{match['account']}:repository/{match['repository']}"


def grant_model_artifacts(role: iam.IRole, model_data_url: str, key: kms.IKey | None) -> None:
    """Add read of ``model_data_url`` (object, or prefix ending in ``/`` with listing of
    that prefix) to ``role``, and decrypt with ``key`` when given.

    The bucket may be a token (e.g. a bucket created in the same stack); when the URL is not
    an ``s3://`` URI with a literal key, no read is granted and a warning asks for an
    explicit grant (e.g. ``bucket.grant_read(role)``) instead.
    """
    if key is not None:
        key.grant_decrypt(role)
    match = _S3_URL.match(model_data_url)
    if match is None or Token.is_unresolved(match["key"]):
        Annotations.of(role).add_warning_v2(
            "fm_platform:artifactGrantSkipped",
            f"model artifacts {model_data_url!r} are not an s3:// URI with a literal key, so "
            "no read grant was added; grant read on them to the execution role yourself.",
        )
        return
    bucket_arn = f"arn:{Stack.of(role).partition}:s3:::{match['bucket']}"
    key_path = match["key"]
    if not key_path.endswith("/"):
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=[f"{bucket_arn}/{key_path}"])
        )
        return
    objects = f"{bucket_arn}/{key_path}*"
    role.add_to_principal_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects]))
    role.add_to_principal_policy(
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[bucket_arn],
            conditions={"StringLike": {"s3:prefix": f"{key_path}*"}},
        )
    )
    acknowledge_wildcard_resource(
        role,
        f"uncompressed model artifacts are every object under the prefix {model_data_url}; "
        "read is limited to that prefix.",
        objects,
    )


def role_policies(role: iam.IRole) -> list[IConstruct]:
    """The policies CDK attached to ``role`` for its grants (its default policy), for
    resources that must wait for them: depending on these instead of the role itself
    avoids a dependency the role ARN reference already implies."""
    return [
        child
        for name in ("DefaultPolicy", "Policy")
        if (child := role.node.try_find_child(name)) is not None
    ]


def hosting_execution_role(
    scope: Construct,
    construct_id: str,
    *,
    images: Sequence[str] = (),
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
    grant_containers(role, containers, artifact_key)
    return role


def grant_containers(
    role: iam.IRole, containers: Sequence[ModelContainer], artifact_key: kms.IKey | None
) -> None:
    """Let ``role`` pull each container's image and read its artifacts (decrypting with
    ``artifact_key`` when given); each image and location is granted once."""
    for image in _images(containers):
        grant_image_pull(role, image)
    for url in _model_data_urls(containers):
        grant_model_artifacts(role, url, artifact_key)


def _images(containers: Sequence[ModelContainer]) -> list[str]:
    return list(dict.fromkeys(c.image for c in containers))


def _model_data_urls(containers: Sequence[ModelContainer]) -> list[str]:
    return list(dict.fromkeys(c.model_data_url for c in containers if c.model_data_url))

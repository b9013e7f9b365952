"""The SageMaker hosting execution role: a least-privilege :class:`HostingRole` and what
each model adds to it (image pull, artifact read, VPC access), collected per role (see
:mod:`fm_platform.constructs.inference.role_grants`)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import ArnFormat, CfnResource, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct, IConstruct

from fm_platform.constructs.inference.container_image import ContainerImage
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.role_grants import add_model_artifacts, role_grants_of

SAGEMAKER_LOG_GROUP_KINDS = ("Endpoints", "InferenceComponents")


@dataclass(frozen=True, kw_only=True)
class HostingRoleProps:
    """Options for :class:`HostingRole`.

    images: container images (URIs or :class:`ContainerImage`) the role may pull; by
        default none (add with :meth:`HostingRole.add_image_pull`).
    model_data_urls: S3 artifacts (object URI or prefix ending in ``/``) the role may read;
        by default none (add with :meth:`HostingRole.add_model_artifacts`).
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
    namespaces. Each model adds its image and artifacts to the role's own policy with the
    ``add_*`` methods (they return nothing: the role is their only principal); what
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
        props = props or HostingRoleProps()
        stack = Stack.of(self)
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="SageMaker hosting execution role (fm_platform)",
        )
        grants = role_grants_of(self.role)
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
            self.add_image_pull(image)
        for url in props.model_data_urls:
            self.add_model_artifacts(url, props.artifact_key)
        if props.in_vpc:
            self.add_vpc_access()

    def add_image_pull(self, image: str | ContainerImage) -> None:
        """Let the role pull ``image``: layer download on its ECR repository; when the
        account or repository is only known at deploy time, every repository of this
        account and region."""
        ContainerImage.of(image).bind(self, self.role)

    def add_model_artifacts(self, model_data_url: str, key: kms.IKey | None = None) -> None:
        """Let the role read ``model_data_url`` (an object, or every object under a prefix
        ending in ``/``; its bucket may be a token) and decrypt with ``key`` when given."""
        add_model_artifacts(self.role, model_data_url, key)

    def add_vpc_access(self) -> None:
        """Let SageMaker attach the endpoint's network interfaces in a VPC (idempotent).

        The actions are those the SageMaker Developer Guide grants for a VPC ("Give
        SageMaker AI access to resources in your Amazon VPC"), bound as the Service
        Authorization Reference ("Actions defined by Amazon EC2") allows: the interface
        actions, ``DeleteNetworkInterfacePermission`` among them (its resource type is the
        interface), to network interfaces of this account and Region; creation also to its
        subnets and security groups; the Describe* actions, which have no resource type,
        to "*"."""
        if self._vpc_granted:
            return
        self._vpc_granted = True
        stack = Stack.of(self)
        interfaces, subnets, groups = (
            stack.format_arn(service="ec2", resource=kind, resource_name="*")
            for kind in ("network-interface", "subnet", "security-group")
        )
        for actions, resources in (
            (["ec2:CreateNetworkInterface"], [interfaces, subnets, groups]),
            (
                [
                    "ec2:CreateNetworkInterfacePermission",
                    "ec2:DeleteNetworkInterface",
                    "ec2:DeleteNetworkInterfacePermission",
                ],
                [interfaces],
            ),
            (
                [
                    "ec2:DescribeNetworkInterfaces",
                    "ec2:DescribeVpcs",
                    "ec2:DescribeDhcpOptions",
                    "ec2:DescribeSubnets",
                    "ec2:DescribeSecurityGroups",
                ],
                ["*"],
            ),
        ):
            self.role.add_to_policy(iam.PolicyStatement(actions=actions, resources=resources))
        acknowledgements = role_grants_of(self.role).acknowledgements
        acknowledgements.acknowledge_wildcard_resource(
            "SageMaker creates and releases the endpoint's network interfaces in subnets and "
            "security groups chosen per endpoint, their IDs known only once created: the "
            "interface actions are bound to network interfaces, subnets and security groups "
            "of this account and Region.",
            interfaces,
            subnets,
            groups,
        )
        acknowledgements.acknowledge_rendered(
            "The EC2 Describe* actions SageMaker calls to place the endpoint's network "
            "interfaces support no resource-level permissions.",
            "*",
        )


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
    add_container_access(scope, role, containers, artifact_key)
    return role


def add_container_access(
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
        add_model_artifacts(role, url, artifact_key)


def _images(containers: Sequence[ModelContainer]) -> list[ContainerImage]:
    return list(dict.fromkeys(c.container_image() for c in containers))


def _model_data_urls(containers: Sequence[ModelContainer]) -> list[str]:
    return list(dict.fromkeys(c.model_data_url for c in containers if c.model_data_url))

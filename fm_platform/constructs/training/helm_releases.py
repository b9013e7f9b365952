"""Helm releases on the EKS cluster, installed during the deployment: the HyperPod
dependencies chart before the HyperPod cluster, the FSx for Lustre static volume after the
FSx CSI driver.

Why a build and not aws-cdk-lib's ``eks.HelmChart``: that runs Helm in a Lambda function
through a kubectl layer and needs the L2 ``eks.Cluster`` (this package uses the L1, see
``eks_cluster``); the dependencies chart is in no Helm repository (AWS's install clones
aws/sagemaker-hyperpod-cli and runs ``helm dependency update``, which pulls sub-charts from
quay.io and two chart repositories), and a Lambda function cannot be given Helm, git and
minutes of network work as simply as a build can. So an AWS CodeBuild project in the VPC's
private subnet (NAT egress; the private Kubernetes API endpoint is reachable from its
security group) does the work, and a custom resource (aws-cdk-lib's provider framework,
an ``on_event`` function that starts a build and an ``is_complete`` function that polls it)
makes each release a CloudFormation resource: a Create or an Update (a changed commit,
values or manifests are properties, so a change is an Update) runs ``helm upgrade
--install``, a Delete ``helm uninstall`` (a release or cluster already gone is not an
error). A failed build fails the resource with the link to the build's log.

The build installs Helm at a pinned version whose archive it checks against the SHA-256
that get.helm.sh publishes for it (written below), runs ``aws eks update-kubeconfig`` as
the build role (which has a cluster-admin access entry, created before any release), and
installs either a chart cloned at a pinned commit (``git fetch`` of that commit only), or
``manifests`` given as objects (a chart of one template generated in the build; Helm
then tracks what it created and removes exactly that on Delete).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from aws_cdk import (
    ArnFormat,
    CfnElement,
    CfnResource,
    CustomResource,
    Duration,
    RemovalPolicy,
    Stack,
)
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks as eks
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct, IConstruct

from fm_platform.constructs.training.eks_cluster import ADMIN_ACCESS_POLICY, EksControlPlane
from fm_platform.core.compliance import acknowledge
from fm_platform.core.encryption import allow_cloudwatch_logs, customer_managed_key
from fm_platform.core.function_roles import vpc_function_role

#: Helm's version and the SHA-256 of its linux-amd64 archive, as published beside it
#: (https://get.helm.sh/helm-v3.21.3-linux-amd64.tar.gz.sha256sum; the release notes of
#: helm/helm v3.21.3 list the same digest).
HELM_VERSION = "v3.21.3"
HELM_SHA256 = "15e041a93a590dce8100f39385cd98c84a765c9e36aeeb9e2dc6ff9e4769e2e0"
#: CodeBuild's Amazon Linux 2023 standard image (AWS CLI, git, curl and coreutils included;
#: CodeBuild User Guide, "Docker images provided by CodeBuild").
BUILD_IMAGE = codebuild.LinuxBuildImage.AMAZON_LINUX_2023_5
#: A build's limit; the dependencies chart installs in about two minutes.
BUILD_TIMEOUT = Duration.minutes(30)
#: How long CloudFormation waits for one release (the provider's total timeout).
RELEASE_TIMEOUT = Duration.minutes(45)
_HANDLER = str(Path(__file__).parent / "helm_release_handler")
_LAMBDA_BASIC = "service-role/AWSLambdaBasicExecutionRole"

#: The build's commands (bash): install Helm, point kubectl's configuration at the cluster,
#: then install or uninstall the release. Variables come from the custom resource (see
#: helm_release_handler).
_INSTALL_HELM = (
    'curl -fsSL -o /tmp/helm.tgz "https://get.helm.sh/helm-${HELM_VERSION}-linux-amd64.tar.gz"',
    'echo "${HELM_SHA256}  /tmp/helm.tgz" | sha256sum -c -',
    "tar -xzf /tmp/helm.tgz -C /tmp && install -m 0755 /tmp/linux-amd64/helm /usr/local/bin/helm",
    "helm version",
)
# A subshell: its ``exit`` ends the script, not the build's shell.
_RELEASE = r"""(
set -euo pipefail
if [ "$ACTION" = uninstall ]; then
  if ! aws eks update-kubeconfig --name "$CLUSTER_NAME" --region "$AWS_REGION"; then
    echo "EKS cluster $CLUSTER_NAME is gone: nothing to uninstall"; exit 0
  fi
  if helm status "$RELEASE" --namespace "$NAMESPACE" > /dev/null 2>&1; then
    helm uninstall "$RELEASE" --namespace "$NAMESPACE" --wait --timeout 10m
  else
    echo "release $RELEASE is not installed in $NAMESPACE: nothing to uninstall"
  fi
  exit 0
fi
aws eks update-kubeconfig --name "$CLUSTER_NAME" --region "$AWS_REGION"
echo "$VALUES" | base64 -d > /tmp/values.json
if [ -n "$CHART_COMMIT" ]; then
  git init -q /tmp/source
  git -C /tmp/source fetch -q --depth 1 "$CHART_REPOSITORY" "$CHART_COMMIT"
  git -C /tmp/source checkout -q FETCH_HEAD
  chart="/tmp/source/$CHART_PATH"
  helm dependency update "$chart"
else
  chart=/tmp/manifests
  mkdir -p "$chart/templates"
  printf 'apiVersion: v2\nname: %s\nversion: 1.0.0\n' "$RELEASE" > "$chart/Chart.yaml"
  echo "$MANIFESTS" | base64 -d > "$chart/templates/manifests.yaml"
fi
helm upgrade --install "$RELEASE" "$chart" --namespace "$NAMESPACE" --create-namespace \
  -f /tmp/values.json
helm status "$RELEASE" --namespace "$NAMESPACE"
)
"""


def buildspec() -> dict[str, Any]:
    """The build's specification (CodeBuild buildspec version 0.2)."""
    return {
        "version": "0.2",
        "env": {
            "variables": {"HELM_VERSION": HELM_VERSION, "HELM_SHA256": HELM_SHA256},
            "shell": "bash",
        },
        "phases": {
            "install": {"commands": list(_INSTALL_HELM)},
            "build": {"commands": [_RELEASE]},
        },
    }


@dataclass(frozen=True, kw_only=True)
class GitChart:
    """A chart in a Git repository at a pinned commit.

    repository: the repository's HTTPS URL.
    commit: a full commit SHA.
    path: the chart's directory in the repository.
    """

    repository: str
    commit: str
    path: str


@dataclass(frozen=True, kw_only=True)
class HelmReleasesProps:
    """Options of :class:`HelmReleases`.

    control_plane: the EKS cluster the releases go to.
    vpc, subnet: where the build and the functions run (a private subnet with NAT egress).
    cluster_security_group: the EKS cluster security group; the build's group gets HTTPS
        to it (the Kubernetes API).
    """

    control_plane: EksControlPlane
    vpc: ec2.IVpc
    subnet: ec2.ISubnet
    cluster_security_group: ec2.ISecurityGroup


class HelmReleases(Construct):
    """The build project (``Project``, role ``BuildRole``, security group
    ``BuildSecurityGroup``, log group ``BuildLogs`` with key ``Key``), its cluster-admin
    access entry (``BuildAccess``), and the custom resource provider (``Provider``, functions
    ``OnEvent`` and ``IsComplete`` with role ``FunctionRole``, log group ``FunctionLogs``).
    :meth:`add_release` adds one release.

    Attributes: ``project``, ``build_role``, ``access_entry``, ``key``, ``log_group`` (the
    builds' logs), ``provider``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: HelmReleasesProps) -> None:
        """Create the build and the provider under ``scope``."""
        super().__init__(scope, construct_id)
        self._control = props.control_plane
        self.key = customer_managed_key(self, "Key", purpose="Helm release builds and logs")
        self.log_group = self._log_group("BuildLogs")
        function_logs = self._log_group("FunctionLogs")
        self.build_role = iam.Role(
            self,
            "BuildRole",
            assumed_by=iam.ServicePrincipal("codebuild.amazonaws.com"),
            description="Installs Helm releases on the HyperPod EKS cluster (fm_platform)",
        )
        build_group = ec2.SecurityGroup(
            self,
            "BuildSecurityGroup",
            vpc=props.vpc,
            description="Helm release builds: outbound HTTPS only",
            allow_all_outbound=False,
        )
        build_group.add_egress_rule(
            ec2.Peer.any_ipv4(),
            ec2.Port.tcp(443),
            "HTTPS: Kubernetes API, AWS APIs, GitHub, get.helm.sh, chart repositories",
        )
        self._api_ingress = ec2.CfnSecurityGroupIngress(
            self,
            "ApiFromBuild",
            group_id=props.cluster_security_group.security_group_id,
            ip_protocol="tcp",
            from_port=443,
            to_port=443,
            source_security_group_id=build_group.security_group_id,
            description="Kubernetes API from the Helm release builds",
        )
        self.project = codebuild.Project(
            self,
            "Project",
            description="Helm releases of the HyperPod EKS cluster (fm_platform)",
            build_spec=codebuild.BuildSpec.from_object_to_yaml(buildspec()),
            environment=codebuild.BuildEnvironment(
                build_image=BUILD_IMAGE, compute_type=codebuild.ComputeType.SMALL
            ),
            role=self.build_role.without_policy_updates(),
            encryption_key=self.key,
            vpc=props.vpc,
            subnet_selection=ec2.SubnetSelection(subnets=[props.subnet]),
            security_groups=[build_group],
            timeout=BUILD_TIMEOUT,
            logging=codebuild.LoggingOptions(
                cloud_watch=codebuild.CloudWatchLoggingOptions(log_group=self.log_group)
            ),
        )
        # The project's own network-interface policy is left unattached (the role takes no
        # policy updates) and never synthesized: BuildPolicy holds those statements.
        self.project.node.try_remove_child("PolicyDocument")
        acknowledge(
            self.project,
            "The project has no source (NO_SOURCE, an inline buildspec): the one repository "
            "a build reads is cloned anonymously over HTTPS at a pinned commit, so no "
            "credentials exist that OAuth would replace.",
            "HIPAA.Security-CodeBuildProjectSourceRepoUrl",
        )
        self._build_policy(props.subnet)
        self.access_entry = self._access_entry()
        self.provider = self._provider(props, function_logs)

    def add_release(
        self,
        construct_id: str,
        *,
        release: str,
        namespace: str,
        values: dict[str, Any] | None = None,
        chart: GitChart | None = None,
        manifests: Sequence[dict[str, Any]] = (),
    ) -> CustomResource:
        """A Helm release (a ``Custom::HelmRelease``) of ``chart`` with ``values``, or of
        ``manifests`` when no chart is given, after the build's access entry and its way to
        the Kubernetes API."""
        stack = Stack.of(self)
        properties: dict[str, Any] = {
            "ProjectName": self.project.project_name,
            "ClusterName": self._control.cluster_name,
            "Release": release,
            "Namespace": namespace,
            # JSON text: CloudFormation hands a custom resource every scalar as a string.
            "Values": stack.to_json_string(values or {}),
        }
        if chart is not None:
            properties.update(
                ChartRepository=chart.repository, ChartCommit=chart.commit, ChartPath=chart.path
            )
        else:
            properties["Manifests"] = stack.to_json_string(list(manifests))
        resource = CustomResource(
            self,
            construct_id,
            service_token=self.provider.service_token,
            resource_type="Custom::HelmRelease",
            properties=properties,
        )
        resource.node.add_dependency(self.access_entry, self._api_ingress)
        return resource

    def _log_group(self, construct_id: str) -> logs.LogGroup:
        """A log group encrypted with the construct's key, kept a year and retained; the
        key lets CloudWatch Logs use it for this group only (its generated name starts with
        ``<stack>-<logical ID>-``)."""
        stack = Stack.of(self)
        group = logs.LogGroup(
            self,
            construct_id,
            encryption_key=self.key,
            retention=logs.RetentionDays.ONE_YEAR,
            removal_policy=RemovalPolicy.RETAIN,
        )
        logical_id = stack.get_logical_id(cast(CfnElement, group.node.default_child))
        allow_cloudwatch_logs(
            self.key,
            stack.region,
            [
                stack.format_arn(
                    service="logs",
                    resource="log-group",
                    resource_name=f"{stack.stack_name}-{logical_id}-*",
                    arn_format=ArnFormat.COLON_RESOURCE_NAME,
                )
            ],
        )
        return group

    def _build_policy(self, subnet: ec2.ISubnet) -> None:
        """What a build in the VPC does (CodeBuild User Guide, "Use CodeBuild with Amazon
        Virtual Private Cloud": the network interface calls), writes its log, and the one
        EKS call ``update-kubeconfig`` makes; Kubernetes access is the access entry's."""
        stack = Stack.of(self)
        interfaces = stack.format_arn(
            service="ec2", resource="network-interface", resource_name="*"
        )
        policy = iam.ManagedPolicy(
            self,
            "BuildPolicy",
            description="Helm release builds of the HyperPod EKS cluster (fm_platform)",
            roles=[self.build_role],
            statements=[
                iam.PolicyStatement(
                    sid="DescribeCluster",
                    actions=["eks:DescribeCluster"],
                    resources=[self._control.cluster_arn],
                ),
                iam.PolicyStatement(
                    sid="BuildLogs",
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[self.log_group.log_group_arn],
                ),
                iam.PolicyStatement(
                    sid="BuildKey",
                    actions=["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"],
                    resources=[self.key.key_arn],
                ),
                iam.PolicyStatement(
                    sid="VpcDescribe",
                    actions=[
                        "ec2:CreateNetworkInterface",
                        "ec2:DeleteNetworkInterface",
                        "ec2:DescribeDhcpOptions",
                        "ec2:DescribeNetworkInterfaces",
                        "ec2:DescribeSecurityGroups",
                        "ec2:DescribeSubnets",
                        "ec2:DescribeVpcs",
                    ],
                    resources=["*"],
                ),
                iam.PolicyStatement(
                    sid="VpcInterfaces",
                    actions=["ec2:CreateNetworkInterfacePermission"],
                    resources=[interfaces],
                    conditions={
                        "StringEquals": {
                            "ec2:Subnet": [
                                stack.format_arn(
                                    service="ec2",
                                    resource="subnet",
                                    resource_name=subnet.subnet_id,
                                )
                            ],
                            "ec2:AuthorizedService": "codebuild.amazonaws.com",
                        }
                    },
                ),
            ],
        )
        self.project.node.add_dependency(policy)
        acknowledge(
            policy,
            "CodeBuild creates, describes and deletes the build's network interfaces in the "
            "VPC and reads the VPC's DHCP options, subnets and security groups; those calls "
            "support no resource-level permissions (CodeBuild User Guide, VPC support). "
            "The interface permission is limited to the build's subnet and to CodeBuild.",
            "AwsSolutions-IAM5[Resource::*]",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:"
            "<AWS::AccountId>:network-interface/*]",
        )

    def _access_entry(self) -> eks.CfnAccessEntry:
        """Cluster admin for the build role: the dependencies chart installs cluster-wide
        objects (CRDs, cluster roles, daemon sets in kube-system)."""
        return self._control.access_entry(
            "BuildAccess",
            self.build_role.role_arn,
            ADMIN_ACCESS_POLICY,
            eks.CfnAccessEntry.AccessScopeProperty(type="cluster"),
            under=self,
        )

    def _provider(self, props: HelmReleasesProps, log_group: logs.LogGroup) -> cr.Provider:
        """The provider framework and the two functions, in the private subnet with
        outbound HTTPS only."""
        group = ec2.SecurityGroup(
            self,
            "FunctionSecurityGroup",
            vpc=props.vpc,
            description="Helm release functions: outbound HTTPS only",
            allow_all_outbound=False,
        )
        group.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to the AWS APIs and CloudFormation"
        )
        role = vpc_function_role(
            self, "FunctionRole", "Starts and watches the Helm release builds (fm_platform)"
        )
        policy = iam.ManagedPolicy(
            self,
            "FunctionPolicy",
            description="Start and read the Helm release builds (fm_platform)",
            roles=[role],
            statements=[
                iam.PolicyStatement(
                    actions=["codebuild:StartBuild", "codebuild:BatchGetBuilds"],
                    resources=[self.project.project_arn],
                ),
                iam.PolicyStatement(
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[log_group.log_group_arn],
                ),
            ],
        )
        placement: dict[str, Any] = {
            "vpc": props.vpc,
            "vpc_subnets": ec2.SubnetSelection(subnets=[props.subnet]),
            "security_groups": [group],
        }
        functions = [
            lambda_.Function(
                self,
                construct_id,
                description=description,
                runtime=lambda_.Runtime.PYTHON_3_14,
                handler=f"index.{handler}",
                # The handler's source only (a test's import may leave bytecode beside it).
                code=lambda_.Code.from_asset(_HANDLER, exclude=["__pycache__"]),
                timeout=Duration.minutes(1),
                role=role.without_policy_updates(),
                log_group=log_group,
                **placement,
            )
            for construct_id, handler, description in (
                ("OnEvent", "on_event", "Starts a Helm release build (fm_platform)"),
                ("IsComplete", "is_complete", "Reports whether a Helm release build ended"),
            )
        ]
        for function in functions:
            # After the policy; the role is referenced already (cfn-lint W3005).
            _depends_only_on(function, policy)
        provider = cr.Provider(
            self,
            "Provider",
            on_event_handler=functions[0],
            is_complete_handler=functions[1],
            query_interval=Duration.seconds(30),
            total_timeout=RELEASE_TIMEOUT,
            log_group=log_group,
            # The framework leaves its waiter's logging off unless asked.
            disable_waiter_state_machine_logging=False,
            waiter_state_machine_log_options=cr.LogOptions(
                destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False
            ),
            **placement,
        )
        for name in ("framework-onEvent", "framework-isComplete", "framework-onTimeout"):
            framework = provider.node.find_child(name)
            _depends_only_on(framework, framework.node.find_child("ServiceRole"), "DefaultPolicy")
        waiter = provider.node.find_child("waiter-state-machine")
        _depends_only_on(waiter, waiter.node.find_child("Role"), "DefaultPolicy")
        self._acknowledge_provider(provider, functions)
        return provider

    def _acknowledge_provider(
        self, provider: cr.Provider, functions: Sequence[lambda_.Function]
    ) -> None:
        """What the packs find on the functions and on aws-cdk-lib's provider framework."""
        for function in (*functions, provider):
            acknowledge(
                function,
                "CloudFormation invokes these functions through the provider framework and "
                "waits for the answer; a failed request fails the stack operation, so a "
                "dead-letter queue would hold a request nothing replays, and reserved "
                "concurrency would take from the account's pool for a few calls per "
                "deployment.",
                "HIPAA.Security-LambdaDLQ",
                "NIST.800.53.R5-LambdaDLQ",
                "HIPAA.Security-LambdaConcurrency",
                "NIST.800.53.R5-LambdaConcurrency",
            )
        stack = Stack.of(self)
        invoked = [
            *functions,
            *(provider.node.find_child(f"framework-{n}") for n in ("isComplete", "onTimeout")),
        ]
        framework = [stack.get_logical_id(cast(CfnElement, f.node.default_child)) for f in invoked]
        acknowledge(
            provider,
            "aws-cdk-lib's custom resource provider framework writes its functions' and its "
            "waiter state machine's roles: each may invoke only this provider's own functions "
            "(any version, hence the :* suffix), start only its waiter, and log to its log "
            "group; the policies are the framework's default policies, attached to its roles "
            "only.",
            *(f"AwsSolutions-IAM5[Resource::<{name}.Arn>:*]" for name in framework),
            "HIPAA.Security-IAMNoInlinePolicy",
            "NIST.800.53.R5-IAMNoInlinePolicy",
        )
        acknowledge(
            provider,
            "The framework's functions run in the VPC with the AWS managed policies Lambda "
            "documents for that (AWSLambdaBasicExecutionRole, AWSLambdaVPCAccessExecutionRole: "
            "their logs and network interfaces); the waiter's log delivery calls "
            "(logs:CreateLogDelivery and friends) support no resource-level permissions "
            "(Step Functions Developer Guide, logging to CloudWatch Logs).",
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AWSLambdaBasicExecutionRole]",
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AWSLambdaVPCAccessExecutionRole]",
            "AwsSolutions-IAM5[Resource::*]",
        )
        acknowledge(
            provider,
            "The waiter state machine only calls the is_complete function every 30 seconds "
            "until a build ends; its executions are logged (level ALL) and the build's own "
            "log holds the work, so X-Ray traces would show nothing more.",
            "AwsSolutions-SF2",
        )


def _depends_only_on(resource: IConstruct, target: IConstruct, child: str | None = None) -> None:
    """``resource``'s ``DependsOn``: ``target`` (or its ``child``) only. aws-cdk-lib makes a
    function or state machine depend on its role too, which its properties reference
    already (cfn-lint W3005)."""
    stack = Stack.of(resource)
    element = target.node.find_child(child) if child else target
    cfn = cast(CfnResource, resource.node.default_child)
    cfn.add_override(
        "DependsOn", [stack.get_logical_id(cast(CfnElement, element.node.default_child))]
    )

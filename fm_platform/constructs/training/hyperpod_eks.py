"""A SageMaker HyperPod cluster orchestrated by Amazon EKS, and what runs on it afterwards.

Creation order, as AWS documents it and as the template expresses it (``DependsOn`` or a
reference):

1. the EKS control plane (:class:`EksControlPlane`) with its networking add-ons and the
   administrators' access entries;
2. the HyperPod dependencies Helm chart, a release of
   :class:`~fm_platform.constructs.training.helm_releases.HelmReleases` the stack makes
   the cluster depend on (see docs/training-eks.md);
3. the HyperPod cluster (``AWS::SageMaker::Cluster`` with ``Orchestrator.Eks``), after the
   networking add-ons and its role's policy;
4. after the cluster (they need its nodes): ``coredns``; ``cert-manager``, then the training
   operator's Pod Identity association, then the training operator add-on; the task
   governance add-on, then the scheduler policy, then one compute quota per team and its
   members' access entries; the Prometheus workspace and the observability add-on; the FSx
   CSI driver; the inference operator after ``cert-manager``, the FSx CSI driver and its
   own prerequisites (:class:`InferenceOperator`).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Acknowledgment, ArnFormat, CfnResource, Fn, Names, Resource, Stack, Validations
from aws_cdk import aws_aps as aps
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_eks as eks
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.training.cluster_interface import cluster_id_of
from fm_platform.constructs.training.cluster_role import (
    ClusterExecutionRole,
    cluster_execution_role,
)
from fm_platform.constructs.training.eks_cluster import EksControlPlane
from fm_platform.constructs.training.eks_inference import (
    InferenceOperator,
    InferenceOperatorProps,
)
from fm_platform.constructs.training.eks_options import (
    EksAddOns,
    EksInstanceGroup,
    EksOptions,
    PriorityClass,
    Team,
)
from fm_platform.constructs.training.eks_roles import pod_identity_role, role_policy
from fm_platform.constructs.training.node_health_alarm import (
    NodeHealthAlarm,
    node_health_alarm_name,
    node_health_rule_name,
)
from fm_platform.core.compliance import acknowledge, acknowledge_wildcard_resource
from fm_platform.rules.eks import (
    OBSERVABILITY_SERVICE_ACCOUNT,
    TRAINING_OPERATOR_NAMESPACE,
    TRAINING_OPERATOR_SERVICE_ACCOUNT,
)

_Cfn = sagemaker.CfnCluster
#: The managed policy AWS documents for the training operator's Pod Identity role
#: (SageMaker developer guide, "Installing the training operator").
TRAINING_OPERATOR_POLICY = "AmazonSageMakerHyperPodTrainingOperatorAccess"
#: ECR actions the nodes pull job images with (the HyperPod EKS execution-role additions in
#: the developer guide, "IAM role for SageMaker HyperPod").
_ECR_PULL = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetAuthorizationToken",
    "ecr:GetDownloadUrlForLayer",
)
#: What the VPC CNI on the nodes calls to give pods addresses (same source); the Describe
#: actions support no resource-level permissions.
_CNI_DESCRIBE = ("ec2:DescribeInstances", "ec2:DescribeInstanceTypes", "ec2:DescribeTags")
_CNI_ADDRESSES = ("ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses")
#: What HyperPod's Karpenter-based autoscaler does with the cluster role (developer guide,
#: "Autoscaling on SageMaker HyperPod EKS").
_AUTOSCALING_ACTIONS = ("sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes")
_OBSERVABILITY_METRICS = {
    "trainingMetrics": "BASIC",
    "clusterMetrics": "BASIC",
    "nodeMetrics": "BASIC",
    "acceleratedComputeMetrics": "BASIC",
}


@dataclass(frozen=True, kw_only=True)
class HyperPodEksClusterProps:
    """Options of :class:`HyperPodEksCluster`.

    options: the ``training.eks`` keys (:class:`EksOptions`, validated by the caller).
    control_plane: the EKS cluster the nodes join.
    subnet: the private subnet of the nodes (one Availability Zone).
    security_group: the cluster security group (the control plane's too).
    node_recovery: ``Automatic`` (the default) or ``None``.
    """

    options: EksOptions
    control_plane: EksControlPlane
    subnet: ec2.ISubnet
    security_group: ec2.ISecurityGroup
    node_recovery: str = "Automatic"


class HyperPodEksCluster(Resource):
    """A SageMaker HyperPod cluster orchestrated by Amazon EKS, a CDK ``Resource`` whose
    ``apply_removal_policy`` applies to the ``AWS::SageMaker::Cluster``; it implements
    :class:`~fm_platform.constructs.training.cluster_interface.IHyperPodCluster`, as the
    Slurm cluster does, so ``fmp``'s outputs, observability and imports treat both alike.

    The HyperPod cluster (construct ID ``Resource``), its execution role
    (``ExecutionRole``), the autoscaling role (``AutoscalingRole``, with autoscaling), the
    add-ons after it and task governance.

    Attributes: ``cluster``, ``cluster_arn``, ``cluster_id``, ``cluster_name`` (None:
    CloudFormation generates it and returns no name), ``cluster_name_or_arn`` (the ARN),
    ``instance_groups``,
    ``execution_role``, ``autoscaling_role`` (None without autoscaling), ``node_health_alarm``
    (:class:`NodeHealthAlarm`, construct ID ``NodeHealthAlarm``), ``add_ons`` (by construct
    ID), ``training_operator_identity``, ``prometheus_workspace``, ``inference_operator``
    (:class:`InferenceOperator`, construct ID ``InferenceOperator``, or None),
    ``scheduler_config``, ``quotas`` (by team name), ``team_access_entries``.
    """

    def __init__(self, scope: Construct, construct_id: str, props: HyperPodEksClusterProps) -> None:
        """Create the cluster and what follows it under ``scope``."""
        super().__init__(scope, construct_id)
        options = props.options
        control = props.control_plane
        self.execution_role = cluster_execution_role(
            self, "ExecutionRole", subnet=props.subnet, security_group=props.security_group
        )
        self._grant_node_permissions(self.execution_role, control)
        self.autoscaling_role = self._autoscaling_role() if options.autoscaling else None
        self.cluster = _Cfn(
            self,
            "Resource",
            orchestrator=_Cfn.OrchestratorProperty(
                eks=_Cfn.ClusterOrchestratorEksConfigProperty(cluster_arn=control.cluster_arn)
            ),
            instance_groups=[
                _group(g, self.execution_role.role_arn) for g in options.instance_groups
            ],
            vpc_config=_Cfn.VpcConfigProperty(
                subnets=[props.subnet.subnet_id],
                security_group_ids=[props.security_group.security_group_id],
            ),
            node_recovery=props.node_recovery,
            # HyperPod's autoscaling needs continuous provisioning (developer guide,
            # "Autoscaling on SageMaker HyperPod EKS").
            node_provisioning_mode="Continuous" if options.autoscaling else None,
            auto_scaling=(
                _Cfn.ClusterAutoScalingConfigProperty(mode="Enable", auto_scaler_type="Karpenter")
                if options.autoscaling
                else None
            ),
            cluster_role=self.autoscaling_role.role_arn if self.autoscaling_role else None,
            tiered_storage_config=(
                _Cfn.TieredStorageConfigProperty(
                    mode="Enable",
                    instance_memory_allocation_percentage=options.tiered_storage_memory_percent,
                )
                if options.tiered_storage_memory_percent is not None
                else None
            ),
        )
        self.cluster.node.add_dependency(self.execution_role.policy)
        for add_on in control.add_ons:
            self.cluster.add_resource_dependency(add_on)
        for entry in control.access_entries:
            self.cluster.add_resource_dependency(entry)
        if self.autoscaling_role is not None:
            # The role is referenced already; its policy must exist too.
            self.cluster.node.add_dependency(self.autoscaling_role.node.find_child("Policy"))
        self.cluster_arn: str = self.cluster.attr_cluster_arn
        self.cluster_id: str = cluster_id_of(self.cluster_arn)
        self.cluster_name: str | None = None
        self.cluster_name_or_arn: str = self.cluster_arn
        self.instance_groups: tuple[EksInstanceGroup, ...] = tuple(options.instance_groups)
        # The unhealthy nodes HyperPod's health-monitoring agent reports (it runs on EKS
        # nodes too), alarmed on for the dashboard and the notification topic.
        self.node_health_alarm: NodeHealthAlarm | None = NodeHealthAlarm(
            self,
            "NodeHealthAlarm",
            cluster_arn=self.cluster_arn,
            alarm_name=node_health_alarm_name(self),
            rule_name=node_health_rule_name(self),
            rolls_back_updates=False,
        )
        self.add_ons: dict[str, eks.CfnAddon] = {}
        self.training_operator_identity: eks.CfnPodIdentityAssociation | None = None
        self.prometheus_workspace: aps.CfnWorkspace | None = None
        self.inference_operator: InferenceOperator | None = None
        self._add_ons(control, options.add_ons)
        self.scheduler_config: sagemaker.CfnClusterSchedulerConfig | None = None
        self.quotas: dict[str, CfnResource] = {}
        self.team_access_entries: list[eks.CfnAccessEntry] = []
        if options.task_governance_policy:
            self._task_governance(options, control)

    def _grant_node_permissions(self, role: ClusterExecutionRole, control: EksControlPlane) -> None:
        """What nodes of an EKS cluster do besides a Slurm node's: pull job images, give
        pods addresses (VPC CNI), assume Pod Identity roles."""
        stack = Stack.of(self)
        interfaces = stack.format_arn(
            service="ec2", resource="network-interface", resource_name="*"
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(sid="PullJobImages", actions=list(_ECR_PULL), resources=["*"])
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="DescribeForPodNetworking", actions=list(_CNI_DESCRIBE), resources=["*"]
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="PodAddresses", actions=list(_CNI_ADDRESSES), resources=[interfaces]
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="PodIdentity",
                actions=["eks-auth:AssumeRoleForPodIdentity"],
                resources=[control.cluster_arn],
            )
        )
        acknowledge(
            role.policy,
            "Nodes pull the images of the jobs users submit, from repositories the job authors "
            "choose, and ecr:GetAuthorizationToken supports no resource; the VPC CNI's "
            "ec2:Describe* calls support no resource-level permissions; pod addresses are "
            "assigned on the interfaces HyperPod creates, whose IDs are not known in advance.",
            "AwsSolutions-IAM5[Resource::*]",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:"
            "<AWS::AccountId>:network-interface/*]",
        )

    def _autoscaling_role(self) -> iam.Role:
        """The cluster role HyperPod's Karpenter autoscaler assumes to add and remove the
        cluster's nodes. The cluster's ARN is not known before the cluster (which names
        the role), so the grant is on the account's clusters."""
        role = iam.Role(
            self,
            "AutoscalingRole",
            assumed_by=iam.ServicePrincipal("hyperpod.sagemaker.amazonaws.com"),
            description="HyperPod Karpenter autoscaling of the EKS cluster's nodes (fm_platform)",
        )
        clusters = Stack.of(self).format_arn(
            service="sagemaker", resource="cluster", resource_name="*"
        )
        policy = role_policy(
            role,
            iam.PolicyStatement(
                sid="ScaleClusterNodes", actions=list(_AUTOSCALING_ACTIONS), resources=[clusters]
            ),
        )
        acknowledge_wildcard_resource(
            policy,
            "The cluster names this role, so the role cannot name the cluster's generated ARN "
            "without a cycle; it may add and delete nodes of the account's HyperPod clusters "
            "in this Region only, and only HyperPod can assume it.",
            clusters,
        )
        return role

    def _add_ons(self, control: EksControlPlane, add_ons: EksAddOns) -> None:
        """The add-ons that need nodes, each after the cluster."""
        self._after_cluster("CoreDns", control.add_on("CoreDns", "coredns"))
        cert_manager = None
        if add_ons.cert_manager:
            cert_manager = self._after_cluster(
                "CertManager", control.add_on("CertManager", "cert-manager")
            )
        if add_ons.training_operator and cert_manager is not None:
            identity = eks.CfnPodIdentityAssociation(
                control,
                "TrainingOperatorIdentity",
                cluster_name=control.cluster_name,
                namespace=TRAINING_OPERATOR_NAMESPACE,
                service_account=TRAINING_OPERATOR_SERVICE_ACCOUNT,
                role_arn=pod_identity_role(
                    self,
                    "TrainingOperatorRole",
                    control.cluster_arn,
                    managed_policy=TRAINING_OPERATOR_POLICY,
                ).role_arn,
            )
            operator = control.add_on(
                "TrainingOperator", "amazon-sagemaker-hyperpod-training-operator"
            )
            operator.add_resource_dependency(identity)
            operator.add_resource_dependency(cert_manager)
            self._after_cluster("TrainingOperator", operator)
            self.training_operator_identity = identity
        if add_ons.task_governance:
            self._after_cluster(
                "TaskGovernance",
                control.add_on("TaskGovernance", "amazon-sagemaker-hyperpod-taskgovernance"),
            )
        if add_ons.observability:
            self._observability(control)
        fsx = None
        if add_ons.fsx_csi_driver:
            fsx = self._after_cluster(
                "FsxCsiDriver", control.add_on("FsxCsiDriver", "aws-fsx-csi-driver")
            )
        if add_ons.inference_operator and cert_manager is not None and fsx is not None:
            self.inference_operator = InferenceOperator(
                self,
                "InferenceOperator",
                InferenceOperatorProps(
                    control_plane=control,
                    cluster=self.cluster,
                    after=[cert_manager, fsx],
                ),
            )
            self.add_ons.update(self.inference_operator.add_ons)

    def _after_cluster(self, construct_id: str, add_on: eks.CfnAddon) -> eks.CfnAddon:
        add_on.add_resource_dependency(self.cluster)
        self.add_ons[construct_id] = add_on
        return add_on

    def _observability(self, control: EksControlPlane) -> None:
        """An Amazon Managed Service for Prometheus workspace, the collector's role (remote
        write to it, logs under /aws/sagemaker/Clusters) and the add-on configured with
        it, as AWS's observability template does."""
        workspace = aps.CfnWorkspace(self, "PrometheusWorkspace", alias=Names.unique_id(self))
        self.prometheus_workspace = workspace
        role = pod_identity_role(self, "ObservabilityRole", control.cluster_arn)
        stack = Stack.of(self)
        logs = stack.format_arn(
            service="logs",
            resource="log-group",
            resource_name="/aws/sagemaker/Clusters/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        policy = role_policy(
            role,
            iam.PolicyStatement(
                sid="PrometheusAccess", actions=["aps:RemoteWrite"], resources=[workspace.attr_arn]
            ),
            iam.PolicyStatement(
                sid="CloudwatchLogsAccess",
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:DescribeLogStreams",
                    "logs:PutLogEvents",
                ],
                resources=[logs, f"{logs}:log-stream:*"],
            ),
        )
        acknowledge_wildcard_resource(
            policy,
            "HyperPod writes each cluster's logs to log groups under /aws/sagemaker/Clusters/ "
            "whose names end in the cluster's generated ID, one stream per node.",
            logs,
            f"{logs}:log-stream:*",
        )
        endpoint = Fn.join(
            "",
            [
                "https://aps-workspaces.",
                stack.region,
                ".amazonaws.com/workspaces/",
                workspace.attr_workspace_id,
            ],
        )
        configuration = {
            "ampWorkspace": {"prometheusEndpoint": endpoint, "arn": workspace.attr_arn},
            "metricsProvider": {
                name: {"level": level, "scrapeInterval": 30}
                for name, level in _OBSERVABILITY_METRICS.items()
            },
        }
        add_on = control.add_on("Observability", "amazon-sagemaker-hyperpod-observability")
        add_on.configuration_values = stack.to_json_string(configuration)
        add_on.pod_identity_associations = [
            eks.CfnAddon.PodIdentityAssociationProperty(
                role_arn=role.role_arn, service_account=OBSERVABILITY_SERVICE_ACCOUNT
            )
        ]
        add_on.node.add_dependency(policy)
        self._after_cluster("Observability", add_on)

    def _task_governance(self, options: EksOptions, control: EksControlPlane) -> None:
        """The scheduler policy (priority classes, fair share) and one compute quota per
        team, after the task governance add-on."""
        governance = self.add_ons["TaskGovernance"]
        self.scheduler_config = sagemaker.CfnClusterSchedulerConfig(
            self,
            "SchedulerConfig",
            name=_name(self, "policy"),
            cluster_arn=self.cluster_arn,
            scheduler_config=sagemaker.CfnClusterSchedulerConfig.SchedulerConfigProperty(
                priority_classes=[_priority_class(c) for c in options.priority_classes] or None,
                fair_share="Enabled" if options.fair_share else "Disabled",
            ),
        )
        self.scheduler_config.add_resource_dependency(governance)
        for team in options.teams:
            quota = CfnResource(
                self,
                f"Quota{team.name}",
                type="AWS::SageMaker::ComputeQuota",
                properties=_quota_properties(team, _name(self, team.name), self.cluster_arn),
            )
            Validations.of(quota).acknowledge(
                Acknowledgment(
                    id="CloudFormation-Validate::F3006",
                    reason="AWS::SageMaker::ComputeQuota is newer than the schemas of the "
                    "pinned aws-cdk-lib's validator; the template is checked against "
                    "cfn-lint's schema, which has it.",
                )
            )
            quota.add_resource_dependency(self.scheduler_config)
            self.quotas[team.name] = quota
            for index, member in enumerate(team.members):
                entry = control.namespace_editor(
                    f"Team{team.name}Member{index}", member, team.namespace
                )
                # Task governance makes the namespace with the team's quota.
                entry.add_resource_dependency(quota)
                self.team_access_entries.append(entry)


def _name(scope: Construct, suffix: str) -> str:
    """A stable name for a task-governance resource: letters, digits and hyphens, at most
    63 characters, unique in the app."""
    return Names.unique_resource_name(scope, max_length=63 - len(suffix) - 1, separator="-") + (
        f"-{suffix}"
    )


def _group(group: EksInstanceGroup, role_arn: str) -> _Cfn.ClusterInstanceGroupProperty:
    labels = dict(group.labels or {})
    taints = [
        _Cfn.ClusterKubernetesTaintProperty(key=t.key, effect=t.effect, value=t.value)
        for t in group.taints
    ]
    kubernetes = None
    if labels or taints:
        kubernetes = _Cfn.ClusterKubernetesConfigProperty(
            labels=labels or None, taints=taints or None
        )
    storage = None
    if group.ebs_volume_gib is not None:
        storage = [
            _Cfn.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=_Cfn.ClusterEbsVolumeConfigProperty(
                    volume_size_in_gb=group.ebs_volume_gib
                )
            )
        ]
    return _Cfn.ClusterInstanceGroupProperty(
        instance_group_name=group.name,
        instance_type=group.instance_type,
        instance_count=group.instance_count,
        execution_role=role_arn,
        threads_per_core=group.threads_per_core,
        instance_storage_configs=storage,
        on_start_deep_health_checks=list(group.effective_deep_health_checks) or None,
        kubernetes_config=kubernetes,
        image_release_version=group.image_release_version,
        training_plan_arn=group.training_plan_arn,
    )


def _priority_class(
    item: PriorityClass,
) -> sagemaker.CfnClusterSchedulerConfig.PriorityClassProperty:
    return sagemaker.CfnClusterSchedulerConfig.PriorityClassProperty(
        name=item.name, weight=item.weight
    )


def _quota_properties(team: Team, name: str, cluster_arn: str) -> dict[str, object]:
    """``AWS::SageMaker::ComputeQuota`` properties (no L1 in the pinned aws-cdk-lib; the
    schema is cfn-lint's)."""
    sharing: dict[str, object] = {"Strategy": team.sharing}
    if team.borrow_limit_percent is not None:
        sharing["BorrowLimit"] = team.borrow_limit_percent
    target: dict[str, object] = {"TeamName": team.name}
    if team.fair_share_weight is not None:
        target["FairShareWeight"] = team.fair_share_weight
    return {
        "Name": name,
        "ClusterArn": cluster_arn,
        "ComputeQuotaConfig": {
            "ComputeQuotaResources": [
                {"InstanceType": team.instance_type, "Count": team.instance_count}
            ],
            "ResourceSharingConfig": sharing,
            "PreemptTeamTasks": team.preempt_team_tasks,
        },
        "ComputeQuotaTarget": target,
    }

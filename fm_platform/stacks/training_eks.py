"""The training cluster's stack when Amazon EKS orchestrates it (``training.orchestrator:
eks``): the EKS control plane, and once the HyperPod dependencies chart is installed, the
HyperPod cluster with its add-ons and task governance. Its stateful half is the same
:class:`~fm_platform.stacks.training_data.TrainingDataStack` as Slurm's."""

from __future__ import annotations

from typing import Any, cast

from aws_cdk import (
    Annotations,
    CfnOutput,
    CrossStackReferences,
    Fn,
    ReferenceStrength,
    Stack,
    Tags,
)
from constructs import Construct

from fm_platform.config.training import TrainingConfig
from fm_platform.constructs.observability.eks_dashboard import eks_section
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.observability.training_observability import (
    TrainingObservability,
    TrainingObservabilityProps,
)
from fm_platform.constructs.training.eks_cluster import EksControlPlane, EksControlPlaneProps
from fm_platform.constructs.training.eks_options import (
    DEPENDENCIES_CHART_PATH,
    DEPENDENCIES_CHART_REPOSITORY,
    EksOptions,
)
from fm_platform.constructs.training.hyperpod_eks import HyperPodEksCluster, HyperPodEksClusterProps
from fm_platform.rules.problems import Problems
from fm_platform.stacks.training_data import TrainingDataStack, companion_data_stack

#: The Helm release and namespace AWS's install instructions use for the chart.
DEPENDENCIES_RELEASE = "hyperpod-dependencies"
DEPENDENCIES_NAMESPACE = "kube-system"


class TrainingEksStack(Stack):
    """An EKS-orchestrated HyperPod cluster: the stateless half of a training deployment
    with ``orchestrator: eks``.

    Its data stack (network, FSx for Lustre, keys, logs, and the two isolated subnets the
    control plane also uses) is ``data`` when given, else one named ``<construct_id>Data``
    is created beside it.

    Composition (construct IDs are stable): ``Eks`` (:class:`EksControlPlane`), and with
    ``eks.dependencies_chart_installed`` ``Cluster`` (:class:`HyperPodEksCluster`) and
    ``Observability`` (:class:`TrainingObservability`: the cluster's events and unhealthy
    nodes to the data stack's topic, the dashboard with the EKS control plane). Without
    it a synth warning and the ``DependenciesChartCommand`` output say what to run before
    the next deployment.

    Outputs: EksClusterName, EksClusterArn, KubeconfigCommand, DependenciesChartCommand,
    FsxMountPath; ClusterName and ClusterArn (both the ARN) with the HyperPod cluster;
    PrometheusWorkspaceArn with the observability add-on; InferenceTlsBucketName with the
    inference operator.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TrainingConfig,
        data: TrainingDataStack | None = None,
        notifications: NotificationTopicOptions | None = NotificationTopicOptions(),  # noqa: B008
        dashboards: bool = True,
        **stack_kwargs: Any,
    ) -> None:
        """Build the EKS cluster and (once the chart is installed) the HyperPod cluster from
        ``config``, which must have ``orchestrator: eks`` and valid ``eks`` keys; with the
        HyperPod cluster, its observability (``dashboards=False``: no dashboard)."""
        super().__init__(scope, construct_id, **stack_kwargs)
        # Strong references, as the Slurm stack: the data stack cannot pull the subnets or
        # the security group from under a running cluster.
        CrossStackReferences.of(self).consume(ReferenceStrength.STRONG)
        problems = Problems("TrainingConfig")
        config.check_orchestrator(problems)
        problems.raise_if_any()
        # check_orchestrator reported an absent eks.
        options = cast(EksOptions, config.eks)
        self.config = config
        self.data = data or companion_data_stack(
            scope,
            construct_id,
            config,
            notifications,
            stack_kwargs,
            "fm_platform: what the HyperPod training cluster keeps (network, FSx for Lustre, "
            "keys, logs)",
        )
        network = self.data.network
        subnets = self.data.control_plane_subnets or network.database_subnets()
        self.control_plane = EksControlPlane(
            self,
            "Eks",
            EksControlPlaneProps(
                subnets=subnets,
                security_group=network.security_group,
                kubernetes_version=options.kubernetes_version,
                authentication_mode=options.authentication_mode,
                vpc_cni_version=options.vpc_cni_version,
                endpoint_public_access=options.endpoint_public_access,
                administrators=options.administrators,
            ),
        )
        if options.add_ons.inference_operator:
            # The AWS Load Balancer Controller the inference operator brings puts internal
            # load balancers in subnets tagged so, in two Availability Zones at least (AWS's
            # CloudFormation reference tags its private subnets the same way).
            for subnet in subnets:
                Tags.of(subnet).add("kubernetes.io/role/internal-elb", "1")
        self.cluster: HyperPodEksCluster | None = None
        if options.dependencies_chart_installed:
            self.cluster = HyperPodEksCluster(
                self,
                "Cluster",
                HyperPodEksClusterProps(
                    options=options,
                    control_plane=self.control_plane,
                    subnet=network.subnet,
                    security_group=network.security_group,
                    node_recovery=config.node_recovery,
                ),
            )
        else:
            Annotations.of(self).add_warning_v2(
                "fm_platform:dependenciesChart",
                "training.eks.dependencies_chart_installed is false: this deployment creates "
                "the EKS cluster only. Install the HyperPod dependencies chart with the "
                "command of the DependenciesChartCommand output, then set it to true and "
                "deploy again to create the HyperPod cluster (docs/training-eks.md).",
            )
        self._add_outputs(options)
        self.observability: TrainingObservability | None = None
        if self.cluster is not None:
            self.observability = self._observe(self.cluster, dashboards)

    def _observe(self, cluster: HyperPodEksCluster, dashboards: bool) -> TrainingObservability:
        """The cluster's events and unhealthy nodes sent to the data stack's topic, and the
        dashboard with the EKS control plane, as the Slurm stack's (no lifecycle scripts,
        so no lifecycle error alarm)."""
        topic = self.data.notifications
        health = cluster.node_health_alarm
        return TrainingObservability(
            self,
            "Observability",
            TrainingObservabilityProps(
                cluster=cluster,
                file_system_id=self.data.file_system.file_system_id,
                topic=topic.topic if topic is not None else None,
                cluster_events=self.config.cluster_events,
                lifecycle_error_alarm=False,
                file_system_alarm=self.data.file_system_alarm,
                dashboards=dashboards,
                sections=[
                    eks_section(
                        self.control_plane.cluster_name,
                        self.region,
                        node_health_rule=health.rule_name if health else None,
                        alarm_arns=[health.alarm.attr_arn] if health else (),
                    )
                ],
            ),
        )

    def _add_outputs(self, options: EksOptions) -> None:
        control = self.control_plane
        region = Stack.of(self).region
        kubeconfig = Fn.join(
            "",
            ["aws eks update-kubeconfig --region ", region, " --name ", control.cluster_name],
        )
        outputs = {
            "EksClusterName": (control.cluster_name, "EKS cluster the HyperPod nodes join"),
            "EksClusterArn": (control.cluster_arn, "EKS cluster ARN"),
            "KubeconfigCommand": (kubeconfig, "Point kubectl at the EKS cluster"),
            "DependenciesChartCommand": (
                Fn.join(
                    "",
                    [
                        kubeconfig,
                        " && ",
                        dependencies_chart_command(options.dependencies_chart_commit),
                    ],
                ),
                "Install or upgrade the HyperPod dependencies Helm chart (before the HyperPod "
                "cluster; again after changing dependencies_chart_commit)",
            ),
            "FsxMountPath": (self.data.file_system.mount_path, "FSx for Lustre mount path"),
        }
        if self.cluster is not None:
            outputs["ClusterName"] = (
                self.cluster.cluster_arn,
                "HyperPod cluster (its ARN: CloudFormation names it), for `fmp cluster` and "
                "aws sagemaker describe-cluster --cluster-name",
            )
            outputs["ClusterArn"] = (self.cluster.cluster_arn, "HyperPod cluster ARN")
            if self.cluster.prometheus_workspace is not None:
                outputs["PrometheusWorkspaceArn"] = (
                    self.cluster.prometheus_workspace.attr_arn,
                    "Amazon Managed Service for Prometheus workspace of the observability add-on",
                )
            if self.cluster.inference_operator is not None:
                outputs["InferenceTlsBucketName"] = (
                    self.cluster.inference_operator.tls_bucket.bucket.bucket_name,
                    "Bucket of the TLS certificates the HyperPod inference operator issues",
                )
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)


def dependencies_chart_command(commit: str) -> str:
    """The shell commands that install the HyperPod dependencies chart at ``commit`` into
    the cluster kubectl points at (AWS's install steps: clone aws/sagemaker-hyperpod-cli,
    ``helm dependency update``, ``helm upgrade --install`` into kube-system)."""
    directory = "sagemaker-hyperpod-cli"
    chart = f"{directory}/{DEPENDENCIES_CHART_PATH}"
    return (
        f"git clone {DEPENDENCIES_CHART_REPOSITORY} {directory} && "
        f"git -C {directory} checkout {commit} && "
        f"helm dependency update {chart} && "
        f"helm upgrade --install {DEPENDENCIES_RELEASE} {chart} "
        f"--namespace {DEPENDENCIES_NAMESPACE}"
    )

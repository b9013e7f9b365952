"""The training cluster's stack when Amazon EKS orchestrates it (``training.orchestrator:
eks``): the EKS control plane, the HyperPod dependencies Helm chart (installed during the
deployment), the HyperPod cluster with its add-ons and task governance, and the FSx for
Lustre static volume. Its stateful half is the same
:class:`~fm_platform.stacks.training_data.TrainingDataStack` as Slurm's."""

from __future__ import annotations

from typing import Any, cast

from aws_cdk import (
    CfnOutput,
    CrossStackReferences,
    CustomResource,
    Fn,
    ReferenceStrength,
    Stack,
    Tags,
)
from aws_cdk import aws_fsx as fsx
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
from fm_platform.constructs.training.helm_releases import (
    GitChart,
    HelmReleases,
    HelmReleasesProps,
)
from fm_platform.constructs.training.hyperpod_eks import HyperPodEksCluster, HyperPodEksClusterProps
from fm_platform.rules.eks_chart import (
    DEPENDENCIES_NAMESPACE,
    DEPENDENCIES_RELEASE,
    FSX_CLAIM_NAME,
    FSX_VOLUME_RELEASE,
    dependencies_chart_values,
    fsx_volume_manifests,
)
from fm_platform.rules.problems import Problems
from fm_platform.stacks.training_data import TrainingDataStack, companion_data_stack


class TrainingEksStack(Stack):
    """An EKS-orchestrated HyperPod cluster: the stateless half of a training deployment
    with ``orchestrator: eks``.

    Its data stack (network, FSx for Lustre, keys, logs, and the two isolated subnets the
    control plane also uses) is ``data`` when given, else one named ``<construct_id>Data``
    is created beside it.

    Composition (construct IDs are stable): ``Eks`` (:class:`EksControlPlane`), ``Helm``
    (:class:`HelmReleases`: the build that installs Helm releases, with the release
    ``DependenciesChart`` before the cluster and, with the FSx CSI driver, ``FsxVolume``
    after it), ``Cluster`` (:class:`HyperPodEksCluster`) and ``Observability``
    (:class:`TrainingObservability`: the cluster's events and unhealthy nodes to the data
    stack's topic, the dashboard with the EKS control plane).

    Outputs: EksClusterName, EksClusterArn, KubeconfigCommand, ClusterName and ClusterArn
    (both the ARN), FsxMountPath, HelmBuildLogGroup; FsxClaimName with the FSx CSI driver;
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
        """Build the EKS cluster, the dependencies chart, the HyperPod cluster and its
        observability (``dashboards=False``: no dashboard) from ``config``, which must have
        ``orchestrator: eks`` and valid ``eks`` keys."""
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
        self.helm = HelmReleases(
            self,
            "Helm",
            HelmReleasesProps(
                control_plane=self.control_plane,
                vpc=network.vpc,
                subnet=network.subnet,
                cluster_security_group=network.security_group,
            ),
        )
        # AWS's order: the dependencies chart on the EKS cluster, then the HyperPod cluster.
        self.dependencies_chart = self.helm.add_release(
            "DependenciesChart",
            release=DEPENDENCIES_RELEASE,
            namespace=DEPENDENCIES_NAMESPACE,
            chart=GitChart(
                repository=DEPENDENCIES_CHART_REPOSITORY,
                commit=options.dependencies_chart_commit,
                path=DEPENDENCIES_CHART_PATH,
            ),
            values=dependencies_chart_values(
                [g.instance_type for g in options.instance_groups], self.region
            ),
        )
        for add_on in self.control_plane.add_ons:
            self.dependencies_chart.node.add_dependency(add_on)
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
        self.cluster.cluster.node.add_dependency(self.dependencies_chart)
        self.fsx_volume = self._fsx_volume(options) if options.add_ons.fsx_csi_driver else None
        self._add_outputs()
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

    def _fsx_volume(self, options: EksOptions) -> CustomResource:
        """The FSx for Lustre file system as a static volume with a claim in the configured
        namespace and in each team's, after the FSx CSI driver and the teams' quotas (which
        make the team namespaces)."""
        file_system = self.data.file_system
        capacity = cast(
            fsx.CfnFileSystem, file_system.file_system.node.default_child
        ).storage_capacity
        namespaces = [options.fsx_volume_namespace]
        namespaces += [f"hyperpod-ns-{t.name}" for t in options.teams]
        volume = self.helm.add_release(
            "FsxVolume",
            release=FSX_VOLUME_RELEASE,
            namespace=options.fsx_volume_namespace,
            manifests=fsx_volume_manifests(
                dict.fromkeys(namespaces),
                file_system_id=file_system.file_system_id,
                dns_name=file_system.dns_name,
                mount_name=file_system.mount_name,
                capacity_gib=cast(int, capacity),
            ),
        )
        volume.node.add_dependency(self.cluster.add_ons["FsxCsiDriver"])
        for quota in self.cluster.quotas.values():
            volume.node.add_dependency(quota)
        return volume

    def _add_outputs(self) -> None:
        control = self.control_plane
        region = Stack.of(self).region
        kubeconfig = Fn.join(
            "",
            ["aws eks update-kubeconfig --region ", region, " --name ", control.cluster_name],
        )
        cluster = self.cluster
        outputs = {
            "EksClusterName": (control.cluster_name, "EKS cluster the HyperPod nodes join"),
            "EksClusterArn": (control.cluster_arn, "EKS cluster ARN"),
            "KubeconfigCommand": (kubeconfig, "Point kubectl at the EKS cluster"),
            "ClusterName": (
                cluster.cluster_arn,
                "HyperPod cluster (its ARN: CloudFormation names it), for `fmp cluster` and "
                "aws sagemaker describe-cluster --cluster-name",
            ),
            "ClusterArn": (cluster.cluster_arn, "HyperPod cluster ARN"),
            "FsxMountPath": (self.data.file_system.mount_path, "FSx for Lustre mount path"),
            "HelmBuildLogGroup": (
                self.helm.log_group.log_group_name,
                "Logs of the builds that install the Helm releases (dependencies chart, FSx "
                "volume): read them when a release fails",
            ),
        }
        if self.fsx_volume is not None:
            outputs["FsxClaimName"] = (
                FSX_CLAIM_NAME,
                "PersistentVolumeClaim of the FSx for Lustre file system in the volume's "
                "namespace and each team's (fmp job script --eks --fsx-claim)",
            )
        if cluster.prometheus_workspace is not None:
            outputs["PrometheusWorkspaceArn"] = (
                cluster.prometheus_workspace.attr_arn,
                "Amazon Managed Service for Prometheus workspace of the observability add-on",
            )
        if cluster.inference_operator is not None:
            outputs["InferenceTlsBucketName"] = (
                cluster.inference_operator.tls_bucket.bucket.bucket_name,
                "Bucket of the TLS certificates the HyperPod inference operator issues",
            )
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)

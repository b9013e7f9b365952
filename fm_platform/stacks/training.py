"""The training cluster's stack: a HyperPod cluster with Slurm (:class:`TrainingStack`),
configured by one :class:`~fm_platform.config.TrainingConfig`, next to what it keeps
(:class:`~fm_platform.stacks.training_data.TrainingDataStack`: network, FSx for Lustre,
lifecycle-script bucket)."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, CrossStackReferences, Fn, ReferenceStrength, Stack
from constructs import Construct

from fm_platform.config.training import TrainingConfig
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.observability.training_alarms import FunctionPlacement
from fm_platform.constructs.observability.training_observability import (
    TrainingObservability,
    TrainingObservabilityProps,
)
from fm_platform.constructs.training.hyperpod import (
    HyperPodCluster,
    HyperPodClusterOptions,
    HyperPodClusterProps,
)
from fm_platform.constructs.training.instance_groups import (
    node_setup,
    provisioning_parameters,
    validate_instance_groups,
)
from fm_platform.constructs.training.lifecycle import (
    LifecycleScripts,
    LifecycleScriptsOptions,
    LifecycleScriptsProps,
)
from fm_platform.core.options import options_values
from fm_platform.rules.problems import Problems
from fm_platform.stacks.training_data import TrainingDataStack, companion_data_stack


class TrainingStack(Stack):
    """A HyperPod cluster with Slurm: the stateless half of a training deployment, which can
    be destroyed and recreated on its own.

    Its stateful half, a :class:`TrainingDataStack` (network, FSx for Lustre, lifecycle
    bucket, keys, logs), is ``data`` when given, else one is created next to this stack in
    the same scope, named ``<construct_id>Data`` (``<stack_name>Data`` when ``stack_name``
    is given), with the same environment. This stack depends on it and retains nothing.

    Composition (construct IDs are stable): ``LifecycleScripts`` (:class:`LifecycleScripts`:
    the upload of the scripts into the data stack's bucket, run in its private subnet, with
    the provisioning parameters from the instance groups and the file system's DNS and
    mount names in lifecycle Slurm mode, the node setup (where HyperPod mounts the file
    systems) in managed mode) -> ``Cluster`` (:class:`HyperPodCluster`, given the data
    stack's home file system and accounting database when it has them).

    Observability (``Observability``, see :class:`TrainingObservability`): the cluster's
    events and the lifecycle-script error alarm sent to the data stack's topic, and the
    dashboard (``dashboards=False``: none).

    Attributes: ``config``, ``data``, ``network`` and ``file_system`` (the data stack's),
    ``provisioning_parameters`` (the provisioning_parameters.json document, with FSx
    tokens; None in managed mode), ``node_setup`` (the fmp_node_setup.json document; None
    in lifecycle mode), ``lifecycle``, ``cluster``, ``observability``. Outputs (read by the
    ``fmp`` CLI): ClusterName, ClusterArn, ControllerGroupName, FsxMountPath,
    LifecycleScriptsS3Uri, SsmLoginCommand.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TrainingConfig = TrainingConfig(),  # noqa: B008 - frozen, so safe to share
        data: TrainingDataStack | None = None,
        notifications: NotificationTopicOptions | None = NotificationTopicOptions(),  # noqa: B008
        dashboards: bool = True,
        **stack_kwargs: Any,
    ) -> None:
        """Build the cluster stack from ``config`` (and its data stack unless ``data`` is given,
        with ``notifications``); the instance groups are validated first."""
        super().__init__(scope, construct_id, **stack_kwargs)
        # Set here, not left to the app's @aws-cdk/core:defaultCrossStackReferences: the
        # cluster reads the data stack's values through exports (Fn::ImportValue). An
        # export cannot change or go while imported, which is exactly the data-stack change
        # (a replaced subnet or security group) that would orphan a running cluster, whose
        # VpcConfig is create-only; and imports are resolved when a change set is made, so
        # it never plans on values known only after apply, as Fn::GetStackOutput's weak
        # references do (and the CDK CLI skips a stack whose template text is unchanged, so
        # a weak reference's new value would not even reach the cluster without --force).
        CrossStackReferences.of(self).consume(ReferenceStrength.STRONG)
        # The groups and the Slurm mode shape everything below (the data stack's database
        # and home file system, the scripts' parameters, the cluster): check them before
        # building anything.
        problems = Problems("TrainingConfig")
        validate_instance_groups(problems, config.instance_groups)
        config.check_slurm_features(problems)
        problems.raise_if_any()
        self.config = config
        self.data = data or companion_data_stack(
            scope,
            construct_id,
            config,
            notifications,
            stack_kwargs,
            "fm_platform: what the HyperPod training cluster keeps (network, FSx for Lustre, "
            "lifecycle-script bucket, keys, logs)",
        )
        self.network = self.data.network
        self.file_system = self.data.file_system
        home = self.data.home_file_system
        self.provisioning_parameters: dict[str, Any] | None = None
        self.node_setup: dict[str, Any] | None = None
        if config.managed:
            self.node_setup = node_setup(
                fsx_mount_path=self.file_system.mount_path,
                home_mount_path=home.mount_path if home is not None else None,
            )
        else:
            self.provisioning_parameters = provisioning_parameters(
                config.instance_groups,
                fsx_dns_name=self.file_system.dns_name,
                fsx_mount_name=self.file_system.mount_name,
                fsx_mount_path=self.file_system.mount_path,
            )
        storage = self.data.lifecycle
        self.lifecycle = LifecycleScripts(
            self,
            "LifecycleScripts",
            LifecycleScriptsProps(
                **options_values(LifecycleScriptsOptions, config),
                provisioning_parameters=self.provisioning_parameters,
                node_setup=self.node_setup,
                bucket=storage.bucket,
                upload_log_group=storage.upload_log_group,
                vpc=self.network.vpc,
                subnet=self.network.subnet,
                security_group=storage.upload_security_group,
            ),
        )
        self.cluster = HyperPodCluster(
            self,
            "Cluster",
            HyperPodClusterProps(
                **options_values(HyperPodClusterOptions, config),
                subnet=self.network.subnet,
                security_group=self.network.security_group,
                lifecycle=self.lifecycle,
                file_system=self.file_system,
                home_file_system=home,
                accounting_database=self.data.accounting,
            ),
        )
        self._add_outputs()
        topic = self.data.notifications
        self.observability = TrainingObservability(
            self,
            "Observability",
            TrainingObservabilityProps(
                cluster=self.cluster,
                placement=FunctionPlacement(
                    vpc=self.network.vpc,
                    subnet=self.network.subnet,
                    log_group=storage.upload_log_group,
                    log_key=storage.upload_log_key,
                    reserved_concurrency=config.sdk_function_reserved_concurrency,
                ),
                file_system_id=self.file_system.file_system_id,
                topic=topic.topic if topic is not None else None,
                cluster_events=config.cluster_events,
                lifecycle_error_alarm=config.lifecycle_error_alarm,
                file_system_alarm=self.data.file_system_alarm,
                dashboards=dashboards,
            ),
        )

    def _add_outputs(self) -> None:
        cluster = self.cluster
        outputs = {
            "ClusterName": (
                cluster.cluster_name_or_arn,
                "Cluster name (or ARN when CloudFormation named it): use it with "
                "aws sagemaker describe-cluster / list-cluster-nodes --cluster-name",
            ),
            "ClusterArn": (cluster.cluster_arn, "Cluster ARN"),
            "ControllerGroupName": (
                cluster.controller_group_name,
                "Instance group of the Slurm controller (head node)",
            ),
            "FsxMountPath": (self.file_system.mount_path, "Where nodes mount FSx for Lustre"),
            "LifecycleScriptsS3Uri": (self.lifecycle.s3_uri, "Lifecycle scripts S3 prefix"),
            "SsmLoginCommand": (
                Fn.join(
                    "",
                    [
                        "aws ssm start-session --target sagemaker-cluster:",
                        cluster.cluster_id,
                        f"_{cluster.controller_group_name}-<instance-id>",
                    ],
                ),
                "Log in to the head node: replace <instance-id> with the controller's "
                "instance ID from `aws sagemaker list-cluster-nodes` or `fmp cluster nodes`",
            ),
        }
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)

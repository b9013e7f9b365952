"""The options of a HyperPod cluster orchestrated by Amazon EKS (the configuration's
``training.eks`` keys): the EKS control plane, the instance groups with their Kubernetes
labels and taints, Karpenter autoscaling, the add-ons and task governance."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fm_platform.constructs.training.instance_groups import DEFAULT_DEEP_HEALTH_CHECKS
from fm_platform.rules.eks import (
    AUTHENTICATION_MODES,
    BORROW_LIMIT_RANGE,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_VPC_CNI_VERSION,
    KUBERNETES_VERSIONS,
    MAX_PRIORITY_CLASSES,
    PREEMPT_TEAM_TASKS,
    SHARING_STRATEGIES,
    TEAM_NAMESPACE_PREFIX,
    WEIGHT_RANGE,
    check_names,
    check_one_entry_per_principal,
    check_principal_arns,
    check_vpc_cni_version,
)
from fm_platform.rules.eks_chart import check_namespace
from fm_platform.rules.instance_groups import check_instance_group, supports_deep_health_checks
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name

#: aws/sagemaker-hyperpod-cli at this commit holds the HyperPod dependencies chart
#: (helm_chart/HyperPodHelmChart) the deployment installs by default.
DEFAULT_DEPENDENCIES_CHART_COMMIT = "40eb213ed5fe90a4d16f1664db07d174b9b3d69d"
DEPENDENCIES_CHART_REPOSITORY = "https://github.com/aws/sagemaker-hyperpod-cli.git"
DEPENDENCIES_CHART_PATH = "helm_chart/HyperPodHelmChart"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: Effects that keep a pod without the toleration off the node.
_REPELLING_EFFECTS = ("NoSchedule", "NoExecute")
_SPEC = "ClusterInstanceGroupSpecification"


class Orchestrator(enum.Enum):
    """Who schedules the cluster's work: Slurm (the default) or Amazon EKS."""

    SLURM = "slurm"
    EKS = "eks"


@dataclass(frozen=True, kw_only=True)
class KubernetesTaint:
    """A taint HyperPod puts on every node of a group (``KubernetesConfig.Taints``).

    key: a Kubernetes label key (``nvidia.com/gpu``).
    effect: ``NoSchedule``, ``PreferNoSchedule`` or ``NoExecute``.
    value: by default none.
    """

    key: str
    effect: str
    value: str | None = None

    def check(self, problems: Problems, field: str) -> None:
        """Record every problem of this taint under ``field``."""
        problems.check_shape(f"{field}.key", self.key, "ClusterKubernetesTaintKey")
        problems.check_shape(f"{field}.value", self.value, "ClusterKubernetesTaintValue")
        problems.check_choice(f"{field}.effect", self.effect, TAINT_EFFECTS)


@dataclass(frozen=True, kw_only=True)
class EksInstanceGroup:
    """One instance group of an EKS-orchestrated cluster: its nodes join the EKS cluster as
    workers (there is no controller: the EKS control plane schedules).

    name: the group's name (1-63 letters, digits and hyphens); changing it replaces the
        group's nodes.
    instance_type: an ``ml.*`` type HyperPod offers (botocore ``ClusterInstanceType``).
    instance_count: how many instances the group has.
    labels: Kubernetes labels HyperPod puts on the group's nodes; by default none.
    taints: Kubernetes taints HyperPod puts on the group's nodes; by default none.
    deep_health_checks: the on-start deep health checks; by default InstanceStress and
        InstanceConnectivity on NVIDIA GPU and Trainium types, none otherwise; ``()`` none.
    threads_per_core: 1 (the default) or 2.
    ebs_volume_gib: the extra EBS volume per instance; by default 500 GiB (``None``: none).
    image_release_version: HyperPod's AMI release (``MAJOR.MINOR.PATCH``); by default the
        latest at creation. Changing it updates the group's software.
    training_plan_arn: a SageMaker training plan whose reserved capacity the group uses; by
        default on-demand capacity.
    """

    name: str
    instance_type: str
    instance_count: int
    labels: Mapping[str, str] | None = None
    taints: tuple[KubernetesTaint, ...] = ()
    deep_health_checks: tuple[str, ...] | None = None
    threads_per_core: int = 1
    ebs_volume_gib: int | None = 500
    image_release_version: str | None = None
    training_plan_arn: str | None = None

    @property
    def effective_deep_health_checks(self) -> tuple[str, ...]:
        """The deep health checks the group runs on start, defaults applied."""
        if self.deep_health_checks is not None:
            return tuple(self.deep_health_checks)
        if supports_deep_health_checks(self.instance_type):
            return DEFAULT_DEEP_HEALTH_CHECKS
        return ()

    def check(self, problems: Problems, field: str) -> None:
        """Record every problem of this group under ``field``."""
        check_instance_group(
            problems,
            field,
            name=self.name,
            role="worker",
            instance_type=self.instance_type,
            instance_count=self.instance_count,
            threads_per_core=self.threads_per_core,
            ebs_volume_gib=self.ebs_volume_gib,
            deep_health_checks=self.deep_health_checks,
            training_plan_arn=self.training_plan_arn,
            partition=None,
        )
        problems.check_shape(
            f"{field}.image_release_version",
            self.image_release_version,
            member_shape_name(_SPEC, "ImageReleaseVersion"),
        )
        for key, value in (self.labels or {}).items():
            problems.check_shape(f"{field}.labels", key, "ClusterKubernetesLabelKey")
            problems.check_shape(f"{field}.labels.{key}", value, "ClusterKubernetesLabelValue")
        for index, taint in enumerate(self.taints or ()):
            if taint is not None:
                taint.check(problems, f"{field}.taints[{index}]")


@dataclass(frozen=True, kw_only=True)
class PriorityClass:
    """A task-governance priority class (``SchedulerConfig.PriorityClasses``).

    name: lower-case letters, digits and hyphens (a Kubernetes name).
    weight: 0 to 100; higher runs first and may preempt lower.
    """

    name: str
    weight: int


@dataclass(frozen=True, kw_only=True)
class Team:
    """A team's compute quota (``AWS::SageMaker::ComputeQuota``); HyperPod makes the
    namespace ``hyperpod-ns-<name>`` for it.

    name: lower-case letters, digits and hyphens, at most 41 characters.
    instance_type: the type of the quota, one of the cluster's groups.
    instance_count: how many of those instances the team is guaranteed.
    fair_share_weight: 0 to 100, the team's weight when idle compute is shared by fair
        share; by default HyperPod's (0).
    sharing: ``LendAndBorrow`` (the default), ``Lend`` or ``DontLend``: what the team does
        with idle compute.
    borrow_limit_percent: how much beyond its quota the team may borrow, 1 to 500 percent;
        by default HyperPod's (50).
    preempt_team_tasks: ``LowerPriority`` (the default: a team task preempts the team's
        lower-priority tasks) or ``Never``.
    members: IAM role or user ARNs that get an EKS access entry with
        ``AmazonEKSEditPolicy`` scoped to the team's namespace ``hyperpod-ns-<name>``: they
        submit and manage the team's jobs there and see nothing of the other teams'. By
        default none.
    """

    name: str
    instance_type: str
    instance_count: int
    fair_share_weight: int | None = None
    sharing: str = "LendAndBorrow"
    borrow_limit_percent: int | None = None
    preempt_team_tasks: str = "LowerPriority"
    members: tuple[str, ...] = ()

    @property
    def namespace(self) -> str:
        """The namespace task governance makes for the team."""
        return f"{TEAM_NAMESPACE_PREFIX}{self.name}"

    def check(self, problems: Problems, field: str, group_types: Sequence[str]) -> None:
        """Record every problem of this team under ``field``; ``group_types`` are the
        cluster's instance types."""
        if self.instance_type is not None and group_types and self.instance_type not in group_types:
            problems.add(
                f"{field}.instance_type",
                self.instance_type,
                f"a quota is on a type the cluster has: one of {', '.join(sorted(group_types))}",
            )
        problems.check_range(f"{field}.instance_count", self.instance_count, 0, None)
        problems.check_range(f"{field}.fair_share_weight", self.fair_share_weight, *WEIGHT_RANGE)
        problems.check_choice(f"{field}.sharing", self.sharing, SHARING_STRATEGIES)
        problems.check_range(
            f"{field}.borrow_limit_percent", self.borrow_limit_percent, *BORROW_LIMIT_RANGE
        )
        problems.check_choice(
            f"{field}.preempt_team_tasks", self.preempt_team_tasks, PREEMPT_TEAM_TASKS
        )
        check_principal_arns(problems, f"{field}.members", self.members or ())


@dataclass(frozen=True, kw_only=True)
class EksAddOns:
    """The EKS add-ons created after the HyperPod cluster (they need its nodes).

    training_operator: ``amazon-sagemaker-hyperpod-training-operator`` (HyperPodPyTorchJob
        with auto-resume, what ``fmp job script`` writes), with the ``cert-manager`` add-on
        and the operator's Pod Identity association before it. By default on.
    task_governance: ``amazon-sagemaker-hyperpod-taskgovernance`` (Kueue), needed by
        ``teams``; by default off.
    observability: ``amazon-sagemaker-hyperpod-observability`` with an Amazon Managed
        Service for Prometheus workspace it writes to; by default off (the workspace
        costs per sample ingested).
    fsx_csi_driver: ``aws-fsx-csi-driver`` and a static volume of the cluster's FSx for
        Lustre file system with its claim (``fsx_volume_namespace``), so that pods mount it;
        by default off.
    inference_operator: ``amazon-sagemaker-hyperpod-inference`` (the HyperPod inference
        operator: models deployed on the cluster's nodes behind an Application Load
        Balancer, scaled by KEDA), with what it needs before it: ``cert-manager``, the
        Mountpoint for Amazon S3 CSI driver, ``metrics-server``, the cluster's OpenID
        Connect provider, its IAM roles and the bucket of its TLS certificates. Needs
        ``fsx_csi_driver``. By default off: a training cluster serves no models, and the
        operator adds a load balancer controller and an autoscaler to the cluster.
    """

    training_operator: bool = True
    task_governance: bool = False
    observability: bool = False
    fsx_csi_driver: bool = False
    inference_operator: bool = False

    @property
    def cert_manager(self) -> bool:
        """Whether ``cert-manager`` is installed (the operators need it)."""
        return self.training_operator or self.inference_operator


@dataclass(frozen=True, kw_only=True)
class EksOptions:
    """The ``training.eks`` keys, read when ``orchestrator`` is ``eks``.

    instance_groups: the groups (at least one); every node joins the EKS cluster.
    administrators: IAM principal ARNs that get cluster-admin access entries; at least
        one (the deploying identity gets no implicit access).
    kubernetes_version: one HyperPod supports (1.28 to 1.33); by default 1.32.
    authentication_mode: ``API`` (the default) or ``API_AND_CONFIG_MAP``.
    vpc_cni_version: the pinned ``vpc-cni`` add-on version, 1.18.3 or later; by default
        ``v1.19.5-eksbuild.1``.
    endpoint_public_access: whether the Kubernetes API is reachable from the internet (for
        kubectl outside the VPC); by default private only.
    dependencies_chart_commit: the aws/sagemaker-hyperpod-cli commit whose HyperPod
        dependencies chart the deployment installs before the HyperPod cluster (and
        upgrades to when it changes); by default a pinned one.
    fsx_volume_namespace: the namespace of the FSx for Lustre file system's claim (with
        ``add_ons.fsx_csi_driver``; each team's ``hyperpod-ns-<team>`` gets one too); by
        default ``default``.
    autoscaling: Karpenter autoscaling managed by HyperPod (``AutoScaling``, a cluster
        role HyperPod assumes, continuous node provisioning); by default off.
    tiered_storage_memory_percent: the share of instance memory for HyperPod's tiered
        checkpointing (``TieredStorageConfig``); by default off.
    add_ons: the optional add-ons (:class:`EksAddOns`).
    teams: compute quotas per team (needs ``add_ons.task_governance``); by default none.
    priority_classes: task-governance priority classes; by default none.
    fair_share: whether idle compute is shared by the teams' fair-share weights; by default
        true. With teams or priority classes, a cluster scheduler policy is created.
    """

    instance_groups: tuple[EksInstanceGroup, ...]
    administrators: tuple[str, ...]
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    authentication_mode: str = "API"
    vpc_cni_version: str = DEFAULT_VPC_CNI_VERSION
    endpoint_public_access: bool = False
    dependencies_chart_commit: str = DEFAULT_DEPENDENCIES_CHART_COMMIT
    fsx_volume_namespace: str = "default"
    autoscaling: bool = False
    tiered_storage_memory_percent: int | None = None
    add_ons: EksAddOns = EksAddOns()
    teams: tuple[Team, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    fair_share: bool = True

    @property
    def task_governance_policy(self) -> bool:
        """Whether a cluster scheduler policy is created."""
        return bool(self.teams or self.priority_classes)

    def check(self, problems: Problems) -> None:
        """Record every problem of these options (fields named without the ``eks.``
        prefix: give a scoped ``problems``)."""
        groups = [g for g in self.instance_groups or () if g is not None]
        if not groups:
            problems.add("instance_groups", self.instance_groups, "give at least one group")
        for index, group in enumerate(groups):
            group.check(problems, f"instance_groups[{index}]")
        problems.check_unique("instance_groups[].name", [g.name for g in groups])
        if groups and all(_repels(g) for g in groups):
            problems.add(
                "instance_groups",
                [g.name for g in groups],
                "every group has a NoSchedule or NoExecute taint, so coredns, cert-manager and "
                "the operators the stack installs have no node to run on (their add-ons, "
                "created after the cluster, wait for their pods): add a group without such "
                'taints, e.g. {"name": "system", "instance_type": "ml.m5.2xlarge", '
                '"instance_count": 1}',
            )
        if not self.administrators:
            problems.add(
                "administrators",
                self.administrators,
                "give at least one IAM principal ARN: the cluster grants no implicit access to "
                "the identity that deploys it",
            )
        check_principal_arns(problems, "administrators", self.administrators or ())
        problems.check_choice("kubernetes_version", self.kubernetes_version, KUBERNETES_VERSIONS)
        problems.check_choice("authentication_mode", self.authentication_mode, AUTHENTICATION_MODES)
        check_vpc_cni_version(problems, "vpc_cni_version", self.vpc_cni_version)
        if self.dependencies_chart_commit is not None and not _is_commit(
            self.dependencies_chart_commit
        ):
            problems.add(
                "dependencies_chart_commit",
                self.dependencies_chart_commit,
                "must be a full 40-character commit SHA of aws/sagemaker-hyperpod-cli",
            )
        check_namespace(problems, "fsx_volume_namespace", self.fsx_volume_namespace)
        problems.check_range(
            "tiered_storage_memory_percent", self.tiered_storage_memory_percent, 1, 100
        )
        self._check_governance(problems, [g.instance_type for g in groups])
        self._check_add_ons(problems)

    def _check_governance(self, problems: Problems, group_types: list[str]) -> None:
        teams = [t for t in self.teams or () if t is not None]
        check_names(problems, "teams", [t.name for t in teams], "team")
        for index, team in enumerate(teams):
            team.check(problems, f"teams[{index}]", group_types)
        classes = [c for c in self.priority_classes or () if c is not None]
        check_names(problems, "priority_classes", [c.name for c in classes], "priority class")
        for index, item in enumerate(classes):
            problems.check_range(f"priority_classes[{index}].weight", item.weight, *WEIGHT_RANGE)
        if len(classes) > MAX_PRIORITY_CLASSES:
            problems.add(
                "priority_classes",
                len(classes),
                f"at most {MAX_PRIORITY_CLASSES} priority classes (ClusterSchedulerConfig)",
            )
        add_ons = self.add_ons
        if self.task_governance_policy and add_ons is not None and not add_ons.task_governance:
            problems.add(
                "add_ons.task_governance",
                False,
                "teams and priority classes are enforced by the task governance add-on: turn it on",
            )
        check_one_entry_per_principal(
            problems,
            [
                *((f"administrators[{i}]", arn) for i, arn in enumerate(self.administrators or ())),
                *(
                    (f"teams[{t}].members[{m}]", arn)
                    for t, team in enumerate(teams)
                    for m, arn in enumerate(team.members or ())
                ),
            ],
        )

    def _check_add_ons(self, problems: Problems) -> None:
        add_ons = self.add_ons
        if add_ons is not None and add_ons.inference_operator and not add_ons.fsx_csi_driver:
            problems.add(
                "add_ons.fsx_csi_driver",
                False,
                "the inference operator add-on needs the FSx CSI driver (its install fails "
                "without the fsx.csi.aws.com driver): turn it on",
            )


def _repels(group: EksInstanceGroup) -> bool:
    return any(t.effect in _REPELLING_EFFECTS for t in group.taints)


def _is_commit(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)

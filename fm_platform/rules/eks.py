"""What an EKS-orchestrated HyperPod cluster must satisfy: the Kubernetes versions and VPC CNI
HyperPod supports, the shape of Kubernetes labels and taints, team and priority-class names
of task governance.

Sources: SageMaker developer guide, "Getting started with Amazon EKS support in SageMaker
HyperPod" (Kubernetes 1.28 to 1.33; authentication mode ``API`` or ``API_AND_CONFIG_MAP``;
the Amazon VPC CNI 1.18.3 or later, the only CNI HyperPod supports); botocore's SageMaker
model (``ClusterKubernetesLabelKey`` and friends, checked through ``Problems.check_shape``);
the CloudFormation schemas of ``AWS::SageMaker::ComputeQuota`` (``TeamName``) and
``AWS::SageMaker::ClusterSchedulerConfig`` (``PriorityClass``), as cfn-lint ships them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fm_platform.rules.problems import Problems, repeats

#: Kubernetes versions HyperPod supports (developer guide, see the module's sources).
KUBERNETES_VERSIONS = ("1.28", "1.29", "1.30", "1.31", "1.32", "1.33")
#: The newest of them; AWS's CloudFormation reference (aws/sagemaker-hyperpod-cluster-setup
#: eks/cloudformation/main-stack-eks-based-template.yaml) defaults to 1.32 too.
DEFAULT_KUBERNETES_VERSION = "1.32"
#: Authentication modes HyperPod supports; the EKS schema also allows CONFIG_MAP.
AUTHENTICATION_MODES = ("API", "API_AND_CONFIG_MAP")
#: The oldest VPC CNI HyperPod supports.
MIN_VPC_CNI = (1, 18, 3)
#: The VPC CNI add-on version pinned by default (an EKS add-on version string).
DEFAULT_VPC_CNI_VERSION = "v1.19.5-eksbuild.1"
_ADDON_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-eksbuild\.\d+$")
#: Team names become the namespace ``hyperpod-ns-<team>`` (ComputeQuota schema, TeamName);
#: priority-class names follow the same pattern (ClusterSchedulerConfig schema).
TEAM_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9]){0,39}?$")
#: The namespace task governance makes for a team (ComputeQuota schema, TeamName).
TEAM_NAMESPACE_PREFIX = "hyperpod-ns-"
#: ClusterSchedulerConfig schema: at most 10 priority classes, weights 0 to 100.
MAX_PRIORITY_CLASSES = 10
#: ComputeQuotaTarget.FairShareWeight and PriorityClass.Weight range.
WEIGHT_RANGE = (0, 100)
#: ResourceSharingConfig.Strategy (ComputeQuota schema).
SHARING_STRATEGIES = ("Lend", "DontLend", "LendAndBorrow")
#: ResourceSharingConfig.BorrowLimit: the schema admits 0 to 10000, the service documents
#: 1 to 500 percent.
BORROW_LIMIT_RANGE = (1, 500)
#: ComputeQuotaConfig.PreemptTeamTasks.
PREEMPT_TEAM_TASKS = ("Never", "LowerPriority")
#: The Pod Identity association the training operator add-on needs before it is created
#: (awslabs/awsome-distributed-training, hyperpod-eks-tf add-ons; SageMaker developer
#: guide, "Installing the training operator").
TRAINING_OPERATOR_NAMESPACE = "aws-hyperpod"
TRAINING_OPERATOR_SERVICE_ACCOUNT = "hp-training-operator-controller-manager"
#: The observability add-on's collector (developer guide, "Amazon SageMaker HyperPod
#: observability": the Pod Identity association of the add-on).
OBSERVABILITY_NAMESPACE = "hyperpod-observability"
OBSERVABILITY_SERVICE_ACCOUNT = "hyperpod-observability-operator-otel-collector"
#: The inference operator add-on (``amazon-sagemaker-hyperpod-inference``): its namespace and
#: the service accounts its IRSA roles trust (SageMaker developer guide, "Setting up your
#: HyperPod clusters for model deployment"; aws/sagemaker-hyperpod-cli, the chart's
#: migration/helm_to_addon.sh; awslabs/awsome-distributed-training, hyperpod-eks-tf module
#: hyperpod_inference_operator).
INFERENCE_NAMESPACE = "hyperpod-inference-system"
INFERENCE_OPERATOR_SERVICE_ACCOUNT = "hyperpod-inference-controller-manager"
ALB_CONTROLLER_SERVICE_ACCOUNT = "aws-load-balancer-controller"
KEDA_SERVICE_ACCOUNT = "keda-operator"
#: The model pods that download gated JumpStart models, in any namespace.
GATED_MODEL_SUBJECT = "system:serviceaccount:*:hyperpod-inference-service-account*"
#: The Mountpoint for Amazon S3 CSI driver's controller (kube-system).
S3_CSI_SERVICE_ACCOUNT = "s3-csi-driver-sa"
#: The add-on refuses an execution role whose name does not start with this (the chart's
#: templates/_validateRequiredValues.tpl, with ``isAddOn``); the managed policy
#: AmazonSageMakerHyperPodInferenceAccess is written for roles named so.
INFERENCE_ROLE_PREFIX = "SageMakerHyperPodInference"
#: What an EKS access entry's principal is: an IAM role or user (EKS User Guide, "Create
#: access entries": ``principalArn``).
PRINCIPAL_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")


def addon_version(text: str) -> tuple[int, int, int] | None:
    """The ``(major, minor, patch)`` of an EKS add-on version such as
    ``v1.19.5-eksbuild.1``; None when it is not of that form."""
    match = _ADDON_VERSION.match(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def check_vpc_cni_version(problems: Problems, field: str, version: str | None) -> None:
    """The VPC CNI add-on version: an EKS add-on version, 1.18.3 or later."""
    if version is None:
        return
    parsed = addon_version(version)
    if parsed is None:
        problems.add(
            field,
            version,
            "must be an EKS add-on version such as 'v1.19.5-eksbuild.1' (aws eks "
            "describe-addon-versions --addon-name vpc-cni lists them)",
        )
    elif parsed < MIN_VPC_CNI:
        problems.add(
            field, version, "HyperPod needs the Amazon VPC CNI 1.18.3 or later; pin a later one"
        )


def check_principal_arns(problems: Problems, field: str, arns: Iterable[str | None]) -> None:
    """Each of ``arns`` is an IAM role or user ARN (an access entry's principal)."""
    for index, arn in enumerate(arns):
        if arn is not None and not PRINCIPAL_ARN.match(arn):
            problems.add(
                f"{field}[{index}]",
                arn,
                "must be an IAM role or user ARN (arn:aws:iam::<12-digit account>:role/<name>)",
            )


def check_one_entry_per_principal(
    problems: Problems, principals: Iterable[tuple[str, str | None]]
) -> None:
    """EKS keeps one access entry per principal: each ARN of ``principals`` (field, ARN)
    appears once among the administrators and every team's members."""
    for field, arn, first in repeats(principals):
        problems.add(
            field,
            arn,
            f"already listed as {first}: EKS keeps one access entry per principal; list it "
            "once (an administrator has access to every namespace already)",
        )


def check_names(problems: Problems, field: str, names: Iterable[str | None], what: str) -> None:
    """Team or priority-class names: lower-case letters, digits and hyphens, 1 to 41
    characters, starting and ending with a letter or digit; each once."""
    listed = list(names)
    for index, name in enumerate(listed):
        if name is not None and not TEAM_NAME.match(name):
            problems.add(
                f"{field}[{index}].name",
                name,
                f"a {what} name must be 1-41 lower-case letters, digits and hyphens, "
                "starting and ending with a letter or digit (it becomes a Kubernetes name)",
            )
    problems.check_unique(f"{field}[].name", listed)

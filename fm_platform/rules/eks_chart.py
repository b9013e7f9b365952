"""The values the HyperPod dependencies Helm chart is installed with, from the cluster's
instance types.

Source: aws/sagemaker-hyperpod-cli, ``helm_chart/HyperPodHelmChart`` (``values.yaml``,
``Chart.yaml``, ``charts/*`` and ``helm_chart/readme.md``) at the pinned commit, and the
SageMaker developer guide, "Installing packages on the Amazon EKS cluster using Helm"
(release ``hyperpod-dependencies`` in ``kube-system``). What the chart's defaults would get
wrong on this platform, and what the values change:

- ``global.region``: the health-monitoring agent's image is pulled from the ECR of the
  region the chart detects, which falls back to us-west-2 when it cannot tell (its
  ``values.yaml``); the stack's region is given instead.
- ``nvidia-device-plugin``: on only when a group has NVIDIA GPUs, its node affinity
  limited to those groups' types (the chart's list names every NVIDIA type).
- ``neuron-device-plugin``: on only with Trainium or Inferentia groups (its node affinity
  is fixed in its template).
- ``aws-efa-k8s-device-plugin``: on only when a group's type has EFA, and its
  ``supportedInstanceLabels`` limited to those types: the chart's own list names types
  without EFA (aws/sagemaker-hyperpod-cli#367), whose nodes would run a plugin that finds
  no device.
- ``cert-manager``: off (the chart's default too): the stack installs the ``cert-manager``
  EKS add-on before the training operator, and two cert-managers would fight over the
  same CRDs and webhooks.
- ``inferenceOperators``: off (the chart's default): the HyperPod inference operator is an
  EKS add-on of its own.
- ``trainingOperators`` (the Kubeflow training operator, ``kubeflow.org`` jobs): on, the
  chart's default and part of what AWS documents the chart installs; its CRDs are not those
  of the HyperPod training operator add-on (``HyperPodPyTorchJob``), so both run side by
  side.

The resiliency charts (health-monitoring agent, deep health check, job auto-restart, MPI
operator, HyperPod patching) keep the chart's defaults: on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fm_platform.hardware.instances import (
    UnknownInstanceTypeError,
    instance_spec,
    looks_accelerated,
)
from fm_platform.rules.problems import Problems

#: The Helm release and namespace of AWS's install instructions.
DEPENDENCIES_RELEASE = "hyperpod-dependencies"
DEPENDENCIES_NAMESPACE = "kube-system"
#: The node label Kubernetes puts the instance type in; HyperPod nodes carry the ``ml.*``
#: type (the chart's own affinities match on it).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
_NEURON_FAMILY_PREFIXES = ("ml.trn", "ml.inf")
#: A Kubernetes namespace: an RFC 1123 label (Kubernetes documentation, "Namespaces").
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
#: The claim of the FSx for Lustre static volume in each namespace that gets one; the name
#: of the claim in the FSx CSI driver's static provisioning example.
FSX_CLAIM_NAME = "fsx-claim"
#: The Helm release of the static volume and its claims.
FSX_VOLUME_RELEASE = "fsx-volume"
#: The FSx for Lustre CSI driver's name (kubernetes-sigs/aws-fsx-csi-driver).
FSX_CSI_DRIVER = "fsx.csi.aws.com"


def accelerator_of(instance_type: str) -> str:
    """``nvidia-gpu``, ``trainium``, ``inferentia`` or ``none`` for ``instance_type``; a type
    the package's instance data does not know is judged by its family's name."""
    try:
        return instance_spec(instance_type).accelerator
    except UnknownInstanceTypeError:
        if instance_type.startswith(_NEURON_FAMILY_PREFIXES):
            return "trainium" if instance_type.startswith("ml.trn") else "inferentia"
        return "nvidia-gpu" if looks_accelerated(instance_type) else "none"


def has_efa(instance_type: str) -> bool:
    """Whether ``instance_type`` has an EFA interface (the package's instance data; a type
    it does not know counts as without)."""
    try:
        return instance_spec(instance_type).efa_interfaces > 0
    except UnknownInstanceTypeError:
        return False


def dependencies_chart_values(instance_types: Iterable[str], region: str) -> dict[str, Any]:
    """The values of the dependencies chart for a cluster whose groups have
    ``instance_types``, in ``region`` (see the module docstring for each key)."""
    types = sorted(set(instance_types))
    nvidia = [t for t in types if accelerator_of(t) == "nvidia-gpu"]
    neuron = [t for t in types if accelerator_of(t) in ("trainium", "inferentia")]
    efa = [t for t in types if has_efa(t)]
    nvidia_plugin: dict[str, Any] = {"devicePlugin": {"enabled": bool(nvidia)}}
    if nvidia:
        # The chart's tolerations (GPU taints, HyperPod's unschedulable status) stay.
        nvidia_plugin["affinity"] = _on_types(nvidia)
    efa_plugin: dict[str, Any] = {"devicePlugin": {"enabled": bool(efa)}}
    if efa:
        efa_plugin["supportedInstanceLabels"] = {"keys": [INSTANCE_TYPE_LABEL], "values": efa}
    return {
        "global": {"region": region},
        "cert-manager": {"enabled": False},
        "inferenceOperators": {"enabled": False},
        "trainingOperators": {"enabled": True},
        "nvidia-device-plugin": nvidia_plugin,
        "neuron-device-plugin": {"devicePlugin": {"enabled": bool(neuron)}},
        "aws-efa-k8s-device-plugin": efa_plugin,
    }


def _on_types(types: list[str]) -> dict[str, Any]:
    """A node affinity requiring one of ``types``."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": types}
                        ]
                    }
                ]
            }
        }
    }


def check_namespace(problems: Problems, field: str, namespace: str | None) -> None:
    """A Kubernetes namespace name: 1-63 lower-case letters, digits and hyphens, starting and
    ending with a letter or digit."""
    if namespace is not None and not _NAMESPACE.match(namespace):
        problems.add(
            field,
            namespace,
            "a Kubernetes namespace is 1-63 lower-case letters, digits and hyphens, starting "
            "and ending with a letter or digit",
        )


def fsx_volume_manifests(
    namespaces: Iterable[str],
    *,
    file_system_id: str,
    dns_name: str,
    mount_name: str,
    capacity_gib: int | str,
) -> list[dict[str, Any]]:
    """A static PersistentVolume of the FSx for Lustre file system and its claim
    ``fsx-claim`` in each of ``namespaces`` (kubernetes-sigs/aws-fsx-csi-driver,
    ``examples/kubernetes/static_provisioning``): a volume binds one claim, so each
    namespace gets its own volume of the same file system (``fsx-<namespace>``). The
    volumes are retained when their claims go: the data is the file system's."""
    manifests: list[dict[str, Any]] = []
    storage = f"{capacity_gib}Gi"
    for namespace in namespaces:
        volume = f"fsx-{namespace}"
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": volume},
                "spec": {
                    "capacity": {"storage": storage},
                    "volumeMode": "Filesystem",
                    "accessModes": ["ReadWriteMany"],
                    "mountOptions": ["flock"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": "",
                    "claimRef": {"namespace": namespace, "name": FSX_CLAIM_NAME},
                    "csi": {
                        "driver": FSX_CSI_DRIVER,
                        "volumeHandle": file_system_id,
                        "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name},
                    },
                },
            }
        )
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": FSX_CLAIM_NAME, "namespace": namespace},
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "resources": {"requests": {"storage": storage}},
                    "volumeName": volume,
                },
            }
        )
    return manifests

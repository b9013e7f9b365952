"""The HyperPod dependencies chart's values from the cluster's instance types, and the FSx
for Lustre static volume's manifests (pure functions, no aws-cdk-lib)."""

from __future__ import annotations

from fm_platform.rules.eks_chart import (
    FSX_CLAIM_NAME,
    accelerator_of,
    check_namespace,
    dependencies_chart_values,
    fsx_volume_manifests,
    has_efa,
)
from fm_platform.rules.problems import Problems


def _affinity_types(values: dict) -> list[str]:
    affinity = values["nvidia-device-plugin"]["affinity"]["nodeAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    assert expression["key"] == "node.kubernetes.io/instance-type"
    return expression["values"]


def test_efa_plugin_only_on_efa_types():
    # ml.g5.12xlarge has EFA, ml.g5.2xlarge does not; the chart's own list names both
    # families' types without EFA (aws/sagemaker-hyperpod-cli#367).
    values = dependencies_chart_values(
        ["ml.g5.12xlarge", "ml.g5.2xlarge", "ml.m7i.large"], "us-east-1"
    )
    efa = values["aws-efa-k8s-device-plugin"]
    assert efa["devicePlugin"] == {"enabled": True}
    assert efa["supportedInstanceLabels"]["values"] == ["ml.g5.12xlarge"]
    assert has_efa("ml.g5.12xlarge") and not has_efa("ml.g5.2xlarge")


def test_no_efa_type_turns_the_efa_plugin_off():
    values = dependencies_chart_values(["ml.g5.2xlarge"], "us-east-1")
    assert values["aws-efa-k8s-device-plugin"] == {"devicePlugin": {"enabled": False}}


def test_no_gpu_plugin_on_cpu_only_groups():
    values = dependencies_chart_values(["ml.m5.12xlarge", "ml.c5.18xlarge"], "eu-west-1")
    assert values["nvidia-device-plugin"] == {"devicePlugin": {"enabled": False}}
    assert values["neuron-device-plugin"] == {"devicePlugin": {"enabled": False}}
    assert values["global"] == {"region": "eu-west-1"}


def test_the_gpu_plugin_runs_on_the_clusters_gpu_types_only():
    values = dependencies_chart_values(
        ["ml.p5.48xlarge", "ml.m5.12xlarge", "ml.p5.48xlarge"], "us-east-1"
    )
    assert values["nvidia-device-plugin"]["devicePlugin"] == {"enabled": True}
    assert _affinity_types(values) == ["ml.p5.48xlarge"]
    assert values["neuron-device-plugin"] == {"devicePlugin": {"enabled": False}}


def test_the_neuron_plugin_with_trainium():
    values = dependencies_chart_values(["ml.trn1.32xlarge"], "us-east-1")
    assert values["neuron-device-plugin"] == {"devicePlugin": {"enabled": True}}
    assert values["nvidia-device-plugin"] == {"devicePlugin": {"enabled": False}}
    assert values["aws-efa-k8s-device-plugin"]["supportedInstanceLabels"]["values"] == [
        "ml.trn1.32xlarge"
    ]


def test_what_the_stack_installs_otherwise_is_off():
    values = dependencies_chart_values(["ml.p5.48xlarge"], "us-east-1")
    assert values["cert-manager"] == {"enabled": False}
    assert values["inferenceOperators"] == {"enabled": False}
    assert values["trainingOperators"] == {"enabled": True}


def test_unknown_types_are_judged_by_their_family():
    assert accelerator_of("ml.p99.48xlarge") == "nvidia-gpu"
    assert accelerator_of("ml.trn9.48xlarge") == "trainium"
    assert accelerator_of("ml.inf9.xlarge") == "inferentia"
    assert accelerator_of("ml.m99.large") == "none"
    assert not has_efa("ml.p99.48xlarge")


def test_a_claim_per_namespace_each_bound_to_its_own_volume():
    manifests = fsx_volume_manifests(
        ["default", "hyperpod-ns-research"],
        file_system_id="fs-0123",
        dns_name="fs-0123.fsx.us-east-1.amazonaws.com",
        mount_name="abcdefgh",
        capacity_gib=1200,
    )
    volumes = [m for m in manifests if m["kind"] == "PersistentVolume"]
    claims = [m for m in manifests if m["kind"] == "PersistentVolumeClaim"]
    assert [v["metadata"]["name"] for v in volumes] == ["fsx-default", "fsx-hyperpod-ns-research"]
    assert [(c["metadata"]["namespace"], c["metadata"]["name"]) for c in claims] == [
        ("default", FSX_CLAIM_NAME),
        ("hyperpod-ns-research", FSX_CLAIM_NAME),
    ]
    csi = volumes[0]["spec"]["csi"]
    assert csi == {
        "driver": "fsx.csi.aws.com",
        "volumeHandle": "fs-0123",
        "volumeAttributes": {
            "dnsname": "fs-0123.fsx.us-east-1.amazonaws.com",
            "mountname": "abcdefgh",
        },
    }
    assert volumes[0]["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert claims[1]["spec"]["volumeName"] == "fsx-hyperpod-ns-research"
    assert claims[0]["spec"]["resources"]["requests"]["storage"] == "1200Gi"


def test_a_namespace_must_be_a_kubernetes_name():
    problems = Problems("eks")
    check_namespace(problems, "fsx_volume_namespace", "-bad")
    check_namespace(problems, "fsx_volume_namespace", "team-a")
    check_namespace(problems, "fsx_volume_namespace", "x" * 64)
    message = "; ".join(problems.messages)
    assert "fsx_volume_namespace='-bad': a Kubernetes namespace is 1-63" in message
    assert "team-a" not in message
    assert "x" * 64 in message

"""The architecture diagrams (scripts/docs_diagrams.py) show what the synthesized templates
hold: checked on the Graphviz source, so no Graphviz is needed here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import aws_cdk as cdk
import pytest

from fm_platform import (
    ClusterNetwork,
    ClusterNetworkProps,
    HyperPodCluster,
    HyperPodClusterProps,
    InstanceGroup,
    LifecycleScripts,
    LifecycleScriptsProps,
    NodeRole,
    SharedFileSystem,
    SharedFileSystemProps,
    provisioning_parameters,
)
from fm_platform.config import AppConfig, load_config
from fm_platform.stacks.environment import DefaultStacks, add_default_stacks
from fm_platform.stacks.training_eks import TrainingEksStack
from tests.conftest import CloudAssembly
from tests.support import ROOT, fixture_config, new_app

sys.path.insert(0, str(ROOT / "scripts"))

from docs_assembly import Assembly  # noqa: E402
from docs_diagrams import Picture  # noqa: E402


def _pictures(directory: Path) -> dict[str, str]:
    assembly = Assembly.load(directory)
    pictures = [Picture(assembly, stacks) for stacks in assembly.groups()]
    return {picture.name: picture.dot() for picture in pictures}


@pytest.fixture(scope="module")
def default_pictures(default_assembly: CloudAssembly) -> dict[str, str]:
    return _pictures(default_assembly.directory)


def test_one_picture_per_default_stack(default_pictures: dict[str, str]) -> None:
    assert sorted(default_pictures) == ["inference", "training"]


def test_training_picture_shows_the_network_storage_and_groups(
    default_pictures: dict[str, str],
) -> None:
    dot = default_pictures["training"]
    config = AppConfig().training
    assert f"Availability zone {config.availability_zone_id} (AZ ID)" in dot
    assert "private subnet 10.0.0.0/17" in dot
    assert "public subnet 10.0.128.0/24" in dot
    assert "S3 gateway endpoint" in dot
    assert "FSx for Lustre" in dot and "PERSISTENT_2" in dot
    assert re.search(r"S3 bucket (FmpTrainingData: )?LifecycleScripts/Bucket", dot)
    # The security group's self-referencing rules are a loop on its own node.
    loop = re.search(r'("[^"]+") -> \1 \[[^\]]*label="self-referencing rules\\n([^"]*)"', dot)
    assert loop is not None and "in: all traffic" in loop.group(2)
    assert "out: all traffic" in loop.group(2)
    for group in config.instance_groups:
        assert f"instance group {group.name}" in dot
        assert f"{group.instance_type} x {group.instance_count}" in dot
    assert "lifecycle scripts (on_create)" in dot
    assert "mounts /fsx" in dot


def test_inference_picture_shows_endpoints_components_and_scaling(
    default_pictures: dict[str, str],
) -> None:
    dot = default_pictures["inference"]
    inference = fixture_config().inference
    endpoints = [
        *inference.ic_endpoints,
        *inference.single_model_endpoints,
        *inference.multi_model_endpoints,
        *inference.async_endpoints,
    ]
    for spec in endpoints:
        assert re.search(rf"endpoint [A-Za-z]*-?{re.escape(spec.name)}<", dot), spec.name
    for spec in inference.ic_endpoints:
        for model in spec.models:
            # Components are named <stack>-<model>-<replacement key> by default.
            assert f"component FmpInference-{model.model_name}-" in dot
    assert dot.count("autoscaling ") == (
        sum(len(spec.models) for spec in inference.ic_endpoints)
        + len(inference.single_model_endpoints)
        + len(inference.multi_model_endpoints)
        + len(inference.async_endpoints)
    )
    assert "step +1 when NoCapacityInvocationFailures &gt;= 1" in dot


def test_inference_picture_shows_the_asynchronous_endpoint(
    default_pictures: dict[str, str],
) -> None:
    dot = default_pictures["inference"]
    [spec] = fixture_config().inference.async_endpoints
    assert spec.scaling is not None
    assert "asynchronous: requests queued, bodies and results in S3" in dot
    assert f"{spec.max_concurrent_invocations_per_instance} concurrent requests per instance" in dot
    assert f"results to /{spec.prefix}/outputs" in dot
    assert f"failures to /{spec.prefix}/failures" in dot
    assert f"autoscaling 0-{spec.scaling.max_instances} instances:" in dot
    target = spec.scaling.target_backlog_per_instance
    assert f"target {target:g} approximate backlog size per instance" in dot
    assert "step +1 when HasBacklogWithoutCapacity &gt;= 1" in dot
    # The variant's edges: to the bucket its requests and results live in, to both topics.
    variant = re.search(r'("[^"]*AsyncEndpoint[^"]*EndpointConfig[^"]*\.AllTraffic")', dot)
    assert variant is not None
    for label in (
        "requests in, results and failures out",
        "success notification",
        "error notification",
    ):
        assert re.search(rf'{re.escape(variant.group(1))} -> "[^"]+" \[[^\]]*label="{label}"', dot)
    assert "SNS topic: Asynchronous inference requests that succeeded" in dot
    assert "SNS topic: Asynchronous inference requests that failed" in dot


def test_stacks_that_share_resources_share_a_picture(tmp_path: Path) -> None:
    """A stateful stack (network, FSx, scripts) and a cluster stack that imports from it
    are drawn together, with the cross-stack references followed."""
    app = new_app(outdir=str(tmp_path))
    data = cdk.Stack(app, "Data")
    network = ClusterNetwork(data, "Network", ClusterNetworkProps())
    file_system = SharedFileSystem(
        data,
        "FileSystem",
        SharedFileSystemProps(
            vpc=network.vpc, subnet=network.subnet, security_group=network.security_group
        ),
    )
    groups = (
        InstanceGroup(
            name="head", role=NodeRole.CONTROLLER, instance_type="ml.m5.xlarge", instance_count=1
        ),
        InstanceGroup(
            name="gpus", role=NodeRole.WORKER, instance_type="ml.g5.8xlarge", instance_count=2
        ),
    )
    lifecycle = LifecycleScripts(
        data,
        "LifecycleScripts",
        LifecycleScriptsProps(
            provisioning_parameters=provisioning_parameters(
                groups, fsx_dns_name=file_system.dns_name, fsx_mount_name=file_system.mount_name
            )
        ),
    )
    cluster_stack = cdk.Stack(app, "Cluster")
    HyperPodCluster(
        cluster_stack,
        "Cluster",
        HyperPodClusterProps(
            instance_groups=groups,
            subnet=network.subnet,
            security_group=network.security_group,
            lifecycle=lifecycle,
            file_system=file_system,
        ),
    )
    app.synth()
    pictures = _pictures(tmp_path)
    assert list(pictures) == ["training"]
    dot = pictures["training"]
    assert "Stacks Data + Cluster" in dot or "Stacks Cluster + Data" in dot
    assert "instance group gpus" in dot and "ml.g5.8xlarge x 2" in dot
    # The cluster (in Cluster) sits in the subnet and reads the bucket (both in Data).
    subnet = dot.index("private subnet")
    assert subnet < dot.index("instance group gpus") < dot.index("S3 bucket")
    assert "lifecycle scripts (on_create)" in dot
    assert '"Cluster.' in dot and '"Data.' in dot


def test_managed_training_picture_shows_what_hyperpod_does(tmp_path: Path) -> None:
    """Managed Slurm mode: HyperPod's mounts, the accounting database, the alarm that rolls
    scheduled updates back, and each group's Slurm node type, partition and options."""
    from fm_platform.app import build_app
    from fm_platform.config import load_config
    from tests.test_training_stack import EVERY_NEW_KEY

    app = new_app(outdir=str(tmp_path))
    build_app(app, load_config({**EVERY_NEW_KEY, "deploy_inference": False}))
    app.synth()
    dot = _pictures(tmp_path)["training"]
    assert "Slurm configured by HyperPod (merge mode)" in dot
    assert "continuous node provisioning" in dot
    assert "accounting in an external database" in dot
    assert "HyperPod mounts FSx for Lustre at /fsx" in dot
    assert "HyperPod mounts FSx for OpenZFS at /home" in dot
    assert "Slurm Compute, partition train" in dot
    assert "ml.p5.48xlarge x 4 (in service from 2)" in dot
    assert "AMI updates cron(0 3 ? * SUN *), rolled back on alarms" in dot
    assert "capacity: OnDemand" in dot and "image ami-0123456789abcdef0" in dot
    assert "FSx for OpenZFS (homes)" in dot and "Slurm accounting database" in dot
    assert "Serverless v2, 0.5-2 ACU" in dot
    assert "lifecycle scripts (on_init_complete)" in dot
    for label in ("HyperPod mounts /fsx", "HyperPod mounts /home", "slurmdbd (accounting)"):
        assert f'label="{label}"' in dot, label
    assert 'label="AMI updates roll back on"' in dot
    assert "unhealthy nodes" in dot


def _eks_app(tmp_path: Path) -> tuple[cdk.App, DefaultStacks]:
    """The EKS example's stacks (without the compliance packs: a test adds resources)."""
    app = new_app(outdir=str(tmp_path))
    config = json.loads((ROOT / "examples" / "training-eks.json").read_text())
    return app, add_default_stacks(app, load_config(config))


def test_eks_training_picture_shows_the_control_plane_and_the_order(tmp_path: Path) -> None:
    """The EKS example: the control plane, each add-on and access entry, task governance,
    and the creation order as arrows (transitively reduced)."""
    app, _ = _eks_app(tmp_path)
    app.synth()
    pictures = _pictures(tmp_path)
    assert list(pictures) == ["training-eks"]
    dot = pictures["training-eks"]
    assert "EKS control plane" in dot and "Kubernetes 1.32, authentication API" in dot
    for add_on in (
        "vpc-cni",
        "coredns",
        "cert-manager",
        "amazon-sagemaker-hyperpod-training-operator",
        "amazon-sagemaker-hyperpod-inference",
        "aws-mountpoint-s3-csi-driver",
        "metrics-server",
    ):
        assert f"add-on {add_on}<" in dot, add_on
    assert "AmazonEKSEditPolicy in hyperpod-ns-research" in dot
    assert "AmazonEKSClusterAdminPolicy in cluster" in dot
    assert "team applied quota" in dot and "task governance policy" in dot
    assert "IAM OIDC provider" in dot and "Prometheus workspace" in dot
    # cert-manager comes before the inference operator: one arrow, labelled "then".
    ids = dict(re.findall(r'("[^"]+") \[label=<<table[^>]*><tr><td><font[^>]*><b>([^<]+)<', dot))
    by_title = {title: node for node, title in ids.items()}
    cert = by_title["add-on cert-manager"]
    operator = by_title["add-on amazon-sagemaker-hyperpod-inference"]
    assert re.search(rf'{re.escape(cert)} -> {re.escape(operator)} \[[^\]]*label="then"', dot)
    # Reduced: the operator's arrow from the EKS control plane is implied, so not drawn.
    control = by_title["EKS control plane"]
    assert not re.search(rf"{re.escape(control)} -> {re.escape(operator)} ", dot)
    assert "HyperPod cluster" in dot and "\nEKS<" not in dot


def test_eks_picture_draws_resources_of_any_type_that_belong_to_the_cluster(
    tmp_path: Path,
) -> None:
    """A custom resource naming the EKS cluster and a build project the HyperPod cluster
    waits for are drawn by type and path, in order, with no code for their types."""
    app, stacks = _eks_app(tmp_path)
    training = stacks.training
    assert isinstance(training, TrainingEksStack) and training.cluster is not None
    chart = cdk.CfnResource(
        training,
        "Chart",
        type="Custom::HelmChart",
        properties={
            "ServiceToken": "arn:aws:lambda:us-east-1:111122223333:function:x",
            "ClusterName": training.control_plane.cluster_name,
        },
    )
    build = cdk.CfnResource(
        training,
        "Build",
        type="AWS::CodeBuild::Project",
        properties={
            "Artifacts": {"Type": "NO_ARTIFACTS"},
            "Environment": {
                "ComputeType": "BUILD_GENERAL1_SMALL",
                "Image": "aws/codebuild/standard:7.0",
                "Type": "LINUX_CONTAINER",
            },
            "ServiceRole": "arn:aws:iam::111122223333:role/build",
            "Source": {"Type": "NO_SOURCE", "BuildSpec": "version: 0.2"},
        },
    )
    chart.add_resource_dependency(build)
    training.cluster.cluster.add_resource_dependency(chart)
    app.synth()
    dot = _pictures(tmp_path)["training-eks"]
    assert "custom resource HelmChart" in dot and "CodeBuild Project" in dot
    ids = dict(re.findall(r'("[^"]+") \[label=<<table[^>]*><tr><td><font[^>]*><b>([^<]+)<', dot))
    by_title = {title: node for node, title in ids.items()}
    chart_node = by_title["custom resource HelmChart"]
    assert re.search(
        rf"{re.escape(by_title['CodeBuild Project'])} -> {re.escape(chart_node)} \[", dot
    )
    # The HyperPod cluster (its first group's node, clipped to the cluster box) after it.
    assert re.search(rf'{re.escape(chart_node)} -> "[^"]+group0" \[[^\]]*lhead="cluster_', dot)
    assert "Not drawn:" in dot and "CodeBuild" not in dot.split("Not drawn:")[1].split("<")[0]

"""A HyperPod cluster, created or imported by name, ARN or attributes, implements
:class:`IHyperPodCluster`: each attribute holds what its name says (the name, the ARN,
or whichever of the two is known for the cluster APIs)."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from fm_platform.constructs.training.cluster_interface import (
    HyperPodClusterAttributes,
    IHyperPodCluster,
)
from fm_platform.constructs.training.hyperpod import HyperPodCluster, HyperPodClusterProps
from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
from tests.support import new_app
from tests.test_hyperpod import GROUPS, FakeFileSystem, FakeLifecycle

ARN = "arn:aws:sagemaker:eu-west-1:210987654321:cluster/abcdef012345"
ENV = cdk.Environment(account="123456789012", region="us-east-1")


def _cluster(stack: cdk.Stack, name: str | None = None) -> HyperPodCluster:
    network = ClusterNetwork(stack, "Network", ClusterNetworkProps())
    return HyperPodCluster(
        stack,
        "Cluster",
        HyperPodClusterProps(
            instance_groups=GROUPS,
            subnet=network.subnet,
            security_group=network.security_group,
            lifecycle=FakeLifecycle(stack, "Lifecycle"),
            file_system=FakeFileSystem(stack, "FileSystem"),
            cluster_name=name,
        ),
    )


def test_a_created_cluster_without_a_name_names_none_and_is_called_by_its_arn():
    stack = cdk.Stack(new_app(), "Training", env=ENV)
    created = _cluster(stack)
    cluster: IHyperPodCluster = created
    assert cluster.cluster_name is None
    arn = {"Fn::GetAtt": [stack.get_logical_id(created.cluster), "ClusterArn"]}
    assert stack.resolve(cluster.cluster_arn) == arn
    assert stack.resolve(cluster.cluster_name_or_arn) == arn
    assert stack.resolve(cluster.cluster_id) == {"Fn::Select": [1, {"Fn::Split": ["/", arn]}]}


def test_a_created_cluster_with_a_name_is_called_by_it():
    stack = cdk.Stack(new_app(), "Training", env=ENV)
    cluster = _cluster(stack, "research")
    assert (cluster.cluster_name, cluster.cluster_name_or_arn) == ("research", "research")
    assert isinstance(cluster, cdk.Resource)
    cluster.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    resource = Template.from_stack(stack).to_json()["Resources"][
        stack.get_logical_id(cluster.cluster)
    ]
    assert resource["DeletionPolicy"] == "Retain"


def test_a_cluster_imported_by_name_has_no_arn():
    stack = cdk.Stack(new_app(), "Consumer", env=ENV)
    cluster = HyperPodCluster.from_cluster_name(stack, "ByName", "research")
    assert (cluster.cluster_name, cluster.cluster_arn, cluster.cluster_id) == (
        "research",
        None,
        None,
    )
    assert cluster.cluster_name_or_arn == "research"


def test_a_cluster_imported_by_arn_has_no_name_and_the_arns_environment():
    stack = cdk.Stack(new_app(), "Consumer", env=ENV)
    cluster = HyperPodCluster.from_cluster_arn(stack, "ByArn", ARN)
    assert (cluster.cluster_name, cluster.cluster_arn) == (None, ARN)
    assert cluster.cluster_name_or_arn == ARN
    assert stack.resolve(cluster.cluster_id) == "abcdef012345"
    assert isinstance(cluster, cdk.Resource)
    assert (cluster.env.account, cluster.env.region) == ("210987654321", "eu-west-1")


def test_a_cluster_imported_by_attributes_is_called_by_its_name():
    stack = cdk.Stack(new_app(), "Consumer", env=ENV)
    cluster = HyperPodCluster.from_cluster_attributes(
        stack, "Both", HyperPodClusterAttributes(cluster_name="research", cluster_arn=ARN)
    )
    assert (cluster.cluster_name, cluster.cluster_arn) == ("research", ARN)
    assert cluster.cluster_name_or_arn == "research"


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        (HyperPodClusterAttributes(), "cluster_name=None: give the cluster's name or its ARN"),
        (HyperPodClusterAttributes(cluster_name="bad_name"), "cluster_name='bad_name'"),
        (
            HyperPodClusterAttributes(cluster_arn="arn:aws:sagemaker:us-east-1:1:cluster/x"),
            "cluster_arn='arn:aws:sagemaker:us-east-1:1:cluster/x'",
        ),
    ],
)
def test_imported_attributes_are_checked(attributes, expected):
    stack = cdk.Stack(new_app(), "Consumer", env=ENV)
    with pytest.raises(ValueError) as raised:
        HyperPodCluster.from_cluster_attributes(stack, "Bad", attributes)
    assert expected in str(raised.value)
    assert "HyperPodClusterAttributes" in str(raised.value)


def test_imported_attributes_report_every_problem_at_once():
    stack = cdk.Stack(new_app(), "Consumer", env=ENV)
    bad = HyperPodClusterAttributes(cluster_name="bad_name", cluster_arn="not-an-arn")
    with pytest.raises(ValueError) as raised:
        HyperPodCluster.from_cluster_attributes(stack, "Bad", bad)
    assert "cluster_name='bad_name'" in str(raised.value)
    assert "cluster_arn='not-an-arn'" in str(raised.value)

"""The EKS-orchestrated HyperPod cluster and its EKS control plane are CDK ``Resource``s,
and the HyperPod cluster answers what the Slurm one does (``IHyperPodCluster``)."""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk.assertions import Template

from fm_platform.app import build_app
from fm_platform.config import load_config
from fm_platform.stacks.training_eks import TrainingEksStack
from tests.conftest import CLI_CONTEXT
from tests.support import ROOT, new_app


def test_removal_policies_reach_the_clusters_and_the_hyperpod_cluster_is_named_by_its_arn():
    app = new_app(context=dict(CLI_CONTEXT))
    build_app(app, load_config(json.loads((ROOT / "examples" / "training-eks.json").read_text())))
    (stack,) = [s for s in app.node.children if isinstance(s, TrainingEksStack)]
    cluster, control_plane = stack.cluster, stack.control_plane
    assert isinstance(cluster, cdk.Resource) and isinstance(control_plane, cdk.Resource)
    assert cluster.cluster_name is None
    assert stack.resolve(cluster.cluster_name_or_arn) == stack.resolve(
        cluster.cluster.attr_cluster_arn
    )
    cluster.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    control_plane.apply_removal_policy(cdk.RemovalPolicy.RETAIN)
    resources = Template.from_stack(stack).to_json()["Resources"]
    for cfn in (cluster.cluster, control_plane.cluster):
        assert resources[stack.resolve(cfn.logical_id)]["DeletionPolicy"] == "Retain"

"""make diff on an EKS-orchestrated cluster: a change that replaces the HyperPod cluster but
keeps its EKS cluster is refused with the steps (HyperPod maps one EKS cluster to one
HyperPod cluster, and an EKS cluster keeps its VPC)."""

from __future__ import annotations

import json
import sys
from functools import cache

from fm_platform.config import load_config
from fm_platform.stacks.training_eks import TrainingEksStack
from tests.support import ROOT, new_app

sys.path.insert(0, str(ROOT / "scripts"))

from change_impact import change_impacts, cluster_impacts  # noqa: E402

CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True}


@cache
def _templates(text: str) -> dict[str, dict]:
    config = json.loads((ROOT / "examples" / "training-eks.json").read_text())
    config["training"].update(json.loads(text))
    app = new_app(context=CLI_CONTEXT)
    TrainingEksStack(app, "FmpTraining", config=load_config(config).training)
    return {stack.stack_name: stack.template for stack in app.synth().stacks}


def training(**keys: object) -> dict[str, dict]:
    return _templates(json.dumps(keys, sort_keys=True))


def test_a_new_subnet_under_an_eks_cluster_is_refused_with_the_steps():
    impacts = list(change_impacts(training(), training(vpc_cidr="10.1.0.0/16")))
    (cluster,) = [i for i in impacts if "CloudFormation replaces the cluster" in i.what]
    assert cluster.refused
    assert "gpu-p5: 2 x ml.p5.48xlarge" in cluster.what
    assert "terminated with its jobs and pods" in cluster.what
    assert "on the same EKS cluster" in cluster.what
    assert "1-to-1 mapping" in cluster.source
    assert "make destroy STACKS=FmpTraining" in cluster.steps


def test_an_unchanged_eks_cluster_reports_no_replacement():
    impacts = list(change_impacts(training(), training()))
    assert not [i for i in impacts if i.refused]


def test_a_new_eks_cluster_takes_the_new_hyperpod_cluster_without_a_refusal():
    def cluster(eks: str) -> dict:
        return {
            "Orchestrator": {"Eks": {"ClusterArn": {"Fn::GetAtt": [eks, "Arn"]}}},
            "InstanceGroups": [
                {"InstanceGroupName": "gpu", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2}
            ],
        }

    (impact,) = cluster_impacts("FmpTraining", "Cluster", cluster("EksA"), cluster("EksB"))
    assert "CloudFormation replaces the cluster" in impact.what
    assert not impact.refused

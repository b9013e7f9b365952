"""training.orchestrator eks, operated like the Slurm cluster: the inference operator add-on
and what it needs, team members' namespace access, and the cluster's events, alarm and
dashboard; built from examples/training-eks.json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fm_platform.config import load_config
from fm_platform.constructs.training.eks_inference import (
    GATED_MODEL_POLICY,
    INFERENCE_ADDON,
    INFERENCE_POLICY,
)
from fm_platform.rules.eks import INFERENCE_ROLE_PREFIX
from fm_platform.rules.problems import ValidationError
from tests.support import dependencies
from tests.test_training_eks import _addon, _by_path, _example, _one, _synth


@pytest.fixture(scope="module")
def resources() -> dict[str, dict]:
    """The example's cluster stack (its findings are test_training_eks.py's)."""
    return _synth(_example())[0]["FmpTraining"]["Resources"]


def _role(resources: dict[str, dict], name: str) -> dict[str, Any]:
    return resources[_by_path(resources, "AWS::IAM::Role", f"/InferenceOperator/{name}/Resource")]


def _trust(role: dict[str, Any]) -> str:
    document = role["Properties"]["AssumeRolePolicyDocument"]
    text: str = document["Fn::Sub"][0]
    return text


def test_the_inference_operator_comes_after_the_cluster_and_its_prerequisites(resources):
    cluster, _ = _one(resources, "AWS::SageMaker::Cluster")
    operator = _addon(resources, INFERENCE_ADDON)
    before = dependencies(resources, operator)
    for name in (
        "cert-manager",
        "aws-fsx-csi-driver",
        "aws-mountpoint-s3-csi-driver",
        "metrics-server",
    ):
        assert _addon(resources, name) in before, name
    # The cluster by reference (its ARN in the configuration), the others by DependsOn.
    assert cluster in before
    for name in ("aws-mountpoint-s3-csi-driver", "metrics-server"):
        assert cluster in resources[_addon(resources, name)]["DependsOn"], name
    policies = [
        k
        for k, v in resources.items()
        if v["Type"] == "AWS::IAM::ManagedPolicy" and "InferenceOperator" in k
    ]
    assert len(policies) == 4
    for policy in policies:
        assert policy in before, policy
    assert _by_path(
        resources, "AWS::S3::BucketPolicy", "TlsCertificates/Bucket/Policy/Resource"
    ) in (before)
    # The cluster does not wait for any of it.
    assert operator not in dependencies(resources, cluster)


def test_the_inference_operator_is_configured_with_its_roles_bucket_and_cluster(resources):
    operator = resources[_addon(resources, INFERENCE_ADDON)]["Properties"]
    parts = operator["ConfigurationValues"]["Fn::Join"][1]
    text = "".join(p if isinstance(p, str) else json.dumps(p) for p in parts)
    cluster, _ = _one(resources, "AWS::SageMaker::Cluster")
    for key in ("executionRoleArn", "tlsCertificateS3Bucket", "hyperpodClusterArn"):
        assert f'"{key}"' in text, key
    assert cluster in text
    assert '"alb":{"enabled":true,"serviceAccount":{"create":true' in text
    assert '"keda":{"enabled":true,"auth":{"aws":{"irsa":{"enabled":true' in text
    execution = _role(resources, "ExecutionRole")["Properties"]
    name = execution["RoleName"]["Fn::Join"][1]
    assert name[0].startswith(f"{INFERENCE_ROLE_PREFIX}-") and name[1] == {"Ref": "AWS::Region"}
    assert len(name[0]) + len("ap-southeast-4") <= 64
    assert INFERENCE_POLICY in json.dumps(execution["ManagedPolicyArns"])
    gated = _role(resources, "GatedModelRole")["Properties"]
    assert GATED_MODEL_POLICY in json.dumps(gated["ManagedPolicyArns"])


@pytest.mark.parametrize(
    ("role", "subject", "operator"),
    [
        (
            "ExecutionRole",
            "system:serviceaccount:hyperpod-inference-system:hyperpod-inference-controller-manager",
            "StringEquals",
        ),
        (
            "LoadBalancerControllerRole",
            "system:serviceaccount:hyperpod-inference-system:aws-load-balancer-controller",
            "StringEquals",
        ),
        (
            "KedaRole",
            "system:serviceaccount:hyperpod-inference-system:keda-operator",
            "StringEquals",
        ),
        ("S3CsiDriverRole", "system:serviceaccount:kube-system:s3-csi-driver-sa", "StringEquals"),
        (
            "GatedModelRole",
            "system:serviceaccount:*:hyperpod-inference-service-account*",
            "StringLike",
        ),
    ],
)
def test_irsa_roles_trust_one_service_account_of_this_cluster(resources, role, subject, operator):
    body = _role(resources, role)
    trust = json.loads(_trust(body))
    web = trust["Statement"][0]
    assert web["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert web["Principal"] == {"Federated": "${Provider}"}
    assert web["Condition"] == {
        operator: {"${Issuer}:sub": subject, "${Issuer}:aud": "sts.amazonaws.com"}
    }
    variables = body["Properties"]["AssumeRolePolicyDocument"]["Fn::Sub"][1]
    provider, _ = _one(resources, "AWS::IAM::OIDCProvider")
    assert variables["Provider"] == {"Fn::GetAtt": [provider, "Arn"]}
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    assert variables["Issuer"] == {
        "Fn::Select": [
            1,
            {"Fn::Split": ["//", {"Fn::GetAtt": [eks_cluster, "OpenIdConnectIssuerUrl"]}]},
        ]
    }


def test_the_oidc_provider_is_the_eks_clusters_issuer(resources):
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    _, provider = _one(resources, "AWS::IAM::OIDCProvider")
    assert provider["Properties"] == {
        "ClientIdList": ["sts.amazonaws.com"],
        "Url": {"Fn::GetAtt": [eks_cluster, "OpenIdConnectIssuerUrl"]},
    }


def test_the_tls_bucket_is_a_secure_bucket_with_a_pinned_id(resources):
    bucket = resources["ClusterInferenceOperatorTlsCertificatesBucketF593BC52"]
    assert bucket["Type"] == "AWS::S3::Bucket"
    assert bucket["DeletionPolicy"] == "Retain"
    encryption = bucket["Properties"]["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption[0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert "LoggingConfiguration" in bucket["Properties"]


def test_team_members_edit_their_teams_namespace_only(resources):
    entries = {
        v["Properties"]["PrincipalArn"]: (k, v)
        for k, v in resources.items()
        if v["Type"] == "AWS::EKS::AccessEntry" and isinstance(v["Properties"]["PrincipalArn"], str)
    }
    quota = {
        v["Properties"]["ComputeQuotaTarget"]["TeamName"]: k
        for k, v in resources.items()
        if v["Type"] == "AWS::SageMaker::ComputeQuota"
    }
    for principal, team in (
        ("arn:aws:iam::111122223333:role/ResearchScientists", "research"),
        ("arn:aws:iam::111122223333:role/AppliedScientists", "applied"),
        ("arn:aws:iam::111122223333:user/ci-bot", "applied"),
    ):
        key, entry = entries[principal]
        (policy,) = entry["Properties"]["AccessPolicies"]
        assert policy["AccessScope"] == {"Type": "namespace", "Namespaces": [f"hyperpod-ns-{team}"]}
        assert "AmazonEKSEditPolicy" in json.dumps(policy["PolicyArn"])
        assert entry["DependsOn"] == [quota[team]]


def test_events_and_unhealthy_nodes_go_to_the_topic(resources):
    cluster, _ = _one(resources, "AWS::SageMaker::Cluster")
    rules = [v["Properties"] for v in resources.values() if v["Type"] == "AWS::Events::Rule"]
    assert len(rules) == 2
    for rule in rules:
        pattern = json.dumps(rule["EventPattern"])
        assert json.dumps({"Fn::GetAtt": [cluster, "ClusterArn"]}) in pattern
        (target,) = rule["Targets"]
        assert "NotificationsTopic" in json.dumps(target["Arn"])
    (alarm,) = [
        v["Properties"] for v in resources.values() if v["Type"] == "AWS::CloudWatch::Alarm"
    ]
    assert alarm["Namespace"] == "AWS/Events" and alarm["MetricName"] == "TriggeredRules"
    # No lifecycle scripts: no function reading their log (the Helm releases' are the only).
    functions = [k for k, v in resources.items() if v["Type"] == "AWS::Lambda::Function"]
    assert functions and all(k.startswith("Helm") for k in functions)


def test_the_dashboard_draws_the_eks_control_plane(resources):
    _, dashboard = _one(resources, "AWS::CloudWatch::Dashboard")
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    for metric in (
        "apiserver_request_total_5XX",
        "apiserver_request_duration_seconds_GET_P99",
        "scheduler_pending_pods",
        "TriggeredRules",
        "FreeDataStorageCapacity",
    ):
        assert metric in body, metric
    assert json.dumps({"Ref": eks_cluster}) in body
    assert "ml.p5.48xlarge" in body


def test_the_inference_operator_is_off_by_default():
    config = _example()
    config["training"]["eks"]["add_ons"].pop("inference_operator")
    templates, findings = _synth(config)
    kinds = {r["Type"] for r in templates["FmpTraining"]["Resources"].values()}
    assert "AWS::IAM::OIDCProvider" not in kinds and "AWS::S3::Bucket" not in kinds
    assert findings == []


def test_every_access_and_add_on_problem_is_reported_at_once():
    config = _example()
    eks = config["training"]["eks"]
    eks["add_ons"]["fsx_csi_driver"] = False
    eks["teams"][0]["members"] = ["ResearchScientists", eks["administrators"][0]]
    eks["teams"][1]["members"].append("arn:aws:iam::111122223333:role/ResearchScientists")
    eks["teams"][0]["members"].append("arn:aws:iam::111122223333:role/ResearchScientists")
    with pytest.raises(ValidationError) as error:
        load_config(config)
    message = str(error.value)
    for expected in (
        "eks.add_ons.fsx_csi_driver=False: the inference operator add-on needs the FSx CSI",
        "eks.teams[0].members[0]='ResearchScientists': must be an IAM role or user ARN",
        "eks.teams[0].members[1]='arn:aws:iam::111122223333:role/Admin': already listed as "
        "administrators[0]",
        "eks.teams[1].members[2]='arn:aws:iam::111122223333:role/ResearchScientists': already "
        "listed as teams[0].members[2]",
    ):
        assert expected in message, expected


def test_the_load_balancer_controller_finds_internal_subnets_in_two_zones():
    templates, _ = _synth(_example())
    eks_subnets = {
        ref["Fn::ImportValue"]
        for ref in _one(templates["FmpTraining"]["Resources"], "AWS::EKS::Cluster")[1][
            "Properties"
        ]["ResourcesVpcConfig"]["SubnetIds"]
    }
    data = templates["FmpTrainingData"]
    tagged = {
        key
        for key, v in data["Resources"].items()
        if v["Type"] == "AWS::EC2::Subnet"
        and {"Key": "kubernetes.io/role/internal-elb", "Value": "1"} in v["Properties"]["Tags"]
    }
    exported = {
        output["Export"]["Name"]
        for output in data["Outputs"].values()
        if output["Value"].get("Ref") in tagged
    }
    assert len(tagged) == 3 and exported == eks_subnets

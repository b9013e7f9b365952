"""training.orchestrator eks: the EKS control plane, the HyperPod cluster orchestrated by it,
the add-ons after it and task governance; built from examples/training-eks.json."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cfnlint.api import ManualArgs, lint
from syrupy.extensions.json import JSONSnapshotExtension

from fm_platform.app import build_app
from fm_platform.config import load_config
from fm_platform.constructs.training.eks_options import DEFAULT_DEPENDENCIES_CHART_COMMIT
from fm_platform.rules.problems import ValidationError
from tests.conftest import CDK_CLI, CLI_CONTEXT, synth_env
from tests.support import ROOT, dependencies, nag_findings, new_app, normalized

sys.path.insert(0, str(ROOT / "scripts"))

from docs_assembly import Assembly  # noqa: E402
from leftovers import Deployed, Leftovers  # noqa: E402

EXAMPLE = ROOT / "examples" / "training-eks.json"


def _example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


def _synth(config: dict[str, Any]) -> tuple[dict[str, dict], list[str]]:
    """The templates and the open findings (compliance packs, synth warnings) of the app
    built from ``config``."""
    app = new_app(context=dict(CLI_CONTEXT))
    build_app(app, load_config(config))
    findings = nag_findings(app)
    assembly = app.synth()
    return {s.stack_name: s.template for s in assembly.stacks}, findings


@pytest.fixture(scope="module")
def example() -> tuple[dict[str, dict], list[str]]:
    return _synth(_example())


@pytest.fixture(scope="module")
def resources(example) -> dict[str, dict]:
    return example[0]["FmpTraining"]["Resources"]


def _one(resources: dict[str, dict], kind: str) -> tuple[str, dict]:
    (found,) = [(k, v) for k, v in resources.items() if v["Type"] == kind]
    return found


def _by_path(resources: dict[str, dict], kind: str, path_end: str) -> str:
    (found,) = [
        k
        for k, v in resources.items()
        if v["Type"] == kind and v.get("Metadata", {}).get("aws:cdk:path", "").endswith(path_end)
    ]
    return found


def _addon(resources: dict[str, dict], name: str) -> str:
    (found,) = [
        k
        for k, v in resources.items()
        if v["Type"] == "AWS::EKS::Addon" and v["Properties"]["AddonName"] == name
    ]
    return found


@pytest.mark.parametrize("stack", ["FmpTrainingData", "FmpTraining"])
def test_template_snapshot(example, snapshot, stack):
    assert normalized(example[0][stack]) == snapshot.use_extension(JSONSnapshotExtension)


def test_the_example_is_nag_clean_without_warnings(example):
    _, findings = example
    assert findings == []


def test_the_example_is_cfn_lint_clean(example):
    templates = example[0]
    for template in templates.values():
        matches = lint(json.dumps(template), config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_creation_order_is_in_the_template(resources):
    cluster, _ = _one(resources, "AWS::SageMaker::Cluster")
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    before_cluster = dependencies(resources, cluster)
    # The control plane, its networking add-ons and the administrators' access, first.
    for name in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent"):
        assert _addon(resources, name) in before_cluster
    assert eks_cluster in before_cluster
    admin = _by_path(resources, "AWS::EKS::AccessEntry", "/Eks/Admin0")
    assert admin in before_cluster
    # Everything that needs nodes, after the cluster.
    after = [
        "coredns",
        "cert-manager",
        "amazon-sagemaker-hyperpod-training-operator",
        "amazon-sagemaker-hyperpod-taskgovernance",
        "amazon-sagemaker-hyperpod-observability",
        "aws-fsx-csi-driver",
    ]
    for name in after:
        addon = _addon(resources, name)
        assert cluster in dependencies(resources, addon), name
        assert addon not in before_cluster, name
    # The training operator after cert-manager and its Pod Identity association.
    operator = _addon(resources, "amazon-sagemaker-hyperpod-training-operator")
    identity, _ = _one(resources, "AWS::EKS::PodIdentityAssociation")
    assert {identity, _addon(resources, "cert-manager")} <= set(resources[operator]["DependsOn"])
    # Task governance: the add-on, then the policy, then each team's quota.
    policy, _ = _one(resources, "AWS::SageMaker::ClusterSchedulerConfig")
    governance = _addon(resources, "amazon-sagemaker-hyperpod-taskgovernance")
    assert governance in resources[policy]["DependsOn"]
    quotas = [k for k, v in resources.items() if v["Type"] == "AWS::SageMaker::ComputeQuota"]
    assert len(quotas) == 2
    for quota in quotas:
        assert policy in resources[quota]["DependsOn"]


def test_the_hyperpod_cluster_is_orchestrated_by_the_eks_cluster(resources):
    _, cluster = _one(resources, "AWS::SageMaker::Cluster")
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    properties = cluster["Properties"]
    assert properties["Orchestrator"] == {
        "Eks": {"ClusterArn": {"Fn::GetAtt": [eks_cluster, "Arn"]}}
    }
    assert properties["NodeRecovery"] == "Automatic"
    assert properties["NodeProvisioningMode"] == "Continuous"
    assert properties["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter"}
    assert properties["TieredStorageConfig"] == {
        "Mode": "Enable",
        "InstanceMemoryAllocationPercentage": 20,
    }
    assert "LifeCycleConfig" not in json.dumps(properties)
    groups = {g["InstanceGroupName"]: g for g in properties["InstanceGroups"]}
    assert set(groups) == {"system", "gpu-p5", "gpu-g5"}
    assert "Taints" not in json.dumps(groups["system"])
    p5 = groups["gpu-p5"]
    assert p5["KubernetesConfig"] == {
        "Labels": {"workload": "training", "accelerator": "h100"},
        "Taints": [{"Key": "nvidia.com/gpu", "Value": "true", "Effect": "NoSchedule"}],
    }
    assert p5["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]


def test_the_autoscaling_role_is_trusted_by_hyperpod_only(resources):
    _, cluster = _one(resources, "AWS::SageMaker::Cluster")
    role_id = cluster["Properties"]["ClusterRole"]["Fn::GetAtt"][0]
    trust = resources[role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "hyperpod.sagemaker.amazonaws.com"}]


def test_the_eks_cluster_meets_hyperpods_requirements(resources, example):
    _, eks_cluster = _one(resources, "AWS::EKS::Cluster")
    properties = eks_cluster["Properties"]
    assert properties["AccessConfig"] == {
        "AuthenticationMode": "API",
        "BootstrapClusterCreatorAdminPermissions": False,
    }
    assert properties["Version"] == "1.32"
    vpc_cni = resources[_addon(resources, "vpc-cni")]["Properties"]
    assert vpc_cni["AddonVersion"] == "v1.19.5-eksbuild.1"
    # The private subnet (the nodes') and the two isolated subnets of the data stack.
    subnets = properties["ResourcesVpcConfig"]["SubnetIds"]
    assert len(subnets) == 3
    data = example[0]["FmpTrainingData"]["Resources"]
    isolated = [
        v["Properties"]["AvailabilityZone"]
        for k, v in data.items()
        if v["Type"] == "AWS::EC2::Subnet" and k.startswith("NetworkDatabaseSubnet")
    ]
    assert [zone["Fn::Select"][0] for zone in isolated] == [0, 1]
    entry = resources[_by_path(resources, "AWS::EKS::AccessEntry", "/Eks/Admin0")]
    assert entry["Properties"]["PrincipalArn"] == "arn:aws:iam::111122223333:role/Admin"
    (policy,) = entry["Properties"]["AccessPolicies"]
    assert policy["AccessScope"] == {"Type": "cluster"}
    assert "AmazonEKSClusterAdminPolicy" in json.dumps(policy["PolicyArn"])


def test_task_governance_from_the_teams(resources):
    _, policy = _one(resources, "AWS::SageMaker::ClusterSchedulerConfig")
    assert policy["Properties"]["SchedulerConfig"] == {
        "FairShare": "Enabled",
        "PriorityClasses": [
            {"Name": "inference", "Weight": 90},
            {"Name": "training", "Weight": 50},
            {"Name": "experimentation", "Weight": 10},
        ],
    }
    quotas = {
        v["Properties"]["ComputeQuotaTarget"]["TeamName"]: v["Properties"]
        for v in resources.values()
        if v["Type"] == "AWS::SageMaker::ComputeQuota"
    }
    assert quotas["research"]["ComputeQuotaConfig"]["ComputeQuotaResources"] == [
        {"InstanceType": "ml.p5.48xlarge", "Count": 2}
    ]
    assert quotas["research"]["ComputeQuotaTarget"]["FairShareWeight"] == 60
    assert quotas["applied"]["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "Lend"}


def test_observability_writes_to_its_own_workspace(resources):
    workspace, _ = _one(resources, "AWS::APS::Workspace")
    addon = resources[_addon(resources, "amazon-sagemaker-hyperpod-observability")]["Properties"]
    assert workspace in json.dumps(addon["ConfigurationValues"])
    (association,) = addon["PodIdentityAssociations"]
    assert association["ServiceAccount"] == "hyperpod-observability-operator-otel-collector"


def _release(resources: dict[str, dict], name: str) -> str:
    (found,) = [
        k
        for k, v in resources.items()
        if v["Type"] == "Custom::HelmRelease" and v["Properties"]["Release"] == name
    ]
    return found


def test_the_chart_is_installed_before_the_cluster_by_a_build_with_cluster_admin(resources):
    cluster, _ = _one(resources, "AWS::SageMaker::Cluster")
    chart = _release(resources, "hyperpod-dependencies")
    access = _by_path(resources, "AWS::EKS::AccessEntry", "/Helm/BuildAccess")
    # Access entry for the build role -> chart release -> HyperPod cluster.
    assert access in dependencies(resources, chart)
    assert chart in resources[cluster]["DependsOn"]
    assert chart in dependencies(resources, cluster)
    entry = resources[access]["Properties"]
    project, _ = _one(resources, "AWS::CodeBuild::Project")
    build_role = resources[project]["Properties"]["ServiceRole"]
    assert entry["PrincipalArn"] == build_role
    (policy,) = entry["AccessPolicies"]
    assert policy["AccessScope"] == {"Type": "cluster"}
    assert "AmazonEKSClusterAdminPolicy" in json.dumps(policy["PolicyArn"])
    properties = resources[chart]["Properties"]
    assert properties["Namespace"] == "kube-system"
    assert properties["ChartCommit"] == DEFAULT_DEPENDENCIES_CHART_COMMIT
    assert properties["ChartPath"] == "helm_chart/HyperPodHelmChart"


def test_the_build_runs_in_the_private_subnet_with_encrypted_logs(resources):
    project_id, project = _one(resources, "AWS::CodeBuild::Project")
    properties = project["Properties"]
    assert properties["EncryptionKey"]["Fn::GetAtt"][1] == "Arn"
    assert properties["VpcConfig"]["Subnets"]
    assert properties["Environment"]["PrivilegedMode"] is False
    spec = properties["Source"]["BuildSpec"]
    # Helm pinned and verified before use; the chart at the pinned commit with its
    # dependencies; uninstall tolerant of a missing release.
    assert "sha256sum -c -" in spec
    assert spec.index("helm dependency update") < spec.index("helm upgrade --install")
    assert "helm status" in spec and "nothing to uninstall" in spec
    group = properties["LogsConfig"]["CloudWatchLogs"]["GroupName"]["Ref"]
    assert "KmsKeyId" in resources[group]["Properties"]
    # The build reaches the Kubernetes API: HTTPS into the cluster security group.
    (ingress,) = [
        v["Properties"]
        for v in resources.values()
        if v["Type"] == "AWS::EC2::SecurityGroupIngress"
        and v["Metadata"]["aws:cdk:path"].endswith("/Helm/ApiFromBuild")
    ]
    assert (ingress["FromPort"], ingress["ToPort"], ingress["IpProtocol"]) == (443, 443, "tcp")
    rule = _by_path(resources, "AWS::EC2::SecurityGroupIngress", "/Helm/ApiFromBuild")
    for release in ("hyperpod-dependencies", "fsx-volume"):
        assert rule in dependencies(resources, _release(resources, release)), release


def test_the_fsx_volume_follows_the_csi_driver_and_the_team_namespaces(resources):
    volume = _release(resources, "fsx-volume")
    before = dependencies(resources, volume)
    assert _addon(resources, "aws-fsx-csi-driver") in before
    quotas = [k for k, v in resources.items() if v["Type"] == "AWS::SageMaker::ComputeQuota"]
    assert set(quotas) <= before
    manifests = json.dumps(resources[volume]["Properties"]["Manifests"])
    for namespace in ("default", "hyperpod-ns-research", "hyperpod-ns-applied"):
        assert f'\\"namespace\\":\\"{namespace}\\",\\"name\\":\\"fsx-claim\\"' in manifests
    assert "fsx.csi.aws.com" in manifests


def test_the_stack_outputs_the_claim_and_the_build_logs(example):
    outputs = example[0]["FmpTraining"]["Outputs"]
    assert outputs["FsxClaimName"]["Value"] == "fsx-claim"
    assert "HelmBuildLogGroup" in outputs
    assert "DependenciesChartCommand" not in outputs


def test_changing_the_pin_updates_the_release_not_the_cluster(resources):
    config = _example()
    config["training"]["eks"]["dependencies_chart_commit"] = "b" * 40
    templates, _ = _synth(config)
    changed = templates["FmpTraining"]["Resources"]
    chart = _release(resources, "hyperpod-dependencies")
    assert _release(changed, "hyperpod-dependencies") == chart
    assert changed[chart]["Properties"]["ChartCommit"] == "b" * 40
    differing = {
        k
        for k in resources
        if k in changed and resources[k]["Properties"] != changed[k].get("Properties")
    }
    assert differing == {chart}
    assert set(changed) == set(resources)


def test_without_the_fsx_csi_driver_there_is_no_volume():
    config = _example()
    config["training"]["eks"]["add_ons"]["fsx_csi_driver"] = False
    config["training"]["eks"]["add_ons"]["inference_operator"] = False  # it needs the driver
    templates, findings = _synth(config)
    resources = templates["FmpTraining"]["Resources"]
    releases = [
        v["Properties"]["Release"] for v in resources.values() if v["Type"] == "Custom::HelmRelease"
    ]
    assert releases == ["hyperpod-dependencies"]
    assert "FsxClaimName" not in templates["FmpTraining"]["Outputs"]
    assert findings == []


def _problems(change) -> str:
    config = _example()
    change(config["training"])
    with pytest.raises(ValidationError) as error:
        load_config(config)
    return str(error.value)


def test_every_eks_problem_is_reported_at_once():
    def change(training: dict[str, Any]) -> None:
        eks = training["eks"]
        eks["kubernetes_version"] = "1.27"
        eks["vpc_cni_version"] = "v1.18.2-eksbuild.1"
        eks["authentication_mode"] = "CONFIG_MAP"
        eks["administrators"] = []
        eks["instance_groups"][1]["taints"][0]["effect"] = "NoWay"
        eks["instance_groups"][2]["labels"] = {"bad key!": "x"}
        eks["teams"][0]["instance_type"] = "ml.p4d.24xlarge"
        eks["teams"][1]["name"] = "Applied_Team"
        eks["add_ons"]["task_governance"] = False
        eks["dependencies_chart_commit"] = "main"
        eks["fsx_volume_namespace"] = "Shared_Data"

    message = _problems(change)
    for expected in (
        "eks.kubernetes_version='1.27'",
        "1.33",
        "eks.vpc_cni_version='v1.18.2-eksbuild.1': HyperPod needs the Amazon VPC CNI 1.18.3",
        "eks.authentication_mode='CONFIG_MAP'",
        "eks.administrators=()",
        "eks.instance_groups[1].taints[0].effect='NoWay'",
        "eks.instance_groups[2].labels='bad key!'",
        "eks.teams[0].instance_type='ml.p4d.24xlarge': a quota is on a type the cluster has",
        "eks.teams[1].name='Applied_Team'",
        "eks.add_ons.task_governance=False: teams and priority classes",
        "eks.dependencies_chart_commit='main'",
        "eks.fsx_volume_namespace='Shared_Data': a Kubernetes namespace is 1-63",
    ):
        assert expected in message, expected


def test_orchestrator_eks_needs_the_eks_keys():
    message = _problems(lambda training: training.pop("eks"))
    assert "training.eks=None: orchestrator eks needs the eks keys" in message


def test_eks_keys_are_refused_with_slurm():
    message = _problems(lambda training: training.update(orchestrator="slurm"))
    assert "training.eks='given': the eks keys are read only with orchestrator eks" in message


def test_an_unknown_orchestrator_names_the_choices():
    message = _problems(lambda training: training.update(orchestrator="kubernetes"))
    assert "training.orchestrator='kubernetes'" in message
    assert "eks" in message and "slurm" in message


def test_deep_health_checks_default_to_none_on_types_without_them():
    def change(training: dict[str, Any]) -> None:
        training["eks"]["instance_groups"][2]["instance_type"] = "ml.m5.12xlarge"
        training["eks"]["teams"][1]["instance_type"] = "ml.m5.12xlarge"

    config = _example()
    change(config["training"])
    templates, _ = _synth(config)
    _, cluster = _one(templates["FmpTraining"]["Resources"], "AWS::SageMaker::Cluster")
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert "OnStartDeepHealthChecks" not in groups["gpu-g5"]


def test_groups_that_all_repel_untolerating_pods_are_refused_with_a_system_group_to_add():
    def change(training: dict[str, Any]) -> None:
        del training["eks"]["instance_groups"][0]  # the untainted system group

    message = _problems(change)
    assert (
        "eks.instance_groups=['gpu-p5', 'gpu-g5']: every group has a NoSchedule or NoExecute "
        "taint, so coredns, cert-manager and the operators the stack installs have no node"
    ) in message
    assert '"name": "system", "instance_type": "ml.m5.2xlarge"' in message


def test_a_group_uses_its_training_plan_and_a_bad_arn_is_named():
    config = _example()
    plan = "arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-reserved"
    config["training"]["eks"]["instance_groups"][1]["training_plan_arn"] = plan
    templates, _ = _synth(config)
    _, cluster = _one(templates["FmpTraining"]["Resources"], "AWS::SageMaker::Cluster")
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert groups["gpu-p5"]["TrainingPlanArn"] == plan
    assert "TrainingPlanArn" not in groups["gpu-g5"]

    def change(training: dict[str, Any]) -> None:
        training["eks"]["instance_groups"][1]["training_plan_arn"] = "p5-reserved"

    assert "eks.instance_groups[1].training_plan_arn='p5-reserved'" in _problems(change)


def test_add_ons_are_optional():
    config = copy.deepcopy(_example())
    eks = config["training"]["eks"]
    eks["add_ons"] = {"training_operator": False}
    eks["teams"] = []
    eks["priority_classes"] = []
    templates, findings = _synth(config)
    resources = templates["FmpTraining"]["Resources"]
    names = {
        v["Properties"]["AddonName"] for v in resources.values() if v["Type"] == "AWS::EKS::Addon"
    }
    assert names == {"vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns"}
    assert findings == []


@pytest.mark.slow
def test_the_cli_synthesizes_the_example(tmp_path: Path):
    result = subprocess.run(
        [
            str(CDK_CLI),
            *("synth", "--quiet", "--no-notices"),
            *("-c", f"config={EXAMPLE.relative_to(ROOT)}"),
            *("--output", str(tmp_path)),
        ],
        cwd=ROOT,
        env=synth_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    template = json.loads((tmp_path / "FmpTraining.template.json").read_text())
    kinds = {r["Type"] for r in template["Resources"].values()}
    assert {"AWS::EKS::Cluster", "AWS::SageMaker::Cluster", "AWS::SageMaker::ComputeQuota"} <= kinds


def test_pod_identity_roles_trust_this_eks_cluster_only(resources):
    eks_cluster, _ = _one(resources, "AWS::EKS::Cluster")
    _, identity = _one(resources, "AWS::EKS::PodIdentityAssociation")
    role = resources[identity["Properties"]["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"]["StringEquals"]["aws:SourceArn"] == {
        "Fn::GetAtt": [eks_cluster, "Arn"]
    }
    assert "AmazonSageMakerHyperPodTrainingOperatorAccess" in json.dumps(role["ManagedPolicyArns"])


def test_make_destroy_lists_the_eks_control_plane_log_group(tmp_path: Path):
    app = new_app(context=dict(CLI_CONTEXT), outdir=str(tmp_path))
    build_app(app, load_config(_example()))
    app.synth()
    deployed = {"FmpTraining": Deployed("id", resources={"Eks3DB0AF90": "Eks-abc"})}
    groups = Leftovers(Assembly.load(tmp_path), deployed).log_groups("FmpTraining")
    (eks,) = [g for g in groups if g.name.startswith("/aws/eks/")]
    assert eks.name == "/aws/eks/Eks-abc/cluster"
    assert eks.commands == ("aws logs delete-log-group --log-group-name /aws/eks/Eks-abc/cluster",)

"""The default app as `cdk synth` builds it: snapshots, cfn-lint, cdk-nag, stable IDs."""

from __future__ import annotations

import json

import pytest
from cfnlint.api import ManualArgs, lint
from syrupy.extensions.json import JSONSnapshotExtension

from tests.support import deleted_but_needed, dependencies, normalized, stateful_changes

STACKS = ("FmpTrainingData", "FmpTraining", "FmpInferenceArtifacts", "FmpInference")


@pytest.mark.slow
def test_cli_synthesizes_both_stacks(cli_assembly, default_assembly):
    assert set(cli_assembly.templates) == set(STACKS)
    # What the other tests read (the session's in-process synth) is what the CLI writes.
    assert cli_assembly.contents() == default_assembly.contents()


@pytest.fixture
def json_snapshot(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.parametrize("stack", STACKS)
def test_template_snapshot(default_assembly, json_snapshot, stack):
    assert normalized(default_assembly.templates[stack]) == json_snapshot


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.slow
def test_cfn_lint_finds_nothing(default_assembly, stack):
    template = json.dumps(default_assembly.templates[stack])
    matches = lint(template, config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_cdk_nag_packs_have_no_open_findings(default_assembly):
    report = default_assembly.validation_report
    assert report is not None, "cdk-nag wrote no validation report"
    packs = {plugin["pluginName"]: plugin for plugin in report["pluginReports"]}
    assert set(packs) == {"AwsSolutions", "HIPAA.Security", "NIST.800.53.R5"}
    open_findings = [
        f"{v['ruleName']} at {c['constructPath']}"
        for plugin in packs.values()
        for v in plugin.get("violations", [])
        for c in v["violatingConstructs"]
    ]
    assert open_findings == []


def test_every_acknowledgement_has_a_specific_reason(default_assembly):
    acknowledged = [
        v
        for plugin in default_assembly.validation_report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
    ]
    assert acknowledged, "expected the report to list the acknowledged findings"
    too_short = [v["acknowledgedId"] for v in acknowledged if len(v["reason"]) < 40]
    assert too_short == []


# Stateful resources: renaming their construct IDs would replace them (and orphan the
# retained originals). A change here must be deliberate. The training ones moved from
# FmpTraining to FmpTrainingData with the same logical IDs (for CloudFormation they are new
# resources of a new stack; the same IDs let `cdk import` adopt retained originals).
PINNED_STATEFUL_RESOURCES = {
    "FmpTraining": {},
    "FmpTrainingData": {
        "NetworkFlowLogKeyF785E5F9": "AWS::KMS::Key",
        "NetworkFlowLogs2BEC3212": "AWS::Logs::LogGroup",
        "FileSystemKeyA5484887": "AWS::KMS::Key",
        "FileSystem0A147049": "AWS::FSx::FileSystem",
        "LifecycleScriptsBucketKey51EF4DE8": "AWS::KMS::Key",
        "LifecycleScriptsBucketC326695E": "AWS::S3::Bucket",
        "LifecycleScriptsBucketAccessLogsA77EAF12": "AWS::S3::Bucket",
        "LifecycleScriptsUploadLogsKey00B8A623": "AWS::KMS::Key",
        "LifecycleScriptsUploadLogs902B8BF1": "AWS::Logs::LogGroup",
        # The notification topic's key: it holds no data of its own (SNS keeps a message
        # only while delivering it), but it is retained, so a renamed ID would orphan one.
        "NotificationsKeyADCFA950": "AWS::KMS::Key",
    },
    # The model bucket moved from FmpInference to FmpInferenceArtifacts with the same
    # logical IDs (the same IDs let `cdk import` adopt a retained original).
    "FmpInferenceArtifacts": {
        "ModelArtifactsKey31EDFDE5": "AWS::KMS::Key",
        "ModelArtifactsBucket2C3831B7": "AWS::S3::Bucket",
        "ModelArtifactsAccessLogs261D498C": "AWS::S3::Bucket",
    },
    "FmpInference": {
        "SingleModelEndpointsummarizerDataCaptureKeyEFA40B63": "AWS::KMS::Key",
        "SingleModelEndpointsummarizerDataCaptureBucketDC2D53C2": "AWS::S3::Bucket",
        "SingleModelEndpointsummarizerDataCaptureAccessLogsE001348E": "AWS::S3::Bucket",
        "MultiModelEndpointsmallmodelsVolumeKeyCCAB6B2B": "AWS::KMS::Key",
        "AsyncInferenceKeyFBF5F6FD": "AWS::KMS::Key",
        "AsyncInferenceBucketBAD6A331": "AWS::S3::Bucket",
        "AsyncInferenceAccessLogs3F879F29": "AWS::S3::Bucket",
        "NotificationsKeyADCFA950": "AWS::KMS::Key",
    },
}
STATEFUL_TYPES = {"AWS::KMS::Key", "AWS::S3::Bucket", "AWS::FSx::FileSystem", "AWS::Logs::LogGroup"}


@pytest.mark.parametrize("stack", sorted(PINNED_STATEFUL_RESOURCES))
def test_stateful_resources_keep_their_logical_ids_and_are_retained(default_assembly, stack):
    resources = default_assembly.templates[stack]["Resources"]
    changes = stateful_changes(PINNED_STATEFUL_RESOURCES[stack], resources, STATEFUL_TYPES)
    assert changes == [], "\n".join(changes)


def test_a_renamed_stateful_resource_is_described_as_replaced():
    pinned = {"FileSystem0A147049": "AWS::FSx::FileSystem"}
    resources = {
        "SharedFs1234ABCD": {
            "Type": "AWS::FSx::FileSystem",
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Metadata": {"aws:cdk:path": "FmpTraining/SharedFs/Resource"},
        }
    }
    assert stateful_changes(pinned, resources, STATEFUL_TYPES) == [
        "FileSystem0A147049 (AWS::FSx::FileSystem) would be REPLACED: its logical ID is gone, "
        "so CloudFormation would create a new one and orphan the retained original; now there "
        "is SharedFs1234ABCD",
        "SharedFs1234ABCD (AWS::FSx::FileSystem at FmpTraining/SharedFs/Resource) is new: pin "
        "it if intended",
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_nothing_a_retained_resource_needs_is_deleted_with_its_stack(default_assembly, stack):
    # Deleting a stack deletes what is not retained; a retained resource that still uses a
    # deleted one (an FSx file system in its subnet) makes that deletion fail.
    assert deleted_but_needed(default_assembly.templates[stack]["Resources"]) == set()


def test_the_cluster_stack_retains_nothing_and_nothing_depends_on_it(default_assembly):
    # `cdk destroy FmpTraining` removes the whole cluster stack and nothing else, and a new
    # deploy recreates it: the data stack neither imports from it nor depends on it.
    cluster = default_assembly.templates["FmpTraining"]
    assert [
        n
        for n, r in cluster["Resources"].items()
        if "DeletionPolicy" in r and r["DeletionPolicy"] == "Retain"
    ] == []
    data = json.dumps(default_assembly.templates["FmpTrainingData"])
    assert "Fn::GetStackOutput" not in data and "Fn::ImportValue" not in data
    manifest = json.loads((default_assembly.directory / "manifest.json").read_text())
    assert "FmpTrainingData" in manifest["artifacts"]["FmpTraining"]["dependencies"]
    assert "FmpTraining" not in manifest["artifacts"]["FmpTrainingData"].get("dependencies", [])


def test_the_model_bucket_deploys_before_and_apart_from_the_endpoints(default_assembly):
    # Deploy FmpInferenceArtifacts, upload the models, then deploy FmpInference: its models
    # read a bucket that exists (and holds them) before the endpoints are created.
    artifacts = default_assembly.templates["FmpInferenceArtifacts"]
    assert "Fn::ImportValue" not in json.dumps(artifacts)
    buckets = [r for r in artifacts["Resources"].values() if r["Type"] == "AWS::S3::Bucket"]
    assert buckets and all(r["DeletionPolicy"] == "Retain" for r in buckets)
    inference = default_assembly.templates["FmpInference"]
    model_buckets = {
        json.dumps(r["Properties"]["PrimaryContainer"]["ModelDataSource"]["S3DataSource"])
        for r in inference["Resources"].values()
        if r["Type"] == "AWS::SageMaker::Model"
        and "ModelDataSource" in r["Properties"]["PrimaryContainer"]
    }
    assert model_buckets and all("FmpInferenceArtifacts:" in b for b in model_buckets)
    manifest = json.loads((default_assembly.directory / "manifest.json").read_text())
    assert "FmpInferenceArtifacts" in manifest["artifacts"]["FmpInference"]["dependencies"]


def test_the_file_system_keeps_its_network(default_assembly):
    resources = default_assembly.templates["FmpTrainingData"]["Resources"]
    (fsx,) = [n for n, r in resources.items() if r["Type"] == "AWS::FSx::FileSystem"]
    needed = dependencies(resources, fsx)
    kinds = {resources[n]["Type"] for n in needed}
    assert {"AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::SecurityGroup"} <= kinds
    assert {resources[n].get("DeletionPolicy") for n in needed} == {"Retain"}
    # What costs money or is not needed by the retained data is deleted.
    for kind in ("AWS::EC2::NatGateway", "AWS::EC2::EIP", "AWS::EC2::FlowLog"):
        assert all("DeletionPolicy" not in r for r in resources.values() if r["Type"] == kind)

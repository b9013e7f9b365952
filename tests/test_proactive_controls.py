"""The AWS Control Tower proactive controls (scripts/proactive_controls.py) on the default
app's templates and the every-option fixture's: the findings left are exactly the ones
docs/guardrails.md documents as defaults (with the option that passes them, or why none
is offered). The checks themselves against the PASS and FAIL cases of the controls' rule
specifications."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import CLI_CONTEXT, CloudAssembly
from tests.support import ROOT, new_app

sys.path.insert(0, str(ROOT / "scripts"))

from docs_assembly import Assembly  # noqa: E402
from proactive_controls import CONTROLS, findings, per_control, report  # noqa: E402

from fm_platform.app import build_app  # noqa: E402
from fm_platform.config import CONFIG_FILE_CONTEXT_KEY  # noqa: E402

PAGE = ROOT / "docs" / "guardrails.md"
FIXTURE = ROOT / "tests" / "fixtures" / "every-endpoint-option.json"

_ACCESS_LOGS = {
    "FmpInference/AsyncInference/AccessLogs",
    "FmpInference/SingleModelEndpoint-summarizer/DataCapture/AccessLogs",
    "FmpInferenceArtifacts/ModelArtifacts/AccessLogs",
    "FmpTrainingData/LifecycleScripts/Bucket/AccessLogs",
}
_BUCKETS = _ACCESS_LOGS | {
    "FmpInference/AsyncInference/Bucket",
    "FmpInference/SingleModelEndpoint-summarizer/DataCapture/Bucket",
    "FmpInferenceArtifacts/ModelArtifacts/Bucket",
    "FmpTrainingData/LifecycleScripts/Bucket/Bucket",
}
#: What docs/guardrails.md documents as the default stacks' findings, by control.
DOCUMENTED = {
    "CT.S3.PR.2": _ACCESS_LOGS,
    "CT.S3.PR.4": _BUCKETS,
    "CT.S3.PR.9": _BUCKETS,
    "CT.S3.PR.10": _ACCESS_LOGS,
    "CT.LAMBDA.PR.3": {
        "FmpTrainingData/Custom::VpcRestrictDefaultSGCustomResourceProvider/Handler"
    },
}


def _by_control(assembly: Assembly) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in findings(assembly):
        found.setdefault(finding.control, set()).add(f"{finding.stack}/{finding.path}")
    return found


def test_the_default_stacks_fail_only_the_documented_controls(default_assembly: CloudAssembly):
    assert _by_control(Assembly.load(default_assembly.directory)) == DOCUMENTED


def test_the_page_names_every_documented_finding_and_its_count():
    page = PAGE.read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in page.splitlines() if "| `CT." in line}
    assert set(rows) == {control.id for control in CONTROLS}
    for control, resources in DOCUMENTED.items():
        # The default stacks' count now (the row also says the count before this change).
        assert f"| {len(resources)} |" in rows[control], control
    for control in set(rows) - set(DOCUMENTED):
        assert "| 0 |" in rows[control], control


@pytest.mark.slow  # synthesizes the fixture's app
def test_the_every_option_fixture_fails_only_the_documented_controls(tmp_path: Path):
    app = new_app(
        context={**CLI_CONTEXT, CONFIG_FILE_CONTEXT_KEY: str(FIXTURE)}, outdir=str(tmp_path)
    )
    build_app(app)
    app.synth()
    counts = per_control(findings(Assembly.load(tmp_path)))
    # Its one SecureBucket: the model artifacts bucket and its access-log bucket.
    assert counts == {"CT.S3.PR.2": 1, "CT.S3.PR.4": 2, "CT.S3.PR.9": 2, "CT.S3.PR.10": 1}


@pytest.mark.slow  # synthesizes the default app once more
def test_every_option_leaves_only_the_buckets_replaced_in_place(tmp_path: Path):
    config = json.loads((ROOT / "tests" / "fixtures" / "app-config.json").read_text())
    config["buckets"] = {
        "noncurrent_version_expiration_days": 90,
        "event_bridge_enabled": True,
        "object_lock_enabled": True,
        "access_logs_bucket": "central-access-logs-111122223333",
    }
    config["training"]["restrict_default_security_group"] = False
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    app = new_app(
        context={**CLI_CONTEXT, CONFIG_FILE_CONTEXT_KEY: str(path)}, outdir=str(tmp_path / "out")
    )
    build_app(app)
    app.synth()
    assert _by_control(Assembly.load(tmp_path / "out")) == {
        # Their objects are replaced in place (docs/guardrails.md).
        "CT.S3.PR.9": {
            "FmpInferenceArtifacts/ModelArtifacts/Bucket",
            "FmpTrainingData/LifecycleScripts/Bucket/Bucket",
        },
    }


def test_the_report_counts_every_control(default_assembly: CloudAssembly):
    text = report(findings(Assembly.load(default_assembly.directory)), listing=False)
    assert text.splitlines()[-1].split() == ["total", "25", "in", "5", "controls"]
    assert len(text.splitlines()) == len(CONTROLS) + 1


def _passes(control_id: str, properties: dict) -> bool:
    (control,) = [c for c in CONTROLS if c.id == control_id]
    return control.passes(properties)


_LOCAL_ARN = {"Fn::GetAtt": ["S3Bucket", "Arn"]}
_TLS_ONLY = {
    "Effect": "Deny",
    "Action": "s3:*",
    "Principal": "*",
    "Resource": [_LOCAL_ARN, {"Fn::Join": ["", [_LOCAL_ARN, "/*"]]}],
    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
}
_GRANT_DENY = {
    "Effect": "Deny",
    "Action": "kms:CreateGrant",
    "Principal": "*",
    "Resource": "*",
    "Condition": {
        "BoolIfExists": {"kms:GrantIsForAWSResource": "false", "aws:PrincipalIsAWSService": "false"}
    },
}
_ENABLED_RULE = {"LifecycleConfiguration": {"Rules": [{"Status": "Enabled", "Id": "One"}]}}
_DISABLED_RULE = {"LifecycleConfiguration": {"Rules": [{"Status": "Disabled", "Id": "One"}]}}
_VERSIONED = {"VersioningConfiguration": {"Status": "Enabled"}}


@pytest.mark.parametrize(
    ("control", "properties", "passes"),
    [
        ("CT.S3.PR.2", {"LoggingConfiguration": {}}, True),
        ("CT.S3.PR.2", {"LoggingConfiguration": {"DestinationBucketName": ""}}, False),
        ("CT.S3.PR.2", {}, False),
        ("CT.S3.PR.3", {**_VERSIONED, **_ENABLED_RULE}, True),
        ("CT.S3.PR.3", {**_VERSIONED, **_DISABLED_RULE}, False),
        ("CT.S3.PR.3", {**_VERSIONED}, False),
        ("CT.S3.PR.3", {}, True),  # not versioned: skipped
        ("CT.S3.PR.4", {"NotificationConfiguration": {}}, False),
        (
            "CT.S3.PR.4",
            {
                "NotificationConfiguration": {
                    "EventBridgeConfiguration": {"EventBridgeEnabled": True}
                }
            },
            True,
        ),
        ("CT.S3.PR.4", {"NotificationConfiguration": {"TopicConfigurations": [{}]}}, True),
        ("CT.S3.PR.6", _ENABLED_RULE, True),
        ("CT.S3.PR.6", _DISABLED_RULE, False),
        ("CT.S3.PR.6", {}, False),
        ("CT.S3.PR.8", {"PolicyDocument": {"Statement": [_TLS_ONLY]}}, True),
        (
            "CT.S3.PR.8",
            {"PolicyDocument": {"Statement": [{**_TLS_ONLY, "Effect": "Allow"}]}},
            False,
        ),
        ("CT.S3.PR.9", {"ObjectLockEnabled": True}, True),
        ("CT.S3.PR.9", {"ObjectLockEnabled": False}, False),
        (
            "CT.S3.PR.10",
            {
                "BucketEncryption": {
                    "ServerSideEncryptionConfiguration": [
                        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}
                    ]
                }
            },
            True,
        ),
        ("CT.S3.PR.10", {}, False),
        ("CT.S3.PR.11", _VERSIONED, True),
        ("CT.S3.PR.11", {}, False),
        ("CT.LAMBDA.PR.2", {"Principal": {"Ref": "AWS::AccountId"}}, True),
        ("CT.LAMBDA.PR.2", {"Principal": "*"}, False),
        ("CT.LAMBDA.PR.2", {"Principal": "s3.amazonaws.com", "SourceArn": _LOCAL_ARN}, True),
        ("CT.LAMBDA.PR.2", {"Principal": "s3.amazonaws.com"}, False),
        (
            "CT.LAMBDA.PR.3",
            {"VpcConfig": {"SubnetIds": [{"Ref": "One"}], "SecurityGroupIds": ["sg-1"]}},
            True,
        ),
        ("CT.LAMBDA.PR.3", {"VpcConfig": {"SubnetIds": ["subnet-1"]}}, False),
        ("CT.LAMBDA.PR.3", {}, False),
        ("CT.KMS.PR.1", {"EnableKeyRotation": True}, True),
        ("CT.KMS.PR.1", {"EnableKeyRotation": False}, False),
        ("CT.KMS.PR.1", {"KeySpec": "RSA_4096"}, True),  # asymmetric: skipped
        ("CT.KMS.PR.2", {"KeyUsage": "ENCRYPT_DECRYPT", "KeySpec": "RSA_2048"}, False),
        ("CT.KMS.PR.2", {"KeyUsage": "ENCRYPT_DECRYPT", "KeySpec": "RSA_4096"}, True),
        ("CT.KMS.PR.3", {"KeyPolicy": {"Statement": [_GRANT_DENY]}}, True),
        ("CT.KMS.PR.3", {"KeyPolicy": {"Statement": [{**_GRANT_DENY, "Effect": "Allow"}]}}, False),
        (
            "CT.KMS.PR.3",
            {"KeyPolicy": {"Statement": [{**_GRANT_DENY, "Condition": {"Bool": {}}}]}},
            False,
        ),
    ],
)
def test_each_check_follows_its_rule_specification(control, properties, passes):
    assert _passes(control, properties) is passes

"""Hosting building blocks: model containers, the endpoint KMS rule, the execution role."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk.assertions import Annotations, Match, Template

from fm_platform.constructs.inference.container_image import add_image_pull
from fm_platform.constructs.inference.execution_role import (
    HostingRole,
    HostingRoleProps,
    execution_role_for,
    hosting_execution_role,
)
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.role_grants import STATEMENT_BUDGET, add_model_artifacts
from fm_platform.constructs.inference.storage_encryption import (
    encrypt_endpoint_config,
    storage_key_applies,
    volume_encryption_key,
)
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.hardware.instances import UnknownInstanceTypeError
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/huggingface-pytorch-tgi-inference:2.4"


def test_container_without_artifacts():
    prop = ModelContainer(image=IMAGE).to_container_property()
    assert prop.image == IMAGE
    assert prop.model_data_url is None
    assert prop.model_data_source is None
    assert prop.environment is None


def test_container_with_compressed_artifacts():
    container = ModelContainer(
        image=IMAGE, model_data_url="s3://b/m/model.tar.gz", environment={"A": "1"}
    )
    prop = container.to_container_property()
    assert prop.model_data_url == "s3://b/m/model.tar.gz"
    assert prop.model_data_source is None
    assert prop.environment == {"A": "1"}


def test_container_with_uncompressed_prefix():
    prop = ModelContainer(image=IMAGE, model_data_url="s3://b/m/").to_container_property()
    assert prop.model_data_url is None
    source = prop.model_data_source.s3_data_source
    assert (source.s3_uri, source.s3_data_type, source.compression_type) == (
        "s3://b/m/",
        "S3Prefix",
        "None",
    )


def test_storage_key_applies_only_to_ebs_types():
    assert storage_key_applies("ml.m5.xlarge")
    assert storage_key_applies("ml.inf2.xlarge")
    assert not storage_key_applies("ml.g5.12xlarge")
    with pytest.raises(UnknownInstanceTypeError, match="regenerate_instance_specs.py --add"):
        storage_key_applies("ml.t2.medium")


def _stack(app: cdk.App, name: str) -> cdk.Stack:
    stack = cdk.Stack(app, name)
    cdk.CfnResource(stack, "Placeholder", type="AWS::CloudFormation::WaitConditionHandle")
    return stack


@pytest.fixture(scope="module")
def keys():
    app = new_app()
    stack = _stack(app, "Keys")
    passed = kms.Key(stack, "Passed")
    result = {
        "passed": passed,
        "ebs_passed": volume_encryption_key(stack, "ml.m5.xlarge", passed),
        "nvme_passed": volume_encryption_key(_stack(app, "NvmePassed"), "ml.g5.12xlarge", passed),
        "nvme_none": volume_encryption_key(_stack(app, "NvmeNone"), "ml.g5.12xlarge", None),
        "ebs_default": volume_encryption_key(_stack(app, "EbsDefault"), "ml.m5.xlarge", None),
    }
    return app, result


def test_ebs_type_uses_the_passed_or_a_new_key(keys):
    app, result = keys
    assert result["ebs_passed"] is result["passed"]
    assert isinstance(result["ebs_default"], kms.Key)
    template = Template.from_stack(app.node.find_child("EbsDefault"))
    template.has_resource("AWS::KMS::Key", {"DeletionPolicy": "Retain"})
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})


def _encrypted_config(stack: cdk.Stack, instance_types: list[str], key: kms.IKey | None):
    config = sagemaker.CfnEndpointConfig(
        stack,
        "Config",
        production_variants=[
            sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                variant_name=f"V{index}", instance_type=instance_type, initial_instance_count=1
            )
            for index, instance_type in enumerate(instance_types)
        ],
    )
    return encrypt_endpoint_config(stack, config, instance_types, key)


def test_config_gets_a_key_only_when_every_variant_is_on_ebs():
    app = new_app()
    ebs = cdk.Stack(app, "AllEbs")
    created = _encrypted_config(ebs, ["ml.m5.xlarge", "ml.c5.xlarge"], None)
    mixed = cdk.Stack(app, "Mixed")
    passed = kms.Key(mixed, "Passed")
    assert _encrypted_config(mixed, ["ml.m5.xlarge", "ml.g5.12xlarge"], passed) is None

    [ebs_config] = (
        Template.from_stack(ebs).find_resources("AWS::SageMaker::EndpointConfig").values()
    )
    key_id = ebs.get_logical_id(created.node.default_child)
    assert ebs_config["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    [mixed_config] = (
        Template.from_stack(mixed).find_resources("AWS::SageMaker::EndpointConfig").values()
    )
    assert "KmsKeyId" not in mixed_config["Properties"]
    Annotations.from_stack(mixed).has_warning(
        "*", Match.string_like_regexp("ml.g5.12xlarge stores data on local NVMe")
    )


def test_nvme_type_gets_no_key_and_a_warning_when_one_was_passed(keys):
    app, result = keys
    assert result["nvme_passed"] is None
    assert result["nvme_none"] is None
    message = Match.string_like_regexp("not set on the endpoint config.*NVMe")
    Annotations.from_stack(app.node.find_child("NvmePassed")).has_warning("*", message)
    Annotations.from_stack(app.node.find_child("NvmeNone")).has_no_warning("*", message)


@pytest.fixture(scope="module")
def role_template():
    app = new_app()
    stack = cdk.Stack(app, "Role")
    hosting = HostingRole(
        stack,
        "Hosting",
        HostingRoleProps(
            images=[IMAGE],
            model_data_urls=["s3://models/llama/", "s3://models/small/model.tar.gz"],
            artifact_key=kms.Key(stack, "ArtifactKey", enable_key_rotation=True),
            in_vpc=True,
        ),
    )
    hosting.add_image_pull(
        cdk.Fn.join("", [stack.account, ".dkr.ecr.", stack.region, ".amazonaws.com/x:1"])
    )
    return Template.from_stack(stack)


def _statements_with(template: Template, action: str) -> list[dict]:
    """Every policy statement (merged by CDK's policy minimisation) granting ``action``."""
    found = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            if action in ([actions] if isinstance(actions, str) else actions):
                found.append(statement)
    return found


def _resources(statement: dict) -> list:
    resource = statement["Resource"]
    return resource if isinstance(resource, list) else [resource]


def _arn(suffix: str) -> dict:
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, suffix]]}


def test_role_trusts_sagemaker(role_template):
    role_template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": {
                "Statement": [
                    Match.object_like({"Principal": {"Service": "sagemaker.amazonaws.com"}})
                ]
            }
        },
    )


def test_role_pulls_from_the_image_repository_only(role_template):
    [token] = _statements_with(role_template, "ecr:GetAuthorizationToken")
    assert token["Resource"] == "*"
    [pull] = _statements_with(role_template, "ecr:BatchGetImage")
    assert "ecr:GetDownloadUrlForLayer" in pull["Action"]
    assert _arn(":ecr:us-west-2:763104351884:repository/huggingface-pytorch-tgi-inference") in (
        _resources(pull)
    )


def test_token_image_falls_back_to_the_accounts_repositories(role_template):
    [pull] = _statements_with(role_template, "ecr:BatchGetImage")
    assert any(":repository/*" in str(resource) for resource in _resources(pull))


def test_role_reads_artifacts_at_object_level(role_template):
    [get] = _statements_with(role_template, "s3:GetObject")
    assert _resources(get) == [
        _arn(":s3:::models/llama/*"),
        _arn(":s3:::models/small/model.tar.gz"),
    ]
    [listing] = _statements_with(role_template, "s3:ListBucket")
    assert listing["Resource"] == _arn(":s3:::models")
    assert listing["Condition"] == {"StringLike": {"s3:prefix": "llama/*"}}
    assert _statements_with(role_template, "kms:Decrypt")


def test_role_writes_logs_and_metrics_only_where_sagemaker_does(role_template):
    [metrics] = _statements_with(role_template, "cloudwatch:PutMetricData")
    assert metrics["Condition"] == {"StringLike": {"cloudwatch:namespace": "/aws/sagemaker/*"}}
    [logs] = _statements_with(role_template, "logs:PutLogEvents")
    groups = sorted(
        "".join(part for part in r["Fn::Join"][1] if isinstance(part, str))
        for r in _resources(logs)
    )
    assert groups == [
        "arn::logs:::log-group:/aws/sagemaker/Endpoints/*",
        "arn::logs:::log-group:/aws/sagemaker/Endpoints/*:log-stream:*",
        "arn::logs:::log-group:/aws/sagemaker/InferenceComponents/*",
        "arn::logs:::log-group:/aws/sagemaker/InferenceComponents/*:log-stream:*",
    ]


def _flat(resources: object) -> list[str]:
    """Each resource of a statement as text, tokens joined (``Ref`` as its name)."""
    items = resources if isinstance(resources, list) else [resources]
    return [
        "".join(p if isinstance(p, str) else p["Ref"] for p in r["Fn::Join"][1])
        if isinstance(r, dict)
        else r
        for r in items
    ]


def test_role_manages_vpc_interfaces_when_in_a_vpc(role_template):
    # The interface actions name this account's interfaces, subnets and security groups;
    # DeleteNetworkInterfacePermission's resource is the interface (EC2's service
    # authorization reference), so it is not granted on "*"; only Describe* is.
    here = "arn:AWS::Partition:ec2:AWS::Region:AWS::AccountId:"
    [create] = _statements_with(role_template, "ec2:CreateNetworkInterface")
    assert sorted(_flat(create["Resource"])) == [
        f"{here}network-interface/*",
        f"{here}security-group/*",
        f"{here}subnet/*",
    ]
    for action in (
        "ec2:DeleteNetworkInterfacePermission",
        "ec2:DeleteNetworkInterface",
        "ec2:CreateNetworkInterfacePermission",
    ):
        [statement] = _statements_with(role_template, action)
        assert _flat(statement["Resource"]) == [f"{here}network-interface/*"], action
    [describe] = _statements_with(role_template, "ec2:DescribeSubnets")
    assert describe["Resource"] == "*"


def _region_token_image(stack: cdk.Stack) -> str:
    return f"763104351884.dkr.ecr.{stack.region}.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


@pytest.fixture(scope="module")
def token_grants():
    """Grants on URIs holding deploy-time values, one role per case."""
    app = new_app()
    stack = cdk.Stack(app, "Tokens")
    bucket = s3.Bucket(stack, "Models")
    roles = {
        name: iam.Role(stack, name, assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        for name in ("RegionImage", "AccountImage", "BucketPrefix", "BucketObject", "KeyToken")
    }
    for _ in range(2):  # several models on one endpoint sharing an image
        add_image_pull(roles["RegionImage"], _region_token_image(stack))
    add_image_pull(
        roles["AccountImage"], f"{stack.account}.dkr.ecr.{stack.region}.amazonaws.com/own:1"
    )
    add_model_artifacts(roles["BucketPrefix"], f"s3://{bucket.bucket_name}/models/llama/", None)
    add_model_artifacts(
        roles["BucketObject"], f"s3://{bucket.bucket_name}/models/t5/model.tar.gz", None
    )
    key = cdk.Fn.import_value("ModelKey")
    add_model_artifacts(roles["KeyToken"], f"s3://{bucket.bucket_name}/{key}", None)
    template = Template.from_stack(stack)
    statements = {
        name: [
            statement
            for policy in template.find_resources("AWS::IAM::Policy").values()
            if policy["Properties"]["Roles"]
            == [{"Ref": stack.get_logical_id(role.node.default_child)}]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        ]
        for name, role in roles.items()
    }
    bucket_ref = {"Ref": stack.get_logical_id(bucket.node.default_child)}
    return statements, bucket_ref, Annotations.from_stack(stack), stack


def test_region_token_image_pulls_from_its_repository_once(token_grants):
    statements, _, _, _ = token_grants
    assert statements["RegionImage"] == [
        {
            "Action": [
                "ecr:BatchCheckLayerAvailability",
                "ecr:BatchGetImage",
                "ecr:GetDownloadUrlForLayer",
            ],
            "Effect": "Allow",
            "Resource": {
                "Fn::Join": [
                    "",
                    [
                        "arn:",
                        {"Ref": "AWS::Partition"},
                        ":ecr:",
                        {"Ref": "AWS::Region"},
                        ":763104351884:repository/djl-inference",
                    ],
                ]
            },
        }
    ]


def test_account_token_image_falls_back_to_the_accounts_repositories(token_grants):
    statements, _, _, _ = token_grants
    [pull] = statements["AccountImage"]
    assert pull["Resource"] == {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":ecr:",
                {"Ref": "AWS::Region"},
                ":",
                {"Ref": "AWS::AccountId"},
                ":repository/*",
            ],
        ]
    }


def test_bucket_token_prefix_is_read_and_listed(token_grants):
    statements, bucket_ref, annotations, _ = token_grants
    bucket_arn = ["arn:", {"Ref": "AWS::Partition"}, ":s3:::", bucket_ref]
    assert statements["BucketPrefix"] == [
        {
            "Action": "s3:GetObject",
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", [*bucket_arn, "/models/llama/*"]]},
        },
        {
            "Action": "s3:ListBucket",
            "Condition": {"StringLike": {"s3:prefix": "models/llama/*"}},
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", bucket_arn]},
        },
    ]
    annotations.has_no_warning("/Tokens/BucketPrefix", Match.string_like_regexp("no read grant"))


def test_bucket_token_object_is_read_alone(token_grants):
    statements, bucket_ref, _, _ = token_grants
    objects = ["arn:", {"Ref": "AWS::Partition"}, ":s3:::", bucket_ref, "/models/t5/model.tar.gz"]
    assert statements["BucketObject"] == [
        {"Action": "s3:GetObject", "Effect": "Allow", "Resource": {"Fn::Join": ["", objects]}}
    ]


def test_key_token_url_gets_no_grant_but_a_warning(token_grants):
    statements, _, annotations, _ = token_grants
    assert statements["KeyToken"] == []
    annotations.has_warning("/Tokens/KeyToken", Match.string_like_regexp("no read grant"))


def _statements_of(stack: cdk.Stack, role: iam.Role) -> list[dict]:
    """The statements of ``role``'s policy and of the managed policies CDK moves its
    overflow into."""
    template = Template.from_stack(stack)
    role_ref = [{"Ref": stack.get_logical_id(role.node.default_child)}]
    return [
        statement
        for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        for policy in template.find_resources(kind).values()
        if policy["Properties"]["Roles"] == role_ref
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_grants_share_statements_and_each_is_added_once():
    # A bare app: no policy minimisation merges the statements afterwards.
    stack = cdk.Stack(cdk.App(), "Shared")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    key = kms.Key(stack, "ArtifactKey")
    urls = [
        "s3://models/a/",
        "s3://models/b/",
        "s3://models/t5/model.tar.gz",
        "s3://other/c/",
    ]
    for _ in range(2):  # every model's grants twice: nothing is added the second time
        for url in urls:
            add_model_artifacts(role, url, key)
            add_image_pull(role, IMAGE)
    statements = {}
    for statement in _statements_of(stack, role):
        statements.setdefault(json.dumps(statement["Action"]), []).append(statement)
    pull_actions = [
        "ecr:BatchCheckLayerAvailability",
        "ecr:BatchGetImage",
        "ecr:GetDownloadUrlForLayer",
    ]
    [pull] = statements[json.dumps(pull_actions)]
    assert pull["Resource"] == _arn(
        ":ecr:us-west-2:763104351884:repository/huggingface-pytorch-tgi-inference"
    )
    assert len(statements['"kms:Decrypt"']) == 1
    [read] = statements['"s3:GetObject"']
    assert read["Resource"] == [
        _arn(":s3:::models/a/*"),
        _arn(":s3:::models/b/*"),
        _arn(":s3:::models/t5/model.tar.gz"),
        _arn(":s3:::other/c/*"),
    ]
    assert [(s["Resource"], s["Condition"]) for s in statements['"s3:ListBucket"']] == [
        (_arn(":s3:::models"), {"StringLike": {"s3:prefix": ["a/*", "b/*"]}}),
        (_arn(":s3:::other"), {"StringLike": {"s3:prefix": "c/*"}}),
    ]


def test_a_full_statement_is_continued_in_a_new_one():
    stack = cdk.Stack(cdk.App(), "Budget")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    prefixes = [f"models/{'m' * 60}-{index:03d}/" for index in range(60)]
    for prefix in prefixes:
        add_model_artifacts(role, f"s3://models/{prefix}", None)
    statements = _statements_of(stack, role)
    reads = [s for s in statements if s["Action"] == "s3:GetObject"]
    listings = [s for s in statements if s["Action"] == "s3:ListBucket"]
    assert len(reads) > 1 and len(listings) > 1
    for statement in reads + listings:
        assert len(json.dumps(statement)) < 3 * STATEMENT_BUDGET
    text = json.dumps(reads + listings)
    assert all(text.count(f"{prefix}*") == 2 for prefix in prefixes)  # read and listed once


def test_hosting_execution_role_returns_the_role():
    stack = cdk.Stack(new_app(), "Fn")
    role = hosting_execution_role(stack, "Hosting", images=[IMAGE])
    assert isinstance(role, iam.Role)


def test_execution_role_for_creates_a_hosting_role_or_extends_the_passed_one():
    stack = cdk.Stack(new_app(), "Roles")
    containers = [
        ModelContainer(image=IMAGE, model_data_url="s3://models/a/model.tar.gz"),
        ModelContainer(image=IMAGE),
    ]
    created = execution_role_for(
        stack, role=None, containers=containers, artifact_key=None, in_vpc=True
    )
    passed = iam.Role(stack, "Passed", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    extended = execution_role_for(
        stack, role=passed, containers=containers, artifact_key=None, in_vpc=True
    )
    assert extended is passed
    assert created.node.path == "Roles/ExecutionRole/Role"
    template = Template.from_stack(stack)
    by_role = {
        policy["Properties"]["Roles"][0]["Ref"]: policy["Properties"]["PolicyDocument"]["Statement"]
        for policy in template.find_resources("AWS::IAM::Policy").values()
    }
    passed_statements = by_role[stack.get_logical_id(passed.node.default_child)]
    assert [s["Action"] for s in passed_statements] == [
        ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
        "s3:GetObject",
    ]
    created_actions = str(by_role[stack.get_logical_id(created.node.default_child)])
    assert "ec2:CreateNetworkInterface" in created_actions
    assert "s3:GetObject" in created_actions


def test_role_and_keyless_nvme_config_are_nag_clean():
    app = new_app()
    stack = cdk.Stack(app, "Nag")
    models = SecureBucket(stack, "Models", SecureBucketProps(purpose="model artifacts"))
    hosting = HostingRole(
        stack,
        "Hosting",
        HostingRoleProps(
            images=[
                IMAGE,
                _region_token_image(stack),
                f"{stack.account}.dkr.ecr.{stack.region}.amazonaws.com/own:1",
            ],
            model_data_urls=[
                "s3://models/llama/",
                f"s3://{models.bucket.bucket_name}/models/mistral/",
                f"s3://{models.bucket.bucket_name}/models/qwen/",
            ],
            in_vpc=True,
        ),
    )
    config = sagemaker.CfnEndpointConfig(
        stack,
        "Config",
        execution_role_arn=hosting.role.role_arn,
        production_variants=[
            sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                variant_name="AllTraffic", instance_type="ml.g5.12xlarge", initial_instance_count=1
            )
        ],
    )
    assert encrypt_endpoint_config(stack, config, ["ml.g5.12xlarge"], None) is None
    assert nag_findings(app) == []

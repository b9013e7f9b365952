"""Grants and acknowledgements collected per role: what each grant adds reaches the role's
policies before aws-cdk-lib splits an oversized policy into managed policies, whatever the
app's aspect flags, and costs no call into the CDK runtime when it is made."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from fm_platform.constructs.inference.container_image import add_image_pull
from fm_platform.constructs.inference.execution_role import HostingRole
from fm_platform.constructs.inference.role_grants import (
    COLLECTED_GRANTS_PRIORITY,
    add_model_artifacts,
)
from tests.support import nag_findings, new_app

IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
# Long prefixes: 40 of them take the role's policy past the 10,000 characters after which a
# role moves statements into managed policies.
PREFIXES = [f"models/{'m' * 120}-{index:03d}/" for index in range(40)]

FLAGS = {
    f"stabilization={stabilization},mutating-priorities={mutating}": {
        "@aws-cdk/core:aspectStabilization": stabilization,
        "@aws-cdk/core:aspectPrioritiesMutating": mutating,
    }
    for stabilization in (True, False)
    for mutating in (True, False)
}


def _documents(stack: cdk.Stack, role: iam.IRole) -> dict[str, dict]:
    """The role's policy documents by kind and logical ID (its inline policy and the
    managed policies CDK moves overflow into)."""
    template = Template.from_stack(stack)
    role_ref = [{"Ref": stack.get_logical_id(role.node.default_child)}]
    return {
        f"{kind} {logical_id}": policy["Properties"]["PolicyDocument"]
        for kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        for logical_id, policy in template.find_resources(kind).items()
        if policy["Properties"]["Roles"] == role_ref
    }


def _granted(documents: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Every object pattern read and every prefix listed, in the order of the policies."""
    objects, prefixes = [], []
    for document in documents.values():
        for statement in document["Statement"]:
            actions = statement["Action"]
            actions = [actions] if isinstance(actions, str) else actions
            if "s3:GetObject" in actions:
                resources = statement["Resource"]
                for resource in resources if isinstance(resources, list) else [resources]:
                    objects.append(resource["Fn::Join"][1][-1].removeprefix(":s3:::"))
            if "s3:ListBucket" in actions:
                listed = statement["Condition"]["StringLike"]["s3:prefix"]
                prefixes += listed if isinstance(listed, list) else [listed]
    return objects, prefixes


@pytest.mark.parametrize("flags", FLAGS.values(), ids=FLAGS.keys())
def test_an_oversized_policy_is_split_with_every_collected_grant(flags):
    app = new_app(context=flags)
    stack = cdk.Stack(app, "Split")
    role = HostingRole(stack, "Hosting").role
    for prefix in PREFIXES:
        add_model_artifacts(role, f"s3://models/{prefix}", None)
        add_image_pull(role, IMAGE)
    documents = _documents(stack, role)
    # The first grants alone stay below the size that splits: the split saw them all.
    assert any(name.startswith("AWS::IAM::ManagedPolicy") for name in documents)
    objects, prefixes = _granted(documents)
    assert sorted(objects) == sorted(f"models/{prefix}*" for prefix in PREFIXES)
    assert sorted(prefixes) == sorted(f"{prefix}*" for prefix in PREFIXES)


@pytest.mark.parametrize("stabilization", [True, False], ids=["stabilization", "no-stabilization"])
def test_collected_acknowledgements_cover_every_wildcard_granted(stabilization):
    app = new_app(context={"@aws-cdk/core:aspectStabilization": stabilization})
    stack = cdk.Stack(app, "Acknowledged")
    role = HostingRole(stack, "Hosting").role
    for prefix in PREFIXES[:5]:
        add_model_artifacts(role, f"s3://models/{prefix}", None)
    assert not [f for f in nag_findings(app) if "Hosting" in f]


def test_an_imported_role_gets_every_collected_grant():
    stack = cdk.Stack(new_app(), "Imported")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::111122223333:role/hosting")
    for prefix in PREFIXES[:12]:
        add_model_artifacts(role, f"s3://models/{prefix}", None)
    objects, prefixes = _granted(_documents_of_imported(stack))
    assert objects == [f"models/{prefix}*" for prefix in PREFIXES[:12]]
    assert prefixes == [f"{prefix}*" for prefix in PREFIXES[:12]]


def _documents_of_imported(stack: cdk.Stack) -> dict[str, dict]:
    template = Template.from_stack(stack)
    return {
        logical_id: policy["Properties"]["PolicyDocument"]
        for logical_id, policy in template.find_resources("AWS::IAM::Policy").items()
    }


def test_grants_that_continue_a_statement_are_merged_into_it():
    app = new_app()
    stack = cdk.Stack(app, "Calls")
    role = HostingRole(stack, "Hosting").role
    short = [f"models/m{index:02d}/" for index in range(20)]
    add_model_artifacts(role, f"s3://models/{short[0]}", None)  # starts the statements
    for prefix in short[1:]:
        add_model_artifacts(role, f"s3://models/{prefix}", None)
    objects, prefixes = _granted(_documents(stack, role))
    assert objects == [f"models/{prefix}*" for prefix in short]
    assert prefixes == [f"{prefix}*" for prefix in short]


def test_collected_grants_are_added_before_any_aspect_of_aws_cdk_lib():
    assert COLLECTED_GRANTS_PRIORITY < cdk.AspectPriority.MUTATING

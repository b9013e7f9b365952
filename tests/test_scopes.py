"""Stack values looked up once: the ARNs written from them are the ones CDK builds."""

from __future__ import annotations

import aws_cdk as cdk
import pytest

from fm_platform.core.scopes import account_of, arn_in, partition_of, region_of, stack_of

ENVIRONMENTS = {
    "agnostic": None,
    "us-east-1": cdk.Environment(account="111122223333", region="us-east-1"),
    "cn-north-1": cdk.Environment(account="111122223333", region="cn-north-1"),
}


@pytest.mark.parametrize("env", ENVIRONMENTS.values(), ids=ENVIRONMENTS.keys())
def test_arn_in_is_what_format_arn_builds(env):
    stack = cdk.Stack(cdk.App(), "Values", env=env)
    for separator, arn_format in (
        (":", cdk.ArnFormat.COLON_RESOURCE_NAME),
        ("/", cdk.ArnFormat.SLASH_RESOURCE_NAME),
    ):
        expected = stack.format_arn(
            service="logs", resource="log-group", resource_name="/x/*", arn_format=arn_format
        )
        assert arn_in(stack, "logs", "log-group", "/x/*", separator) == expected
        assert stack.resolve(arn_in(stack, "logs", "log-group", "/x/*", separator)) == (
            stack.resolve(expected)
        )


def test_stack_values_are_the_stacks():
    stack = cdk.Stack(cdk.App(), "Once")
    child = cdk.CfnResource(stack, "Thing", type="Custom::Thing")
    values = (stack_of(child), partition_of(stack), region_of(stack), account_of(stack))
    assert values == (stack, stack.partition, stack.region, stack.account)

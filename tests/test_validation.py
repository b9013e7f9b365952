"""The shared validation helpers and the rules read from botocore."""

from __future__ import annotations

import aws_cdk as cdk
import jsii
import pytest

from fm_platform import validation
from fm_platform.specs.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.specs.sagemaker_model import enum_values, shape_rule
from fm_platform.validation import Problems, is_unresolved


def test_problems_are_raised_together_naming_field_value_and_what_is_allowed():
    problems = Problems("ThingProps")
    problems.check_range("count", 0, 1, 10)
    problems.check_choice("colour", "mauve", ("red", "blue"))
    problems.check_unique("names", ["a", "b", "a"])
    problems.check_shape("name", "bad_name", "ClusterName")
    with pytest.raises(ValueError) as error:
        problems.raise_if_any()
    assert str(error.value).splitlines() == [
        "invalid ThingProps:",
        "  - count=0: must be between 1 and 10",
        "  - colour='mauve': must be one of red, blue",
        "  - names='a': must be unique; it appears more than once",
        "  - name='bad_name': has characters or a shape not allowed; allowed: matching "
        "[a-zA-Z0-9](-*[a-zA-Z0-9])*; 1-63 characters",
    ]


def test_no_problems_raise_nothing_and_tokens_are_skipped():
    problems = Problems("ThingProps")
    problems.check_range("count", cdk.Token.as_number(cdk.Aws.NO_VALUE), 1, 10)
    problems.check_shape("name", cdk.Aws.STACK_NAME, "ClusterName")
    problems.check_choice("colour", None, ("red",))
    assert not problems
    problems.raise_if_any()


def test_shape_rules_come_from_botocore():
    assert "ml.trn1.32xlarge" in enum_values("ClusterInstanceType")
    assert "ml.g5.12xlarge" in enum_values("ProductionVariantInstanceType")
    rule = shape_rule("EndpointName")
    assert rule.max == 63
    assert rule.problem("a" * 64) == "longer than 63 characters"
    assert rule.problem("ok-name") is None


def test_instance_specs_cover_the_seed_types_and_name_how_to_add_one():
    g5 = instance_spec("ml.g5.12xlarge")
    assert (g5.accelerator, g5.accelerator_count, g5.local_nvme) == ("nvidia-gpu", 4, True)
    assert instance_spec("ml.trn1.32xlarge").efa_interfaces == 8
    with pytest.raises(UnknownInstanceTypeError, match="regenerate_instance_specs.py --add"):
        instance_spec("ml.banana.xlarge")


def test_is_unresolved_answers_plain_values_without_asking_the_cdk_runtime(monkeypatch):
    asked = []

    class CountingToken:
        @staticmethod
        def is_unresolved(value):
            asked.append(value)
            return cdk.Token.is_unresolved(value)

    monkeypatch.setattr(validation, "Token", CountingToken)
    validation._string_is_unresolved.cache_clear()
    plain = (None, True, False, 0, 7, 2.5, -1e300, "", "ml.g5.xlarge", "${Token}")
    assert [is_unresolved(value) for value in plain] == [False] * len(plain)
    assert asked == []
    region = cdk.Aws.REGION
    assert is_unresolved(region) and is_unresolved(region)
    assert asked == [region]  # a string is asked about once
    assert not is_unresolved("Token[not a token]")
    assert is_unresolved(cdk.Token.as_number(cdk.Fn.ref("Count")))
    assert is_unresolved(cdk.Fn.get_azs())
    assert is_unresolved(cdk.Lazy.any(_Produce()))
    assert not is_unresolved(["a", "b"])


@jsii.implements(cdk.IAnyProducer)
class _Produce:
    def produce(self, context):
        return 1

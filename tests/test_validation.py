"""The problem collector, the token check at the constructs' boundary, and the rules read
from botocore."""

from __future__ import annotations

import dataclasses

import aws_cdk as cdk
import jsii
import pytest

from fm_platform.core import tokens
from fm_platform.core.tokens import is_unresolved, without_tokens
from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.problems import Problems, ValidationError, did_you_mean
from fm_platform.rules.sagemaker_model import enum_values, shape_rule


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
        "  - name='bad_name': underscores are not allowed; allowed: matching "
        "[a-zA-Z0-9](-*[a-zA-Z0-9])*; 1-63 characters",
    ]


def test_no_problems_raise_nothing_and_unset_values_are_skipped():
    problems = Problems("ThingProps")
    problems.check_range("count", None, 1, 10)
    problems.check_shape("name", None, "ClusterName")
    problems.check_choice("colour", None, ("red",))
    problems.check_unique("names", ["a", None, None])
    assert not problems
    problems.raise_if_any()


def test_tokens_become_unset_values_at_the_constructs_boundary():
    @dataclasses.dataclass(frozen=True)
    class Inner:
        name: str

    @dataclasses.dataclass(frozen=True)
    class Options:
        count: int
        name: str
        names: tuple[str, ...]
        inner: Inner
        plain: str

    options = Options(
        count=cdk.Token.as_number(cdk.Aws.NO_VALUE),
        name=cdk.Aws.STACK_NAME,
        names=("a", cdk.Aws.REGION),
        inner=Inner(name=cdk.Aws.ACCOUNT_ID),
        plain="kept",
    )
    assert without_tokens(options) == Options(
        count=None, name=None, names=("a", None), inner=Inner(name=None), plain="kept"
    )
    unchanged = Options(count=1, name="n", names=("a",), inner=Inner(name="i"), plain="p")
    assert without_tokens(unchanged) is unchanged


def test_shape_rules_come_from_botocore():
    assert "ml.trn1.32xlarge" in enum_values("ClusterInstanceType")
    assert "ml.g5.12xlarge" in enum_values("ProductionVariantInstanceType")
    rule = shape_rule("EndpointName")
    assert rule.max == 63
    assert rule.problem("a" * 64) == "too long: at most 63 characters, it has 64"
    assert rule.problem("ok-name") is None


def test_instance_specs_cover_the_seed_types_and_name_how_to_add_one():
    g5 = instance_spec("ml.g5.12xlarge")
    assert (g5.accelerator, g5.accelerator_count, g5.local_nvme) == ("nvidia-gpu", 4, True)
    assert instance_spec("ml.trn1.32xlarge").efa_interfaces == 8
    with pytest.raises(UnknownInstanceTypeError, match="regenerate_instance_specs.py --add"):
        instance_spec("ml.banana.xlarge")


def test_a_scoped_view_prefixes_fields_and_leaves_raising_to_the_owner():
    problems = Problems("configuration")
    view = problems.scoped("inference.ic_endpoints[1].", about="endpoint 'e'")
    view.add("instance_type", "ml.bad", "not offered")
    inner = view.scoped("models[0].", about="model 'm' on endpoint 'e'")
    inner.add("accelerators", 9, "too many")
    view.raise_if_any()  # a view does not raise
    assert view and len(view) == 2 and len(inner) == 1
    assert problems.messages == (
        "inference.ic_endpoints[1].instance_type='ml.bad' (endpoint 'e'): not offered",
        "inference.ic_endpoints[1].models[0].accelerators=9 (model 'm' on endpoint 'e'): too many",
    )
    with pytest.raises(ValidationError) as error:
        problems.raise_if_any()
    assert error.value.problems == problems.messages


def test_views_count_only_their_own_problems_and_repeats_are_reported_once():
    problems = Problems("configuration")
    first, second = problems.scoped("a."), problems.scoped("a.")
    first.add("x", 1, "bad")
    second.add("x", 1, "bad")  # the same problem from another check: one line
    second.add("x", 1, "bad in another way")
    assert (len(first), len(second), bool(Problems.within(problems, "X"))) == (1, 2, False)
    assert problems.messages == ("a.x=1: bad", "a.x=1: bad in another way")


def test_within_without_a_collection_raises_for_its_subject():
    problems = Problems.within(None, "ThingProps")
    problems.add("count", 0, "must be positive")
    with pytest.raises(ValueError, match="invalid ThingProps:\n  - count=0: must be positive"):
        problems.raise_if_any()


def test_long_enums_get_the_closest_values_not_the_whole_list():
    problems = Problems("X")
    problems.check_shape("instance_type", "ml.trn1.32xl", "ClusterInstanceType")
    problems.check_choice("colour", "bleu", [f"c{n}" for n in range(20)] + ["blue"])
    (shape, choice) = problems.messages
    assert shape.endswith(
        "not among the 209 values of botocore's ClusterInstanceType; did you mean "
        "ml.trn1.32xlarge or ml.trn1n.32xlarge?"
    )
    assert choice == "colour='bleu': not one of the 21 allowed values; did you mean blue?"
    assert did_you_mean("zzzz", ["alpha", "beta"]) == ""


def test_is_unresolved_answers_plain_values_without_asking_the_cdk_runtime(monkeypatch):
    asked = []

    class CountingToken:
        @staticmethod
        def is_unresolved(value):
            asked.append(value)
            return cdk.Token.is_unresolved(value)

    monkeypatch.setattr(tokens, "Token", CountingToken)
    tokens._string_is_unresolved.cache_clear()
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

"""Input validation shared by every construct.

A construct collects every problem in its props into one :class:`Problems` and raises a
single ``ValueError`` listing them all, each naming the field, the bad value and what is
allowed. Values that are unresolved CDK tokens are skipped: they are only known at deploy
time.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from functools import lru_cache

from aws_cdk import Token

from fm_platform.specs.sagemaker_model import shape_rule

# How aws-cdk-lib encodes tokens (core/lib/private/encoding.ts): a string token carries a
# "${Token[...]}" or "#{Token[...]}" marker, and CDK's own test first looks for "Token[";
# a number token is a double whose 16 highest bits are 0xFBFF.
_STRING_TOKEN_MARKER = "Token["
_NUMBER_TOKEN_BITS = 0xFBFF


def is_unresolved(value: object) -> bool:
    """True for CDK tokens (deploy-time values) that cannot be checked at synth time.

    None, booleans, numbers and strings without a token marker are answered here; only
    other values ask the CDK runtime (``Token.is_unresolved``), strings once each.
    """
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str):
        return _STRING_TOKEN_MARKER in value and _string_is_unresolved(value)
    if isinstance(value, int | float) and not _may_be_number_token(value):
        return False
    return Token.is_unresolved(value)


@lru_cache(maxsize=8192)
def _string_is_unresolved(value: str) -> bool:
    # The answer depends on the text alone, so it is remembered.
    return Token.is_unresolved(value)


def _may_be_number_token(value: float) -> bool:
    try:
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    except OverflowError:
        return True  # not a double: let the runtime answer
    return bits >> 48 == _NUMBER_TOKEN_BITS


class Problems:
    """Collects validation problems for one construct, then raises them together."""

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self._messages: list[str] = []

    def add(self, field: str, value: object, allowed: str) -> None:
        """Record that ``field`` has the bad ``value``; ``allowed`` says what would do."""
        self._messages.append(f"{field}={value!r}: {allowed}")

    def check_shape(self, field: str, value: object, shape_name: str) -> None:
        """Check ``value`` against the botocore SageMaker shape ``shape_name``."""
        if value is None or is_unresolved(value):
            return
        rule = shape_rule(shape_name)
        why = rule.problem(value)
        if why is not None:
            self.add(field, value, f"{why}; allowed: {rule.describe_allowed()}")

    def check_range(self, field: str, value: int | None, low: int, high: int | None) -> None:
        """Check that an integer lies in ``[low, high]`` (no upper bound if ``high`` is None)."""
        if value is None or is_unresolved(value):
            return
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            self.add(field, value, f"must be {bound}")

    def check_choice(self, field: str, value: object, choices: Iterable[object]) -> None:
        """Check that ``value`` is one of ``choices``."""
        if value is None or is_unresolved(value):
            return
        options = list(choices)
        if value not in options:
            self.add(field, value, "must be one of " + ", ".join(str(c) for c in options))

    def check_unique(self, field: str, values: Iterable[str]) -> None:
        """Report each value that appears more than once."""
        seen: set[str] = set()
        for value in values:
            if value in seen:
                self.add(field, value, "must be unique; it appears more than once")
            seen.add(value)

    def __bool__(self) -> bool:
        return bool(self._messages)

    @property
    def messages(self) -> tuple[str, ...]:
        return tuple(self._messages)

    def raise_if_any(self) -> None:
        """Raise one ``ValueError`` listing every problem, if there are any."""
        if self._messages:
            listing = "\n".join(f"  - {m}" for m in self._messages)
            raise ValueError(f"invalid {self.subject}:\n{listing}")

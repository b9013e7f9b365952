"""CDK tokens at the constructs' boundary: values known only at deploy time.

The rules (:mod:`fm_platform.rules`) check plain values and skip ``None``; a construct
first replaces every unresolved token in its options with ``None``
(:func:`without_tokens`), so that a CloudFormation parameter or another resource's
attribute always synthesizes and is left to CloudFormation to check.
"""

from __future__ import annotations

import dataclasses
import struct
from functools import lru_cache
from typing import Any, TypeVar

from aws_cdk import Token

T = TypeVar("T")

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
    return bool(Token.is_unresolved(value))


@lru_cache(maxsize=8192)
def _string_is_unresolved(value: str) -> bool:
    # The answer depends on the text alone, so it is remembered.
    return bool(Token.is_unresolved(value))


def _may_be_number_token(value: float) -> bool:
    try:
        bits: int = struct.unpack("<Q", struct.pack("<d", value))[0]
    except OverflowError:
        return True  # not a double: let the runtime answer
    return bits >> 48 == _NUMBER_TOKEN_BITS


def known(value: T) -> T | None:
    """``value``, or None when it is a token."""
    return None if is_unresolved(value) else value


def without_tokens(options: T) -> T:
    """``options`` (a dataclass of plain values) with every unresolved token replaced by
    ``None``, in nested options and lists too. Values of other types (constructs,
    interfaces) are kept as they are."""
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        return options
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(options):
        if not item.init:
            continue
        value = getattr(options, item.name)
        plain = _plain(value)
        if plain is not value:
            changes[item.name] = plain
    return dataclasses.replace(options, **changes) if changes else options


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str | int | float):
        return None if is_unresolved(value) else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return without_tokens(value)
    if isinstance(value, list | tuple):
        items = [_plain(item) for item in value]
        if any(a is not b for a, b in zip(items, value, strict=True)):
            return type(value)(items)
    return value

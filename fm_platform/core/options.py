"""How constructs take their options: plain values (``XxxOptions``, shared with the app's
configuration) checked by the rules, and references to other resources (``XxxProps``,
which extend the options).

A construct's props are checked in three steps (:func:`checked`): values of the wrong
Python type are reported and become ``None``, values that are CDK tokens become ``None``
(known only at deploy time, so left to CloudFormation), then the rules run on what is
left, so that one error lists every problem.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from fm_platform.core.tokens import is_unresolved, without_tokens
from fm_platform.rules.problems import Problems
from fm_platform.rules.types import well_typed

T = TypeVar("T")


def checked(problems: Problems, props: T) -> T:
    """``props`` ready for the rules: values of the wrong type (recorded in ``problems``)
    and tokens replaced by ``None``."""
    return without_tokens(well_typed(problems, props, unknown=is_unresolved))


def options_values(options_cls: type, source: object) -> dict[str, Any]:
    """The values of ``options_cls``'s fields, read from ``source`` (an options object, or a
    configuration item that extends the options class)."""
    return {
        item.name: getattr(source, item.name)
        for item in dataclasses.fields(options_cls)
        if item.init
    }

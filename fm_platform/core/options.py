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
from abc import ABC, abstractmethod
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


class Props(ABC):
    """The base of every construct's props (``XxxProps``, listed last among its bases):
    :meth:`validate`, the one way props are checked.

    A props class says what it checks in :meth:`_check`; by default the rules of its
    options (:meth:`check`) on the values :func:`checked` leaves. Override ``_check`` for
    what the props add (references, combinations of fields), and :meth:`_subject` when the
    problems should name more than the class (an alarm's label, say).
    """

    @abstractmethod
    def check(self, problems: Problems) -> None:
        """Record every problem of the plain options in ``problems`` (the options class
        defines it)."""

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem with these props. With ``into``,
        record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, self._subject())
        self._check(problems)
        problems.raise_if_any()

    def _subject(self) -> str:
        """What the problems are about: by default the props class's name."""
        return type(self).__name__

    def _check(self, problems: Problems) -> None:
        """Record every problem with these props in ``problems``."""
        checked(problems, self).check(problems)

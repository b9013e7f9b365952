"""Input validation shared by every construct and by the app's configuration.

A construct collects every problem in its props into one :class:`Problems` and raises a
single ``ValueError`` listing them all, each naming the field, the bad value and what is
allowed. Values that are unresolved CDK tokens are skipped: they are only known at deploy
time.

The app's configuration runs the same checks before it builds anything: it hands each
props object a view of one shared collection (:meth:`Problems.scoped`) that renames the
props' fields to the configuration keys the user wrote, so a whole configuration's
problems come out in one message.
"""

from __future__ import annotations

import difflib
import re
import struct
from collections.abc import Iterable, Mapping
from functools import lru_cache

from aws_cdk import Token

from fm_platform.specs.sagemaker_model import shape_rule

# Enums longer than this are not listed in a message; the closest values are suggested.
_MAX_LISTED_CHOICES = 12
# Suggestions: at least this similar (difflib ratio), and within _NEAR of the best one.
_MIN_SIMILARITY = 0.6
_NEAR = 0.05
_HEAD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*")

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
        bits: int = struct.unpack("<Q", struct.pack("<d", value))[0]
    except OverflowError:
        return True  # not a double: let the runtime answer
    return bits >> 48 == _NUMBER_TOKEN_BITS


def closest(value: object, choices: Iterable[str], count: int = 3) -> list[str]:
    """The ``choices`` closest to ``value`` by spelling, best first: at most ``count``, and
    only those nearly as close as the best one."""
    if not isinstance(value, str):
        return []
    scored = []
    for choice in choices:
        matcher = difflib.SequenceMatcher(None, value.lower(), choice.lower())
        if matcher.real_quick_ratio() >= _MIN_SIMILARITY and matcher.ratio() >= _MIN_SIMILARITY:
            scored.append((matcher.ratio(), choice))
    scored.sort(key=lambda item: (-item[0], item[1]))
    if not scored:
        return []
    best = scored[0][0]
    return [choice for ratio, choice in scored[:count] if ratio >= best - _NEAR]


def did_you_mean(value: object, choices: Iterable[str]) -> str:
    """``"did you mean X?"`` (or ``"X or Y"``) for the closest ``choices``; empty if none is
    close."""
    found = closest(value, choices)
    if not found:
        return ""
    listed = found[0] if len(found) == 1 else ", ".join(found[:-1]) + " or " + found[-1]
    return f"did you mean {listed}?"


def describe_choices(value: object, choices: Iterable[object]) -> str:
    """What to say about a value not among ``choices``: all of them when they are few, else
    the closest ones."""
    options = [str(choice) for choice in choices]
    if len(options) <= _MAX_LISTED_CHOICES:
        return "must be one of " + ", ".join(options)
    hint = did_you_mean(value, options)
    return f"not one of the {len(options)} allowed values" + (f"; {hint}" if hint else "")


class ValidationError(ValueError):
    """Bad input: one error listing every problem found (``problems``: one line each)."""

    def __init__(self, subject: str, problems: tuple[str, ...]) -> None:
        listing = "\n".join(f"  - {m}" for m in problems)
        super().__init__(f"invalid {subject}:\n{listing}")
        self.subject = subject
        self.problems = problems


class Problems:
    """Collects validation problems, then raises them together.

    A view made by :meth:`scoped` records into the collection it came from under renamed
    fields, and leaves raising to that collection's owner.
    """

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self._messages: list[str] = []
        self._parent: Problems | None = None
        self._prefix = ""
        self._fields: Mapping[str, str | None] = {}
        self._about = ""
        self._count = 0

    @classmethod
    def within(cls, into: Problems | None, subject: str) -> Problems:
        """A new collection for ``subject``, or, when ``into`` is given, a view recording
        into it (whose :meth:`raise_if_any` leaves raising to ``into``'s owner)."""
        return cls(subject) if into is None else into.scoped("")

    def scoped(
        self, prefix: str, *, fields: Mapping[str, str | None] | None = None, about: str = ""
    ) -> Problems:
        """A view recording into this collection. A field is renamed by ``fields``: an entry
        for the whole field name, else for its first part (the name before the first ``.``
        or ``[``, the rest kept), else it gets ``prefix`` in front. A field mapped to None is
        not recorded (the collection checks that setting elsewhere). ``about`` (e.g.
        "endpoint 'shared-g5'") is written after the value."""
        view = Problems(self.subject)
        view._parent = self
        view._prefix = prefix
        view._fields = dict(fields or {})
        view._about = about
        return view

    def _rename(self, field: str) -> str | None:
        if field in self._fields:
            return self._fields[field]
        head = _HEAD.match(field)
        if head and head.group(0) in self._fields:
            renamed = self._fields[head.group(0)]
            return None if renamed is None else renamed + field[head.end() :]
        return self._prefix + field

    def add(self, field: str, value: object, allowed: str) -> None:
        """Record that ``field`` has the bad ``value``; ``allowed`` says what would do."""
        self._record(field, value, allowed, "")

    def _record(self, field: str, value: object, allowed: str, about: str) -> None:
        self._count += 1
        about = about or self._about
        if self._parent is not None:
            renamed = self._rename(field)
            if renamed is not None:
                self._parent._record(renamed, value, allowed, about)
            return
        where = f" ({about})" if about else ""
        message = f"{field}={value!r}{where}: {allowed}"
        # Two constructs checking one setting report it once.
        if message not in self._messages:
            self._messages.append(message)

    def check_shape(self, field: str, value: object, shape_name: str) -> None:
        """Check ``value`` against the botocore SageMaker shape ``shape_name``."""
        if value is None or is_unresolved(value):
            return
        rule = shape_rule(shape_name)
        why = rule.problem(value)
        if why is None:
            return
        if len(rule.enum) > _MAX_LISTED_CHOICES:
            hint = did_you_mean(value, rule.enum)
            self.add(
                field,
                value,
                f"{why}: not among the {len(rule.enum)} values of botocore's {shape_name}"
                + (f"; {hint}" if hint else ""),
            )
        else:
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
            self.add(field, value, describe_choices(value, options))

    def check_unique(self, field: str, values: Iterable[str]) -> None:
        """Report each value that appears more than once."""
        seen: set[str] = set()
        for value in values:
            if value in seen:
                self.add(field, value, "must be unique; it appears more than once")
            seen.add(value)

    def __bool__(self) -> bool:
        """True when problems were recorded (through this view, for a view)."""
        return self._count > 0

    def __len__(self) -> int:
        return self._count

    @property
    def messages(self) -> tuple[str, ...]:
        """One line per problem (of the whole collection, for a view)."""
        root = self
        while root._parent is not None:
            root = root._parent
        return tuple(root._messages)

    def error(self) -> ValidationError:
        """The error listing every problem recorded so far."""
        return ValidationError(self.subject, self.messages)

    def raise_if_any(self) -> None:
        """Raise one :class:`ValidationError` listing every problem, if there are any; a
        view leaves that to the collection it records into."""
        if self._parent is None and self._messages:
            raise self.error()

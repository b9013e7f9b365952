"""The problem collector every rule records into, and the error it raises.

A rule records ``(field, value, allowed)``: the field as the user wrote it, the bad value
and what would do. A construct collects every problem of its props into one
:class:`Problems` and raises a single :class:`ValidationError` listing them all; the app's
configuration check records into one collection through views (:meth:`Problems.scoped`)
that put the configuration key in front of each field, so a whole configuration's problems
come out in one message.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from fm_platform.rules.sagemaker_model import shape_rule

# Enums longer than this are not listed in a message; the closest values are suggested.
MAX_LISTED_CHOICES = 12
# Suggestions: at least this similar (difflib ratio), and within _NEAR of the best one.
_MIN_SIMILARITY = 0.6
_NEAR = 0.05


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
    if len(options) <= MAX_LISTED_CHOICES:
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
    """Collects problems, then raises them together.

    ``None`` is never a problem for the ``check_*`` helpers: a rule skips a value that is
    unset or known only at deploy time (constructs pass ``None`` for CDK tokens). A view
    made by :meth:`scoped` records into the collection it came from, with a prefix in front
    of each field, and leaves raising to that collection's owner.
    """

    def __init__(self, subject: str) -> None:
        self.subject = subject
        self._messages: list[str] = []
        self._parent: Problems | None = None
        self._prefix = ""
        self._about = ""
        self._count = 0

    @classmethod
    def within(cls, into: Problems | None, subject: str) -> Problems:
        """A new collection for ``subject``, or, when ``into`` is given, a view recording
        into it (whose :meth:`raise_if_any` leaves raising to ``into``'s owner)."""
        return cls(subject) if into is None else into.scoped("")

    def scoped(self, prefix: str, *, about: str = "") -> Problems:
        """A view recording into this collection with ``prefix`` in front of every field
        (``"inference.ic_endpoints[0]."``). ``about`` (e.g. "endpoint 'shared-g5'") is
        written after the value; an inner view's ``about`` wins."""
        view = Problems(self.subject)
        view._parent = self
        view._prefix = prefix
        view._about = about
        return view

    def add(self, field: str, value: object, allowed: str) -> None:
        """Record that ``field`` has the bad ``value``; ``allowed`` says what would do."""
        self._record(field, value, allowed, "")

    def _record(self, field: str, value: object, allowed: str, about: str) -> None:
        self._count += 1
        about = about or self._about
        if self._parent is not None:
            self._parent._record(self._prefix + field, value, allowed, about)
            return
        where = f" ({about})" if about else ""
        message = f"{field}={value!r}{where}: {allowed}"
        # Two rules reporting one setting the same way report it once.
        if message not in self._messages:
            self._messages.append(message)

    def check_range(self, field: str, value: float | None, low: float, high: float | None) -> None:
        """Check that a number lies in ``[low, high]`` (no upper bound if ``high`` is None)."""
        if value is None:
            return
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            self.add(field, value, f"must be {bound}")

    def check_choice(self, field: str, value: object, choices: Iterable[object]) -> None:
        """Check that ``value`` is one of ``choices``."""
        if value is None:
            return
        options = list(choices)
        if value not in options:
            self.add(field, value, describe_choices(value, options))

    def check_unique(self, field: str, values: Iterable[str | None]) -> None:
        """Report each value that appears more than once."""
        seen: set[str] = set()
        for value in values:
            if value is None:
                continue
            if value in seen:
                self.add(field, value, "must be unique; it appears more than once")
            seen.add(value)

    def check_shape(self, field: str, value: object, shape_name: str) -> None:
        """Check ``value`` against botocore's SageMaker shape ``shape_name`` (its enum,
        length, pattern or numeric range); a long enum is not listed, its closest values
        are suggested."""
        if value is None:
            return
        rule = shape_rule(shape_name)
        why = rule.problem(value)
        if why is None:
            return
        if len(rule.enum) > MAX_LISTED_CHOICES:
            hint = did_you_mean(value, rule.enum)
            self.add(
                field,
                value,
                f"{why}: not among the {len(rule.enum)} values of botocore's {shape_name}"
                + (f"; {hint}" if hint else ""),
            )
        else:
            self.add(field, value, f"{why}; allowed: {rule.describe_allowed()}")

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


def repeats(pairs: Iterable[tuple[str, str | None]]) -> Iterator[tuple[str, str, str]]:
    """Each ``(field, value)`` of ``pairs`` whose value an earlier pair had, with the field
    of its first appearance: ``(field, value, first_field)``; None values are skipped."""
    first: dict[str, str] = {}
    for field, value in pairs:
        if value is None:
            continue
        if value in first:
            yield field, value, first[value]
        else:
            first[value] = field

"""Python types of option fields, checked from their annotations.

One reading of the annotations serves both entries: :func:`well_typed` checks an options
object built in Python (``accelerators="2"`` names the field, the expected type and the
value), and :mod:`fm_platform.mapping` uses :func:`describe` and :func:`accepts` for values
read from a configuration file. Only plain types are checked: numbers, strings, booleans,
enums, literals, nested options (dataclasses) and lists or mappings of them. Anything else
(a CDK construct interface, for instance) is left to the code that uses it.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")

_SCALARS: dict[Any, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
}
_SEQUENCES = (tuple, list, Sequence)
_MAPPINGS = (dict, Mapping)


@cache
def field_hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of dataclass ``cls``'s fields, each read in the module of
    the class that declares it (a name that cannot be resolved, e.g. one imported only for
    type checkers, reads as ``Any``: not checked)."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        module = vars(sys.modules[klass.__module__]) if klass.__module__ in sys.modules else {}
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if isinstance(annotation, str):
                try:
                    annotation = eval(annotation, module, dict(vars(klass)))  # noqa: S307
                except Exception:  # noqa: BLE001 - unresolvable: leave unchecked
                    annotation = Any
            hints[name] = annotation
    return hints


def union_members(hint: Any) -> tuple[Any, ...] | None:
    """The members of a ``X | Y`` / ``Optional`` hint, or None for other hints."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return None


def describe(hint: Any) -> str:
    """What a value of ``hint`` is, in words: ``"an integer or null"``."""
    members = union_members(hint)
    if members is not None:
        parts = [describe(m) for m in members if m is not type(None)]
        if type(None) in members:
            parts.append("null")
        return " or ".join(dict.fromkeys(parts))
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(v) for v in typing.get_args(hint))
    if origin in _SEQUENCES or hint in _SEQUENCES:
        return "a list"
    if origin in _MAPPINGS or hint in _MAPPINGS:
        return "a mapping"
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"a {hint.__name__} (" + ", ".join(f"{hint.__name__}.{m.name}" for m in hint) + ")"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"a {hint.__name__}"
    if isinstance(hint, type):
        return f"a {hint.__name__}"
    return str(hint)


def accepts(hint: Any, value: object) -> bool:
    """Whether ``value`` has the type ``hint`` names (elements of lists and mappings
    included); hints this module does not check accept anything."""
    if hint is Any or hint is object:
        return True
    members = union_members(hint)
    if members is not None:
        return any(accepts(member, value) for member in members)
    if hint is type(None) or hint is None:
        return value is None
    if hint in _SCALARS:
        return _scalar(hint, value)
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return isinstance(value, str | int) and not isinstance(value, bool)
    if origin in _SEQUENCES or hint in _SEQUENCES:
        if not isinstance(value, list | tuple):
            return False
        element = _element_hint(hint)
        return all(accepts(element, item) for item in value)
    if origin in _MAPPINGS or hint in _MAPPINGS:
        if not isinstance(value, Mapping):
            return False
        args = typing.get_args(hint)
        return len(args) != 2 or all(
            accepts(args[0], k) and accepts(args[1], v) for k, v in value.items()
        )
    if isinstance(hint, type):
        try:
            return isinstance(value, hint)
        except TypeError:  # protocols and other types isinstance cannot answer
            return True
    return True


def _scalar(hint: type, value: object) -> bool:
    # Booleans are integers to Python: accept them only where a boolean belongs.
    if isinstance(value, bool):
        return hint is bool
    if hint is float:
        return isinstance(value, int | float)
    return isinstance(value, hint)


def _element_hint(hint: Any) -> Any:
    args = typing.get_args(hint)
    if not args:
        return Any
    return args[0]


def well_typed(
    problems: Any,
    options: T,
    prefix: str = "",
    unknown: Callable[[object], bool] = lambda value: False,
) -> T:
    """``options`` (a dataclass) with every field whose value is not of its annotated type
    recorded in ``problems`` (``accelerators='2': must be an integer``) and set to None, so
    that the rules can check the rest. Nested options and lists of them are checked field
    by field, under ``<field>.`` and ``<field>[i].``. Values for which ``unknown`` is true
    (values known only at deploy time) are not checked."""
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        return options
    hints = field_hints(type(options))
    changes: dict[str, Any] = {}
    for item in dataclasses.fields(options):
        if not item.init or item.name not in hints:
            continue
        value = getattr(options, item.name)
        hint = hints[item.name]
        if isinstance(value, str | int | float) and unknown(value):
            continue
        if not accepts(hint, value):
            problems.add(f"{prefix}{item.name}", value, f"must be {describe(hint)}")
            changes[item.name] = None
            continue
        checked = _nested(problems, value, f"{prefix}{item.name}", unknown)
        if checked is not value:
            changes[item.name] = checked
    return dataclasses.replace(options, **changes) if changes else options


def _nested(problems: Any, value: Any, field: str, unknown: Callable[[object], bool]) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return well_typed(problems, value, f"{field}.", unknown)
    if isinstance(value, list | tuple) and any(dataclasses.is_dataclass(v) for v in value):
        checked = [_nested(problems, v, f"{field}[{i}]", unknown) for i, v in enumerate(value)]
        if any(c is not v for c, v in zip(checked, value, strict=True)):
            return type(value)(checked)
    return value

"""Typed configuration from JSON-like mappings (a config file, ``cdk.json`` context).

Unknown keys, missing required keys and values of the wrong JSON type become problems that
name the key, the value and what is allowed, so a typo in a config file fails the synth
with one clear message instead of a traceback.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from fm_platform.validation import Problems, did_you_mean

T = TypeVar("T")

# JSON types a scalar annotation accepts, and how to say so.
_SCALARS: dict[Any, tuple[tuple[type, ...], str]] = {
    int: ((int,), "an integer"),
    float: ((int, float), "a number"),
    str: ((str,), "a string"),
    bool: ((bool,), "true or false"),
}
_CONTAINERS: dict[Any, tuple[tuple[type, ...], str]] = {
    tuple: ((list, tuple), "a list"),
    Sequence: ((list, tuple), "a list"),
    Mapping: ((dict,), "a mapping"),
    dict: ((dict,), "a mapping"),
}


def dataclass_values(
    problems: Problems,
    where: str,
    data: Any,
    cls: type,
    *,
    allowed: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The entries of ``data`` that are fields of dataclass ``cls`` (or of ``allowed``).

    Records in ``problems``, each under ``<where><key>``: ``data`` not being a mapping,
    unknown keys (with the closest allowed key), missing required fields, and values whose
    JSON type does not match the field's annotation (checked for scalars, lists and
    mappings; nested specs are left to the caller, who builds them). Unknown keys and
    wrongly typed values are left out of the result.
    """
    if not isinstance(data, Mapping):
        problems.add(
            where.rstrip(".") or cls.__name__,
            data,
            "must be a mapping (a JSON object) of " + ", ".join(_names(cls, allowed)),
        )
        return {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    names = _names(cls, allowed)
    for key in data:
        if key not in names:
            hint = did_you_mean(key, names)
            problems.add(
                f"{where}{key}",
                data[key],
                "unknown key; " + (hint or "allowed keys: " + ", ".join(names)),
            )
    missing = [
        name
        for name in names
        if name not in data
        and fields[name].default is dataclasses.MISSING
        and fields[name].default_factory is dataclasses.MISSING
    ]
    if missing:
        problems.add(
            where.rstrip(".") or cls.__name__, dict(data), "missing keys: " + ", ".join(missing)
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for key, value in data.items():
        if key not in names:
            continue
        accepted = _accepted(hints[key])
        if accepted is not None and not _matches(value, accepted[0]):
            problems.add(f"{where}{key}", value, f"must be {accepted[1]}")
        else:
            values[key] = value
    return values


def _names(cls: type, allowed: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(allowed or (f.name for f in dataclasses.fields(cls)))


def list_of(
    problems: Problems,
    where: str,
    items: Any,
    build: Callable[[Problems, str, Any], T | None],
) -> tuple[T, ...]:
    """``items`` (a JSON list) built one by one with ``build(view, "<where>[i].", item)``,
    where ``view`` records into ``problems`` and is true only for that item's problems;
    items that ``build`` rejects (returns None) are left out."""
    if not isinstance(items, (list, tuple)):
        problems.add(where, items, "must be a list")
        return ()
    built = (
        build(problems.scoped(""), f"{where}[{index}].", item) for index, item in enumerate(items)
    )
    return tuple(item for item in built if item is not None)


def _accepted(hint: Any) -> tuple[tuple[type, ...], str] | None:
    """The JSON types ``hint`` accepts and their description, or None when the hint is not
    one this module checks (nested specs, enums, literals, durations)."""
    if hint in _SCALARS:
        return _SCALARS[hint]
    origin = typing.get_origin(hint)
    if origin in _CONTAINERS:
        return _CONTAINERS[origin]
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        parts = [part for part in map(_accepted, options) if part is not None]
        if len(parts) != len(options):
            return None
        kinds = tuple(kind for part in parts for kind in part[0]) + (type(None),)
        return kinds, " or ".join(part[1] for part in parts) + " or null"
    return None


def _matches(value: Any, kinds: tuple[type, ...]) -> bool:
    # JSON true/false are Python bools, which are ints too: accept them only where a
    # boolean is.
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)

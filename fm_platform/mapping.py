"""Typed objects from JSON-like mappings (a configuration file, ``cdk.json`` context, a
model catalog), every mistake reported at once.

:func:`read` builds an options dataclass from a mapping, nested options and lists
included, led by the fields' annotations (:mod:`fm_platform.rules.types`). Unknown keys,
missing required keys and values of the wrong JSON type become problems that name the key
(``inference.ic_endpoints[1].models[0].accelerators``), the value and what is allowed. The
item is built all the same, with ``None`` where a value was missing or wrong, so that the
rules can check everything else about it in the same run; a list keeps every item in its
place, so later items keep their positions. Pure Python: no aws-cdk-lib.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from fm_platform.rules.problems import Problems, describe_choices, did_you_mean
from fm_platform.rules.types import accepts, describe, field_hints, union_members

T = TypeVar("T")

_SEQUENCES = (tuple, list, Sequence)
_MAPPINGS = (dict, Mapping)


def config_keys(cls: type) -> tuple[str, ...]:
    """The keys a mapping of ``cls`` may have: its fields, the class's own first, then
    those of each base class in turn."""
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    ordered = (
        name
        for klass in cls.__mro__
        for name in vars(klass).get("__annotations__", {})
        if name in fields
    )
    return tuple(dict.fromkeys(ordered))


def read(problems: Problems, where: str, data: Any, cls: type[T]) -> T:
    """``cls`` (a dataclass) built from the mapping ``data``, its keys named
    ``<where><key>`` in problems. Always returns an instance: unknown keys are left out,
    missing or wrong values become None (or the field's default when it has one)."""
    keys = config_keys(cls)
    if not isinstance(data, Mapping):
        problems.add(
            where.rstrip(".") or cls.__name__,
            data,
            "must be a mapping (a JSON object) of " + ", ".join(keys),
        )
        data = {}
    options_class: Any = cls
    fields = {f.name: f for f in dataclasses.fields(options_class) if f.init}
    for key in data:
        if key not in fields:
            hint = did_you_mean(key, keys)
            problems.add(
                f"{where}{key}",
                data[key],
                "unknown key; " + (hint or "allowed keys: " + ", ".join(keys)),
            )
    required = [
        name
        for name, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in data]
    if missing:
        problems.add(
            where.rstrip(".") or cls.__name__, dict(data), "missing keys: " + ", ".join(missing)
        )
    hints = field_hints(options_class)
    values: dict[str, Any] = {name: None for name in missing}
    for key, raw in data.items():
        if key not in fields:
            continue
        view = problems.scoped("")
        value = convert(view, f"{where}{key}", raw, hints.get(key, Any))
        if view and value is None and key not in required:
            continue  # a wrong value of a field with a default: the default stands in
        values[key] = value
    return cls(**values)


def convert(problems: Problems, field: str, value: Any, hint: Any) -> Any:
    """``value`` read as ``hint`` describes (options from mappings, tuples from lists,
    enums from their names or values); None, with a problem recorded, when it does not
    fit."""
    members = union_members(hint)
    if members is not None:
        if value is None and type(None) in members:
            return None
        for member in members:
            if member is not type(None) and _fits(member, value):
                return convert(problems, field, value, member)
        problems.add(field, value, f"must be {describe(hint)}")
        return None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            problems.add(field, value, f"must be a mapping of {', '.join(config_keys(hint))}")
            return None
        return read(problems, f"{field}.", value, hint)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(problems, field, value, hint)
    origin = typing.get_origin(hint)
    if origin in _SEQUENCES or hint in _SEQUENCES:
        if not isinstance(value, list | tuple):
            problems.add(field, value, "must be a list")
            return None
        args = typing.get_args(hint)
        element = args[0] if args else Any
        return tuple(
            convert(problems, f"{field}[{i}]", item, element) for i, item in enumerate(value)
        )
    if origin in _MAPPINGS or hint in _MAPPINGS:
        if not isinstance(value, Mapping):
            problems.add(field, value, "must be a mapping")
            return None
        args = typing.get_args(hint)
        item = args[1] if len(args) == 2 else Any
        return {k: convert(problems, f"{field}.{k}", v, item) for k, v in value.items()}
    if not accepts(hint, value):
        problems.add(field, value, f"must be {describe(hint)}")
        return None
    return value


def _fits(hint: Any, value: Any) -> bool:
    """Whether ``value`` has the JSON shape of ``hint`` (the union member to read it as)."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return isinstance(value, Mapping)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return isinstance(value, str)
    origin = typing.get_origin(hint)
    if origin in _SEQUENCES or hint in _SEQUENCES:
        return isinstance(value, list | tuple)
    if origin in _MAPPINGS or hint in _MAPPINGS:
        return isinstance(value, Mapping)
    if isinstance(hint, type) and hint.__module__ != "builtins":
        return False  # a class a configuration file cannot give (e.g. a CDK construct)
    return accepts(hint, value)


def _enum(problems: Problems, field: str, value: Any, kind: type[enum.Enum]) -> Any:
    if isinstance(value, str):
        for member in kind:
            if value.lower() in (str(member.value).lower(), member.name.lower()):
                return member
    choices = [str(member.value) for member in kind]
    problems.add(field, value, describe_choices(value, choices))
    return None


# -- entries of a mapping, for readers that build their objects themselves ------------------


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
    JSON type does not match the field's annotation (scalars, lists and mappings; nested
    options are left to the caller). Unknown keys and wrongly typed values are left out of
    the result.
    """
    names = tuple(allowed or config_keys(cls))
    if not isinstance(data, Mapping):
        problems.add(
            where.rstrip(".") or cls.__name__,
            data,
            "must be a mapping (a JSON object) of " + ", ".join(names),
        )
        return {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
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
    hints = field_hints(cls)
    values = {}
    for key, value in data.items():
        if key not in names:
            continue
        hint = hints.get(key, Any)
        if _checks_json_type(hint) and not accepts(hint, value):
            problems.add(f"{where}{key}", value, f"must be {describe(hint)}")
        else:
            values[key] = value
    return values


def _checks_json_type(hint: Any) -> bool:
    """Whether ``hint`` is plain JSON (scalars, lists, mappings and unions of them), which
    :func:`dataclass_values` checks; nested options are the caller's."""
    members = union_members(hint)
    if members is not None:
        return all(m is type(None) or _checks_json_type(m) for m in members)
    if hint in (int, float, str, bool):
        return True
    origin = typing.get_origin(hint)
    return origin in _SEQUENCES or origin in _MAPPINGS or hint in _SEQUENCES + _MAPPINGS


def list_of(
    problems: Problems,
    where: str,
    items: Any,
    build: Callable[[Problems, str, Any], T | None],
) -> tuple[T, ...]:
    """``items`` (a JSON list) built one by one with ``build(view, "<where>[i].", item)``,
    where ``view`` records into ``problems`` and is true only for that item's problems;
    items that ``build`` rejects (returns None) are left out."""
    if not isinstance(items, list | tuple):
        problems.add(where, items, "must be a list")
        return ()
    built = (
        build(problems.scoped(""), f"{where}[{index}].", item) for index, item in enumerate(items)
    )
    return tuple(item for item in built if item is not None)

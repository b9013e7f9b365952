"""The types of option fields, read from their annotations: one module for both entries.

- Options built in Python: :func:`well_typed` reports every field whose value is not of
  its annotated type (``accelerators="2"`` names the field, the expected type and the
  value) and sets it to None, so that the rules check the rest.
- Options read from a JSON-like mapping (a configuration file, ``cdk.json`` context, a
  model catalog): :func:`read` builds an options dataclass, nested options and lists
  included. Unknown keys, missing required keys and values of the wrong JSON type become
  problems that name the key (``inference.ic_endpoints[1].models[0].accelerators``), the
  value and what is allowed. The item is built all the same, with ``None`` where a value
  was missing or wrong, so that the rules can check everything else about it in the same
  run; a list keeps every item in its place, so later items keep their positions.
  :func:`dataclass_values` and :func:`list_of` serve readers that build their objects
  themselves.

Only plain types are checked: numbers, strings, booleans, enums, literals, nested options
(dataclasses) and lists or mappings of them. Anything else (a CDK construct interface, for
instance) is left to the code that uses it. Pure Python: no aws-cdk-lib.
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

from fm_platform.rules.problems import Problems, describe_choices, did_you_mean

T = TypeVar("T")

_SCALARS: dict[Any, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
}
_SEQUENCES = (tuple, list, Sequence)
_MAPPINGS = (dict, Mapping)


# -- the annotations ---------------------------------------------------------------------


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


# -- options built in Python --------------------------------------------------------------


def well_typed(
    problems: Problems,
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


def _nested(problems: Problems, value: Any, field: str, unknown: Callable[[object], bool]) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return well_typed(problems, value, f"{field}.", unknown)
    if isinstance(value, list | tuple) and any(dataclasses.is_dataclass(v) for v in value):
        checked = [_nested(problems, v, f"{field}[{i}]", unknown) for i, v in enumerate(value)]
        if any(c is not v for c, v in zip(checked, value, strict=True)):
            return type(value)(checked)
    return value


# -- options read from a mapping ----------------------------------------------------------


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
    options_class: Any = cls
    fields = {f.name: f for f in dataclasses.fields(options_class) if f.init}
    data = _mapping(problems, where, data, cls, keys)
    required = [name for name, f in fields.items() if _required(f)]
    missing = _check_keys(problems, where, data, cls, keys, required)
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


def _mapping(
    problems: Problems, where: str, data: Any, cls: type, keys: Sequence[str]
) -> Mapping[str, Any]:
    """``data``, or an empty mapping (recorded as a problem) when it is not a mapping."""
    if isinstance(data, Mapping):
        return data
    problems.add(
        where.rstrip(".") or cls.__name__,
        data,
        "must be a mapping (a JSON object) of " + ", ".join(keys),
    )
    return {}


def _required(item: dataclasses.Field[Any]) -> bool:
    return item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING


def _check_keys(
    problems: Problems,
    where: str,
    data: Mapping[str, Any],
    cls: type,
    keys: Sequence[str],
    required: Sequence[str],
) -> list[str]:
    """Record each key of ``data`` that is not one of ``keys`` (with the closest one) and
    the ``required`` keys it lacks; returns those."""
    for key in data:
        if key not in keys:
            hint = did_you_mean(key, keys)
            problems.add(
                f"{where}{key}",
                data[key],
                "unknown key; " + (hint or "allowed keys: " + ", ".join(keys)),
            )
    missing = [name for name in required if name not in data]
    if missing:
        problems.add(
            where.rstrip(".") or cls.__name__, dict(data), "missing keys: " + ", ".join(missing)
        )
    return missing


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
        _mapping(problems, where, data, cls, names)
        return {}
    fields = {f.name: f for f in dataclasses.fields(cls)}
    required = [name for name in names if _required(fields[name])]
    _check_keys(problems, where, data, cls, names, required)
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

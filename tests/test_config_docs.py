"""The configuration reference (docs/configuration.md) has a table row for every key the
configuration reads, in the section of the key's parent, and no row for a key that is
gone: the keys are walked from ``AppConfig``'s fields, into every nested options class."""

from __future__ import annotations

import collections.abc
import dataclasses
import re
import types
import typing
from collections.abc import Iterator

from fm_platform.config import AppConfig
from tests.support import ROOT

PAGE = ROOT / "docs" / "configuration.md"
APP_LEVEL = "App level"


def _options_classes(annotation: object) -> Iterator[tuple[type, bool]]:
    """The dataclasses an annotation holds, each with whether it is a list of them."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for argument in typing.get_args(annotation):
            yield from _options_classes(argument)
    elif origin in (tuple, list, collections.abc.Sequence):
        for argument in typing.get_args(annotation):
            if argument is not Ellipsis:
                yield from ((cls, True) for cls, _ in _options_classes(argument))
    elif isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        yield annotation, False


def configuration_keys(cls: type = AppConfig, parent: str = "") -> Iterator[tuple[str, str, bool]]:
    """(parent path, key, deprecated) of every key, e.g. ``("inference.ic_endpoints[]",
    "models", False)``; the top level's parent is ``""``."""
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        yield parent, field.name, bool(field.metadata.get("deprecated"))
        for nested, is_list in _options_classes(hints[field.name]):
            path = f"{parent}.{field.name}" if parent else field.name
            yield from configuration_keys(nested, path + ("[]" if is_list else ""))


def documented_keys() -> dict[str, set[str]]:
    """Per key path a section's heading names (``App level`` is ``""``), the keys its
    table rows name in their first cell."""
    sections: dict[str, set[str]] = {}
    for block in re.split(r"\n(?=## )", PAGE.read_text()):
        heading, _, body = block.partition("\n")
        if not heading.startswith("## "):
            continue
        title = heading[3:].strip()
        paths = [""] if title == APP_LEVEL else re.findall(r"`([^`]+)`", title)
        keys = {
            name
            for line in body.splitlines()
            if line.startswith("| `")
            for name in re.findall(r"`(\w+)`", line.split("|")[1])
        }
        for path in paths:
            sections.setdefault(path, set()).update(keys)
    return sections


def test_every_configuration_key_has_a_row_in_its_section() -> None:
    documented = documented_keys()
    missing = [
        f"{parent or APP_LEVEL}: {key}"
        for parent, key, deprecated in configuration_keys()
        if not deprecated and key not in documented.get(parent, set())
    ]
    assert missing == []


def test_no_section_or_row_names_a_key_the_configuration_does_not_read() -> None:
    known: dict[str, set[str]] = {}
    for parent, key, _ in configuration_keys():
        known.setdefault(parent, set()).add(key)
    documented = documented_keys()
    sections = set(documented)
    assert sections - set(known) == set()
    stale = {path: documented[path] - known[path] for path in sections & set(known)}
    assert {path: keys for path, keys in stale.items() if keys} == {}


def test_the_walk_reaches_the_nested_options() -> None:
    keys = set(configuration_keys())
    assert ("inference.ic_endpoints[].models[].scaling", "min_copies", False) in keys
    assert ("training.instance_groups[]", "partition", False) in keys
    assert ("inference.single_model_endpoints[].variants[].container", "image", False) in keys
    assert ("", "notifications", False) in keys

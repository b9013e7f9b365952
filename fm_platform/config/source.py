"""Where the app's configuration comes from: a JSON file named in the context (``config``),
a ``fm_platform`` object in ``cdk.json``'s context, or the defaults."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from constructs import Construct

from fm_platform.rules.problems import Problems

CONFIG_FILE_CONTEXT_KEY = "config"
CONFIG_OBJECT_CONTEXT_KEY = "fm_platform"


@dataclass(frozen=True)
class ConfigSource:
    """Where a configuration came from: ``data`` (None for the defaults) and a sentence
    for the user."""

    data: Any
    description: str


def config_source(scope: Construct) -> ConfigSource:
    """Find the configuration in ``scope``'s context; raises a
    :class:`~fm_platform.rules.problems.ValidationError` for a missing or unreadable file,
    for a ``fm_platform`` value given as a string, and when both a file and an object are
    given (one would silently win)."""
    path = scope.node.try_get_context(CONFIG_FILE_CONTEXT_KEY)
    data = scope.node.try_get_context(CONFIG_OBJECT_CONTEXT_KEY)
    if isinstance(data, str):
        problems = Problems("configuration")
        problems.add(
            CONFIG_OBJECT_CONTEXT_KEY,
            data if len(data) <= 60 else data[:57] + "...",
            "a `-c fm_platform=...` value reaches the app as a string, not a JSON object; "
            "either write the JSON to a file and pass `-c config=FILE` (or name the file "
            'under "config" in cdk.json\'s "context"), or put the object itself under '
            '"fm_platform" in cdk.json\'s "context"',
        )
        raise problems.error()
    if path and data:
        problems = Problems("configuration")
        problems.add(
            CONFIG_FILE_CONTEXT_KEY,
            path,
            f"and a {CONFIG_OBJECT_CONTEXT_KEY!r} object are both in the context; keep one: "
            f'remove "{CONFIG_FILE_CONTEXT_KEY}" from cdk.json to use the object, or move the '
            "object into the file",
        )
        raise problems.error()
    if path:
        return ConfigSource(read_config_file(str(path)), f"configuration file {path}")
    if data:
        return ConfigSource(data, "the fm_platform object in cdk.json's context")
    return ConfigSource(
        None, "the built-in defaults (no config file in cdk.json's context or -c config=FILE)"
    )


def read_config_file(path: str) -> Any:
    """The JSON content of the file at ``path``; one problem naming the file when it is
    missing or not JSON."""
    problems = Problems("configuration")
    config_file = Path(path)
    if not config_file.is_file():
        problems.add(
            CONFIG_FILE_CONTEXT_KEY,
            path,
            f"no such file (looked in {Path.cwd()}); pass the path of a JSON file",
        )
        raise problems.error()
    try:
        return json.loads(config_file.read_text())
    except ValueError as error:
        problems.add(
            CONFIG_FILE_CONTEXT_KEY,
            path,
            f"not valid JSON ({error}); the file must hold one JSON object",
        )
        raise problems.error() from None

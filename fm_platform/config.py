"""The app's configuration: defaults in code, overridable from a JSON file or cdk.json.

Sources, one at a time:

1. the context value ``config``: the path of a JSON file. The project's ``cdk.json`` names
   ``fmp-config.json`` there, so every ``cdk`` command (synth, diff, deploy) reads the
   same file; ``cdk <command> -c config=other.json`` overrides it for one command;
2. or a ``fm_platform`` object in ``cdk.json``'s ``context`` (without ``config``);
3. else the defaults: the seed examples of both stacks.

The file or object has the keys of :class:`AppConfig`; ``training`` and ``inference`` hold
what :meth:`TrainingConfig.from_mapping` and :meth:`InferenceConfig.from_mapping` accept.
:func:`load_config` reports every problem of a configuration at once, named by its keys:
the mapping's (unknown keys, wrong types) and everything the constructs would check.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constructs import Construct

from fm_platform.config_check import check_config
from fm_platform.mapping import dataclass_values
from fm_platform.stacks.inference import InferenceConfig
from fm_platform.stacks.training import TrainingConfig
from fm_platform.validation import Problems

CONFIG_FILE_CONTEXT_KEY = "config"
CONFIG_OBJECT_CONTEXT_KEY = "fm_platform"

# The lists whose items carry their own checks: an item lost to a mapping error shifts the
# positions after it, so their construct checks are skipped (see check_config).
_CHECKED_LISTS = {
    "training": ("instance_groups",),
    "inference": ("ic_endpoints", "single_model_endpoints", "multi_model_endpoints"),
}
_SIDES: dict[str, Any] = {"training": TrainingConfig, "inference": InferenceConfig}


@dataclass(frozen=True, kw_only=True)
class AppConfig:
    """What the default app deploys.

    training / inference: the stacks' configurations; by default the seed examples.
    deploy_training / deploy_inference: whether to create each stack; both by default.
    training_stack_name / inference_stack_name: the stack names; ``FmpTraining`` and
        ``FmpInference`` by default (the ``fmp`` CLI looks for these names).
    """

    training: TrainingConfig = field(default_factory=TrainingConfig)
    inference: InferenceConfig = field(default_factory=InferenceConfig)
    deploy_training: bool = True
    deploy_inference: bool = True
    training_stack_name: str = "FmpTraining"
    inference_stack_name: str = "FmpInference"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> AppConfig:
        """Build from a JSON-like mapping; unknown keys and values of the wrong type are
        one error naming them by key (``training.storage_capacity_gib``). With ``into``,
        problems are recorded there and the config is built from the valid entries."""
        problems = Problems.within(into, "configuration")
        if not isinstance(data, Mapping):
            problems.add("configuration", data, "must be a JSON object with the keys of AppConfig")
            data = {}
        values = dataclass_values(problems, "", data, cls)
        for key, side in _SIDES.items():
            if key not in values:
                continue
            if isinstance(values[key], Mapping):
                values[key] = side.from_mapping(values[key], problems.scoped(f"{key}."))
            else:
                problems.add(key, values[key], f"must be a mapping of {side.__name__} keys")
                del values[key]
        problems.raise_if_any()
        return cls(**values)

    def check(self, into: Problems | None = None, *, incomplete: Collection[str] = ()) -> None:
        """Raise one ``ValueError`` listing every problem the stacks' constructs would
        report for the stacks deployed, named by configuration key; with ``into``, record
        them there instead. ``incomplete``: see :func:`check_config`."""
        problems = Problems.within(into, "configuration")
        check_config(
            self.training if self.deploy_training else None,
            self.inference if self.deploy_inference else None,
            problems,
            incomplete=incomplete,
        )
        problems.raise_if_any()

    @classmethod
    def from_context(cls, scope: Construct) -> AppConfig:
        """The configuration ``scope``'s context names (see the module docstring), checked
        as a whole by :func:`load_config`; the defaults when it names none."""
        source = config_source(scope)
        return cls() if source.data is None else load_config(source.data)


def load_config(data: Any) -> AppConfig:
    """The configuration in ``data`` (a config file's content), checked as a whole: raises
    one :class:`~fm_platform.validation.ValidationError` listing every problem of the
    mapping and of the constructs it describes, each named by configuration key."""
    problems = Problems("configuration")
    config = AppConfig.from_mapping(data, problems)
    config.check(problems, incomplete=_incomplete_lists(data, config))
    problems.raise_if_any()
    return config


def _incomplete_lists(data: Any, config: AppConfig) -> set[str]:
    """The checked lists (``inference.ic_endpoints``) that lost items to mapping errors."""
    incomplete = set()
    for side, keys in _CHECKED_LISTS.items():
        raw = data.get(side) if isinstance(data, Mapping) else None
        if not isinstance(raw, Mapping):
            continue
        for key in keys:
            items = raw.get(key)
            if isinstance(items, list) and len(items) != len(getattr(getattr(config, side), key)):
                incomplete.add(f"{side}.{key}")
    return incomplete


@dataclass(frozen=True)
class ConfigSource:
    """Where a configuration came from: ``data`` (None for the defaults) and a sentence
    for the user."""

    data: Any
    description: str


def config_source(scope: Construct) -> ConfigSource:
    """Find the configuration in ``scope``'s context (see the module docstring); raises a
    :class:`~fm_platform.validation.ValidationError` for a missing or unreadable file, for
    a ``fm_platform`` value given as a string, and when both a file and an object are
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
        return ConfigSource(_read_file(str(path)), f"configuration file {path}")
    if data:
        return ConfigSource(data, "the fm_platform object in cdk.json's context")
    return ConfigSource(
        None, "the built-in defaults (no config file in cdk.json's context or -c config=FILE)"
    )


def _read_file(path: str) -> Any:
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

"""The app's configuration: defaults in code, overridable from a JSON file or cdk.json.

Sources, first match wins:

1. ``cdk synth -c config=path/to/config.json``: a JSON file;
2. a ``fm_platform`` object in ``cdk.json``'s ``context``;
3. the defaults: the seed examples of both stacks.

The file or object has the keys of :class:`AppConfig`; ``training`` and ``inference`` hold
what :meth:`TrainingConfig.from_mapping` and :meth:`InferenceConfig.from_mapping` accept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from constructs import Construct

from fm_platform.mapping import dataclass_values
from fm_platform.stacks.inference import InferenceConfig
from fm_platform.stacks.training import TrainingConfig
from fm_platform.validation import Problems

CONFIG_FILE_CONTEXT_KEY = "config"
CONFIG_OBJECT_CONTEXT_KEY = "fm_platform"


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
    def from_mapping(cls, data: Mapping[str, Any]) -> AppConfig:
        """Build from a JSON-like mapping; unknown keys and values of the wrong type are
        one error naming them."""
        problems = Problems("app configuration")
        values = dataclass_values(problems, "", data, cls)
        problems.raise_if_any()
        if "training" in values:
            values["training"] = TrainingConfig.from_mapping(values["training"])
        if "inference" in values:
            values["inference"] = InferenceConfig.from_mapping(values["inference"])
        return cls(**values)

    @classmethod
    def from_context(cls, scope: Construct) -> AppConfig:
        """Read the configuration from ``scope``'s context (see the module docstring)."""
        path = scope.node.try_get_context(CONFIG_FILE_CONTEXT_KEY)
        if path:
            config_file = Path(path)
            if not config_file.is_file():
                raise ValueError(
                    f"invalid app configuration: config={path!r}: no such file; "
                    "pass the path of a JSON file"
                )
            try:
                data = json.loads(config_file.read_text())
            except ValueError as error:
                raise ValueError(
                    f"invalid app configuration: config={path!r}: not valid JSON ({error}); "
                    "pass a JSON file holding one object"
                ) from None
            return cls.from_mapping(data)
        data = scope.node.try_get_context(CONFIG_OBJECT_CONTEXT_KEY)
        if data:
            return cls.from_mapping(data)
        return cls()

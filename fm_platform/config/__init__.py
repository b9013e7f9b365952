"""The app's configuration: loading (:mod:`~fm_platform.config.source`), the typed
configuration whose items are the constructs' own options
(:mod:`~fm_platform.config.training`, :mod:`~fm_platform.config.inference`) and the check
of a whole configuration at once (:func:`load_config`).

Sources, one at a time:

1. the context value ``config``: the path of a JSON file. The project's ``cdk.json`` names
   ``fmp-config.json`` there, so every ``cdk`` command (synth, diff, deploy) reads the
   same file; ``cdk <command> -c config=other.json`` overrides it for one command;
2. or a ``fm_platform`` object in ``cdk.json``'s ``context`` (without ``config``);
3. else the defaults: the training example and no endpoint (the demo fleet is in
   ``fmp-config.json``).

A configuration with an ``environments`` list describes several environments (accounts,
regions, overrides of the shared keys) and is read by
:func:`fm_platform.config.environments.load_environments` instead.
"""

from fm_platform.config.app import AppConfig, load_config
from fm_platform.config.inference import (
    AsyncEndpointConfig,
    InferenceComponentEndpointConfig,
    InferenceComponentModelConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.config.source import (
    CONFIG_FILE_CONTEXT_KEY,
    CONFIG_OBJECT_CONTEXT_KEY,
    ConfigSource,
    config_source,
)
from fm_platform.config.training import TrainingConfig

__all__ = [
    "CONFIG_FILE_CONTEXT_KEY",
    "CONFIG_OBJECT_CONTEXT_KEY",
    "AppConfig",
    "AsyncEndpointConfig",
    "ConfigSource",
    "InferenceComponentEndpointConfig",
    "InferenceComponentModelConfig",
    "InferenceConfig",
    "MultiModelEndpointConfig",
    "SingleModelEndpointConfig",
    "TrainingConfig",
    "config_source",
    "load_config",
]

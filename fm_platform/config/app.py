"""The whole configuration of the default app, read and checked at once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from constructs import Construct

from fm_platform.config.inference import InferenceConfig
from fm_platform.config.source import config_source
from fm_platform.config.training import TrainingConfig
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.secure_bucket import BucketOptions
from fm_platform.rules.problems import Problems
from fm_platform.rules.types import read


@dataclass(frozen=True, kw_only=True)
class AppConfig:
    """What the default app deploys.

    training / inference: the stacks' configurations; by default the training example
        and no endpoint (the demo fleet is in ``fmp-config.json``).
    deploy_training / deploy_inference: whether to create each stack; both by default.
    training_stack_name / inference_stack_name: the stack names; ``FmpTraining`` and
        ``FmpInference`` by default (the ``fmp`` CLI looks for these names).
    notifications: each stack's notification topic and who is subscribed
        (:class:`NotificationTopicOptions`: ``emails``, ``topic_arn``); the alarms and the
        cluster's events are sent there. By default a topic per stack with no subscriber;
        ``null`` creates no topic and no alarm.
    dashboards: a CloudWatch dashboard per stack; by default True.
    buckets: what every S3 bucket of the stacks adds to its defaults
        (:class:`BucketOptions`: ``noncurrent_version_expiration_days``,
        ``event_bridge_enabled``, ``object_lock_enabled``); by default nothing.
    """

    training: TrainingConfig = field(default_factory=TrainingConfig)
    inference: InferenceConfig = field(default_factory=InferenceConfig)
    deploy_training: bool = True
    deploy_inference: bool = True
    training_stack_name: str = "FmpTraining"
    inference_stack_name: str = "FmpInference"
    notifications: NotificationTopicOptions | None = field(default_factory=NotificationTopicOptions)
    dashboards: bool = True
    buckets: BucketOptions = field(default_factory=BucketOptions)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> AppConfig:
        """Read from a JSON-like mapping; unknown keys and values of the wrong type are
        one error naming them by key (``training.storage_capacity_gib``). With ``into``,
        problems are recorded there and the config is built all the same (``None`` where
        a value was missing or wrong)."""
        problems = Problems.within(into, "configuration")
        if not isinstance(data, Mapping):
            problems.add("configuration", data, "must be a JSON object with the keys of AppConfig")
            data = {}
        config = read(problems, "", data, cls)
        problems.raise_if_any()
        return config

    def check(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem the stacks' constructs would
        report for the stacks deployed, named by configuration key; with ``into``, record
        them there instead."""
        problems = Problems.within(into, "configuration")
        if self.notifications is not None:
            self.notifications.check(problems.scoped("notifications."))
        self.buckets.check(problems.scoped("buckets."))
        if self.deploy_training and self.training is not None:
            self.training.check(problems.scoped("training."))
        if self.deploy_inference and self.inference is not None:
            self.inference.check(
                problems.scoped("inference."), stack_name=self.inference_stack_name
            )
        problems.raise_if_any()

    @classmethod
    def from_context(cls, scope: Construct) -> AppConfig:
        """The configuration ``scope``'s context names (see :func:`config_source`), checked
        as a whole by :func:`load_config`; the defaults when it names none."""
        source = config_source(scope)
        return cls() if source.data is None else load_config(source.data)


def load_config(data: Any) -> AppConfig:
    """The configuration in ``data`` (a config file's content), checked as a whole: raises
    one :class:`~fm_platform.rules.problems.ValidationError` listing every problem of the
    mapping and of the constructs it describes, each named by configuration key."""
    problems = Problems("configuration")
    config = AppConfig.from_mapping(data, problems)
    config.check(problems)
    problems.raise_if_any()
    return config

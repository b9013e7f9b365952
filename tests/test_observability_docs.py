"""The README documents every configuration key of notifications and alarms."""

from __future__ import annotations

import dataclasses

from fm_platform.constructs.observability.async_alarm import AsyncEndpointAlarmOptions
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarmOptions
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.observability.training_alarms import TrainingAlarmOptions
from tests.support import ROOT

TEXT = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = TEXT.index(f"\n{title}\n")
    return TEXT[start : TEXT.index("\n## ", start + 1)]


def test_every_alarm_and_notification_key_is_in_the_readme():
    observability = section("## Alarms, dashboards and notifications")
    for options in (
        NotificationTopicOptions,
        ModelAlarmOptions,
        EndpointAlarmOptions,
        AsyncEndpointAlarmOptions,
    ):
        for field in dataclasses.fields(options):
            assert f"`{field.name}`" in observability, (options.__name__, field.name)
    configure = section("## Configure")
    for field in dataclasses.fields(TrainingAlarmOptions):
        assert f"| `{field.name}` |" in configure, field.name
    for key in ("notifications", "dashboards"):
        assert f"| `{key}` |" in configure, key

"""The documentation names every configuration key of notifications and alarms: the
observability section of docs/operations.md, and the configuration reference."""

from __future__ import annotations

import dataclasses

from fm_platform.constructs.observability.async_alarm import AsyncEndpointAlarmOptions
from fm_platform.constructs.observability.endpoint_alarm import EndpointAlarmOptions
from fm_platform.constructs.observability.model_alarm import ModelAlarmOptions
from fm_platform.constructs.observability.serverless_alarm import ServerlessEndpointAlarmOptions
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.observability.training_alarms import TrainingAlarmOptions
from tests.support import ROOT

OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
CONFIGURATION = (ROOT / "docs" / "configuration.md").read_text()


def section(text: str, title: str) -> str:
    """From the heading ``title`` to the next heading of its level or higher, or the end."""
    start = text.index(f"\n{title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_every_alarm_and_notification_key_is_in_the_docs():
    observability = section(OPERATIONS, "## Alarms, dashboards and notifications")
    for options in (
        NotificationTopicOptions,
        ModelAlarmOptions,
        EndpointAlarmOptions,
        AsyncEndpointAlarmOptions,
        ServerlessEndpointAlarmOptions,
    ):
        for field in dataclasses.fields(options):
            assert f"`{field.name}`" in observability, (options.__name__, field.name)
    training = section(CONFIGURATION, "## `training`")
    for field in dataclasses.fields(TrainingAlarmOptions):
        assert f"| `{field.name}` |" in training, field.name
    app_level = section(CONFIGURATION, "## App level")
    for key in ("notifications", "dashboards"):
        assert f"| `{key}` |" in app_level, key

"""Rules of notifications and alarms: subscriber addresses, a reused topic's ARN, alarm
windows and thresholds.

Sources: the SNS topic name constraint is botocore's SNS ``CreateTopic`` ``Name``
documentation (letters, digits, ``_`` and ``-``, 1-256 characters; ``.fifo`` suffix for a
FIFO topic); an alarm's period times its evaluation periods is at most one day (Amazon
CloudWatch User Guide, "CloudWatch service quotas", "Alarm evaluation period"), so a
one-minute alarm looks back at most 1440 minutes; an alarm has at most 5 actions and a
description of at most 1024 characters (botocore's CloudWatch ``PutMetricAlarm``
``AlarmActions`` and ``AlarmDescription``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fm_platform.rules.problems import Problems

#: The shape of an email address (a local part, "@", a domain with a dot): a typo guard,
#: not a deliverability check; SNS asks each address to confirm its subscription.
EMAIL_PATTERN = r"[^@\s]+@[^@\s]+\.[^@\s.]+"
#: An SNS topic ARN: partition, region, 12-digit account, topic name (botocore's SNS
#: ``CreateTopic`` ``Name`` constraint). Alarms and EventBridge rules publish to standard
#: topics, so the ``.fifo`` suffix is not accepted.
TOPIC_ARN_PATTERN = r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}"
#: An alarm evaluated once a minute looks back at most one day (CloudWatch quota).
MAX_ALARM_MINUTES = 24 * 60
#: CloudWatch's limits of one alarm (botocore ``PutMetricAlarm``).
MAX_ALARM_ACTIONS = 5
MAX_ALARM_DESCRIPTION = 1024


def check_emails(problems: Problems, field: str, emails: Iterable[str | None] | None) -> None:
    """Each address shaped like one (``name@example.com``), and none twice."""
    if emails is None:
        return
    listed = list(emails)
    for index, email in enumerate(listed):
        if email is not None and not re.fullmatch(EMAIL_PATTERN, email):
            problems.add(f"{field}[{index}]", email, "must be an email address (name@domain)")
    problems.check_unique(field, listed)


def check_topic_arn(problems: Problems, field: str, arn: str | None) -> None:
    """The ARN of a standard SNS topic: ``arn:<partition>:sns:<region>:<account>:<name>``."""
    if arn is not None and not re.fullmatch(TOPIC_ARN_PATTERN, arn):
        problems.add(
            field,
            arn,
            "must be a standard SNS topic ARN, arn:aws:sns:<region>:<12-digit account>:<name> "
            "(name: letters, digits, _ and -, 1-256 characters)",
        )


def check_alarm_minutes(problems: Problems, field: str, minutes: int | None) -> None:
    """A window of one-minute datapoints: 1 to 1440 (CloudWatch looks back one day)."""
    problems.check_range(field, minutes, 1, MAX_ALARM_MINUTES)


def check_percent(problems: Problems, field: str, percent: float | None) -> None:
    """A share of something: more than 0, at most 100."""
    if percent is not None and not 0 < percent <= 100:
        problems.add(field, percent, "must be a percentage above 0 and at most 100")


def check_latency_objective(problems: Problems, field: str, milliseconds: int | None) -> None:
    """A latency objective of at least 1 ms."""
    problems.check_range(field, milliseconds, 1, None)


def check_alarm_description(problems: Problems, field: str, description: str | None) -> None:
    """At most 1024 characters, as CloudWatch accepts."""
    if description is not None and len(description) > MAX_ALARM_DESCRIPTION:
        problems.add(
            field,
            f"{description[:60]}...",
            f"is {len(description)} characters; CloudWatch accepts {MAX_ALARM_DESCRIPTION}",
        )

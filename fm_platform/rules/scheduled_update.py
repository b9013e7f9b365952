"""Rules of an instance group's scheduled AMI update (``ScheduledUpdateConfig``): the cron
schedule, the rolling batch, the wait between batches and the rollback alarms."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

#: ``ScheduleExpression``'s pattern in the CloudFormation resource schema of
#: ``AWS::SageMaker::Cluster`` (cfn-lint's bundled copy; botocore gives only a length):
#: ``cron(minutes hours day-of-month month day-of-week year)``, with ``?`` for day-of-month
#: or day-of-week, ``*`` or ``*/n`` months, ``L`` and ``n#k`` days of the week.
SCHEDULE_PATTERN = (
    r"cron\((?:[0-5][0-9]|[0-9]|) (?:[01][0-9]|2[0-3]|[0-9]) "
    r"(?:[1-9]|0[1-9]|[12][0-9]|3[01]|\?) "
    r"(?:[1-9]|0[1-9]|1[0-2]|\*|\*/(?:[1-9]|1[0-2])|) "
    r"(?:MON|TUE|WED|THU|FRI|SAT|SUN|[1-7]|\?|L|(?:[1-7]#[1-5])|(?:[1-7]L)) "
    r"(?:20[2-9][0-9]|\*|)\)"
)
_SCHEDULE = re.compile(SCHEDULE_PATTERN)
#: A batch given as a percentage of the group's instances is at most all of them.
MAX_BATCH_PERCENT = 100
#: Alarms the cluster construct adds to every group's rollback list (its node-health
#: alarm), out of the API's ten (botocore ``AutoRollbackAlarms``).
CONSTRUCT_ROLLBACK_ALARMS = 1

_DEPLOYMENT = "DeploymentConfiguration"


def check_scheduled_update(
    problems: Problems,
    field: str,
    *,
    cron: str | None,
    batch_percent: int | None,
    batch_count: int | None,
    wait_s: int | None,
    rollback_alarms: Sequence[str] | None,
) -> None:
    """The schedule matches :data:`SCHEDULE_PATTERN` (whole); at most one of
    ``batch_percent`` (1-100) and ``batch_count`` (at least 1); ``wait_s`` within botocore's
    ``WaitTimeIntervalInSeconds``; alarm names valid and, with the construct's own
    node-health alarm, within botocore's ``AutoRollbackAlarms`` limit."""
    if cron is not None:
        problems.check_shape(
            f"{field}.cron", cron, member_shape_name("ScheduledUpdateConfig", "ScheduleExpression")
        )
        if not _SCHEDULE.fullmatch(cron):
            problems.add(
                f"{field}.cron",
                cron,
                "must be cron(minutes hours day-of-month month day-of-week year) as the "
                "CloudFormation schema of AWS::SageMaker::Cluster allows it, e.g. "
                "cron(0 3 ? * SUN *) for Sundays at 03:00 UTC (one of day-of-month and "
                "day-of-week is ?)",
            )
    if batch_percent is not None and batch_count is not None:
        problems.add(
            f"{field}.batch_percent/batch_count",
            (batch_percent, batch_count),
            "give one of them: the batch is either a percentage of the group or a number "
            "of instances",
        )
    value_shape = member_shape_name("CapacitySizeConfig", "Value")
    problems.check_shape(f"{field}.batch_count", batch_count, value_shape)
    problems.check_shape(f"{field}.batch_percent", batch_percent, value_shape)
    if batch_percent is not None and batch_percent > MAX_BATCH_PERCENT:
        problems.add(f"{field}.batch_percent", batch_percent, "must be at most 100 (percent)")
    problems.check_shape(
        f"{field}.wait_s", wait_s, member_shape_name(_DEPLOYMENT, "WaitIntervalInSeconds")
    )
    if rollback_alarms is None:
        return
    for position, name in enumerate(rollback_alarms):
        problems.check_shape(
            f"{field}.rollback_alarms[{position}]",
            name,
            member_shape_name("AlarmDetails", "AlarmName"),
        )
    alarms = shape_rule(member_shape_name(_DEPLOYMENT, "AutoRollbackConfiguration"))
    limit = (alarms.max or 0) - CONSTRUCT_ROLLBACK_ALARMS
    if len(rollback_alarms) > limit:
        problems.add(
            f"{field}.rollback_alarms",
            tuple(rollback_alarms),
            f"at most {limit}: the API takes {limit + CONSTRUCT_ROLLBACK_ALARMS} alarms and the "
            "cluster adds its own node-health alarm",
        )

"""Many CloudWatch metrics in few GetMetricData calls."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# "You can include up to 500 MetricDataQuery structures" per call (Amazon CloudWatch API
# Reference, GetMetricData); botocore's model does not declare this limit.
MAX_QUERIES_PER_CALL = 500

Datapoints = list[tuple[datetime.datetime, float]]


@dataclass(frozen=True)
class MetricQuery:
    """One statistic (``Sum``, ``Average``, ``p50``, ...) of one metric."""

    namespace: str
    metric_name: str
    dimensions: Mapping[str, str]
    stat: str


def utc_now() -> datetime.datetime:
    """The current time (tests replace it)."""
    return datetime.datetime.now(datetime.timezone.utc)


def last_minutes(minutes: int) -> tuple[datetime.datetime, datetime.datetime]:
    """(start, end) of the last `minutes` whole minutes, ending at the current minute."""
    end = utc_now().replace(second=0, microsecond=0)
    return end - datetime.timedelta(minutes=minutes), end


def fetch(
    cloudwatch: Any,
    queries: Sequence[MetricQuery],
    *,
    start: datetime.datetime,
    end: datetime.datetime,
    period: int,
) -> list[Datapoints]:
    """Each query's (timestamp, value) datapoints between `start` and `end` in `period`-second
    buckets, newest first; an empty list where CloudWatch has no data.

    One GetMetricData call per 500 queries (and per page of results).
    """
    results: list[Datapoints] = [[] for _ in queries]
    paginator = cloudwatch.get_paginator("get_metric_data")
    for offset in range(0, len(queries), MAX_QUERIES_PER_CALL):
        chunk = queries[offset : offset + MAX_QUERIES_PER_CALL]
        request = [
            {
                "Id": f"q{offset + index}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": query.namespace,
                        "MetricName": query.metric_name,
                        "Dimensions": [
                            {"Name": name, "Value": value}
                            for name, value in query.dimensions.items()
                        ],
                    },
                    "Period": period,
                    "Stat": query.stat,
                },
            }
            for index, query in enumerate(chunk)
        ]
        pages = paginator.paginate(
            MetricDataQueries=request, StartTime=start, EndTime=end, ScanBy="TimestampDescending"
        )
        for page in pages:
            for result in page.get("MetricDataResults", []):
                results[int(result["Id"][1:])].extend(
                    zip(result.get("Timestamps", []), result.get("Values", []), strict=True)
                )
    return results

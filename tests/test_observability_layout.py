"""The generated dashboard layout: widgets placed on CloudWatch's 24-column grid without
overlapping, sections kept together, pages split within the per-dashboard limits."""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

import pytest

from fm_platform.constructs.observability.layout import (
    GRID_COLUMNS,
    MAX_WIDGETS,
    Limits,
    Section,
    Widget,
    alarm_status_widgets,
    page_body,
    paginate,
    place,
)


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def random_rows(seed: int) -> list[list[Widget]]:
    rng = random.Random(seed)
    return [
        [
            Widget("metric", {"n": (row, i)}, width=rng.randint(1, 30), height=rng.randint(1, 8))
            for i in range(rng.randint(0, 9))
        ]
        for row in range(rng.randint(1, 6))
    ]


@pytest.mark.parametrize("seed", range(25))
def test_placed_widgets_stay_within_the_grid_and_never_overlap(seed):
    rows = random_rows(seed)
    placed = place(rows)
    assert len(placed) == sum(len(row) for row in rows)
    for widget in placed:
        assert widget["x"] >= 0 and widget["x"] + widget["width"] <= GRID_COLUMNS
        assert 1 <= widget["width"] <= GRID_COLUMNS
    for a, b in combinations(placed, 2):
        assert not overlap(a, b), (a, b)


def test_each_row_starts_below_everything_before_it():
    rows = [
        [Widget("text", {}, width=24, height=1)],
        [Widget("metric", {}, width=8, height=6), Widget("metric", {}, width=8, height=3)],
        [Widget("metric", {}, width=20, height=2), Widget("metric", {}, width=8, height=2)],
    ]
    positions = [(w["x"], w["y"]) for w in place(rows)]
    # The second row starts under the heading; the third under the taller widget of the
    # second, and its second widget wraps (20 + 8 > 24).
    assert positions == [(0, 0), (0, 1), (8, 1), (0, 7), (0, 9)]


def sections(count: int, widgets: int, metrics: int, alarms: int) -> list[Section]:
    return [
        Section(
            tuple(Widget("metric", {}, metrics=metrics) for _ in range(widgets)),
            tuple(f"arn:alarm:{s}:{a}" for a in range(alarms)),
        )
        for s in range(count)
    ]


def widgets_on(page_sections, limits: Limits) -> int:
    body = page_body(page_sections, "t", limits)
    return len(body["widgets"])


def test_cloudwatchs_limits_are_the_defaults():
    # "Dashboard body structure and syntax": at most 500 widgets per dashboard.
    assert Limits().widgets == MAX_WIDGETS == 500
    assert Limits().metrics == 2500 and Limits().alarms_per_widget == 100


@pytest.mark.parametrize(
    ("count", "widgets", "metrics", "alarms", "limits"),
    [
        (300, 10, 4, 2, Limits()),  # a fleet: 3000 widgets, 12000 metrics, 600 alarms
        (40, 9, 1, 1, Limits(widgets=30, metrics=1000, alarms_per_widget=10)),
        (5, 70, 1, 0, Limits(widgets=30)),  # sections larger than a page are split
        (12, 3, 400, 1, Limits()),  # the metrics, not the widgets, fill a page
    ],
)
def test_pages_stay_within_the_limits_and_keep_every_widget_once(
    count, widgets, metrics, alarms, limits
):
    given = sections(count, widgets, metrics, alarms)
    pages = paginate(given, limits)
    for page in pages:
        assert widgets_on(page, limits) <= limits.widgets
        assert page.metrics <= limits.metrics
    placed = [w for page in pages for s in page.sections for w in s.widgets]
    assert len(placed) == count * widgets
    alarm_arns = [arn for page in pages for arn in page.alarm_arns]
    assert sorted(alarm_arns) == sorted(arn for s in given for arn in s.alarm_arns)
    # As few pages as the binding limit allows, give or take the sections kept whole.
    needed = max(count * widgets / limits.widgets, count * widgets * metrics / limits.metrics)
    assert len(pages) >= needed


def test_a_section_that_fits_is_never_split_across_pages():
    pages = paginate(sections(7, 9, 1, 1), Limits(widgets=20))
    for page in pages:
        for section in page.sections:
            assert len(section.widgets) == 9


def test_a_widget_with_too_many_metrics_is_refused():
    with pytest.raises(ValueError, match="retrieves 501 metrics"):
        paginate([Section((Widget("metric", {}, metrics=501),))])


def test_alarm_status_widgets_hold_at_most_their_limit():
    arns = [f"arn:{i}" for i in range(250)]
    widgets = alarm_status_widgets(arns, "Stack: alarms")
    assert [len(w.properties["alarms"]) for w in widgets] == [100, 100, 50]
    assert [w.properties["title"] for w in widgets] == [
        "Stack: alarms (1/3)",
        "Stack: alarms (2/3)",
        "Stack: alarms (3/3)",
    ]
    assert all(w.width == GRID_COLUMNS for w in widgets)

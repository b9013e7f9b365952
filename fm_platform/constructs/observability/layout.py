"""Dashboard layout, generated: widgets in sections, placed on CloudWatch's 24-column grid,
paged into as many dashboards as CloudWatch's limits require.

Limits (Amazon CloudWatch User Guide): a dashboard body holds 0 to 500 widgets ("Dashboard
body structure and syntax"); a dashboard retrieves at most 2500 metrics across its
widgets and a widget at most 500, metric math inputs included ("CloudWatch service
quotas", Dashboards); an alarm status widget lists at most 100 alarms ("Dashboard body
structure and syntax", alarm widget ``alarms``). The grid is 24 columns wide; a widget's
``x`` is 0-23 and its ``width`` 1-24 (same page).

Pure Python: widgets are JSON-ready dictionaries; their values may hold CDK tokens, which
the construct writing the dashboard resolves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

GRID_COLUMNS = 24
MAX_WIDGETS = 500
MAX_METRICS = 2500
MAX_METRICS_PER_WIDGET = 500
MAX_ALARMS_PER_WIDGET = 100


@dataclass(frozen=True)
class Limits:
    """What one dashboard may hold (by default CloudWatch's limits, above)."""

    widgets: int = MAX_WIDGETS
    metrics: int = MAX_METRICS
    metrics_per_widget: int = MAX_METRICS_PER_WIDGET
    alarms_per_widget: int = MAX_ALARMS_PER_WIDGET


@dataclass(frozen=True)
class Widget:
    """A widget before placement: its ``type`` and ``properties`` (as the dashboard body
    writes them), its size in grid units and how many metrics it retrieves."""

    type: str
    properties: dict[str, Any]
    width: int = 8
    height: int = 6
    metrics: int = 0


@dataclass(frozen=True)
class Section:
    """Widgets that belong together (an endpoint's), started on a new row, kept on one
    dashboard when they fit, and the alarms they concern (shown in the dashboard's alarm
    status widget)."""

    widgets: tuple[Widget, ...]
    alarm_arns: tuple[str, ...] = ()

    @property
    def metrics(self) -> int:
        return sum(widget.metrics for widget in self.widgets)


@dataclass
class Page:
    """The sections of one dashboard."""

    sections: list[Section] = field(default_factory=list)

    @property
    def widgets(self) -> int:
        return sum(len(section.widgets) for section in self.sections)

    @property
    def metrics(self) -> int:
        return sum(section.metrics for section in self.sections)

    @property
    def alarm_arns(self) -> list[str]:
        return [arn for section in self.sections for arn in section.alarm_arns]


def alarm_widgets_needed(alarms: int, limits: Limits) -> int:
    """Alarm status widgets for ``alarms`` alarms."""
    return -(-alarms // limits.alarms_per_widget)


def _fits(page: Page, section: Section, limits: Limits) -> bool:
    alarms = len(page.alarm_arns) + len(section.alarm_arns)
    widgets = page.widgets + len(section.widgets) + alarm_widgets_needed(alarms, limits)
    return widgets <= limits.widgets and page.metrics + section.metrics <= limits.metrics


def _split(section: Section, limits: Limits) -> Iterator[Section]:
    """``section`` in parts that each fit an empty dashboard (its alarms go with the
    first part)."""
    part: list[Widget] = []
    metrics = 0
    alarms = section.alarm_arns
    room = limits.widgets - alarm_widgets_needed(len(alarms), limits)
    for widget in section.widgets:
        if part and (len(part) >= room or metrics + widget.metrics > limits.metrics):
            yield Section(tuple(part), alarms)
            part, metrics, alarms = [], 0, ()
            room = limits.widgets
        part.append(widget)
        metrics += widget.metrics
    if part:
        yield Section(tuple(part), alarms)


def paginate(sections: Sequence[Section], limits: Limits = Limits()) -> list[Page]:  # noqa: B008
    """The sections in order on as few dashboards as the limits allow: each section goes
    on the current page if it fits (its widgets, its metrics and the alarm status widgets
    its alarms need), else on a new one; a section larger than a page is split. A widget
    retrieving more than ``limits.metrics_per_widget`` metrics is the caller's mistake."""
    for section in sections:
        for widget in section.widgets:
            if widget.metrics > limits.metrics_per_widget:
                raise ValueError(
                    f"a widget retrieves {widget.metrics} metrics; a dashboard widget may "
                    f"retrieve {limits.metrics_per_widget}: split it"
                )
    pages = [Page()]
    for section in sections:
        for part in _split(section, limits) if not _fits(Page(), section, limits) else [section]:
            if not _fits(pages[-1], part, limits):
                pages.append(Page())
            pages[-1].sections.append(part)
    return [page for page in pages if page.sections]


def place(rows: Sequence[Sequence[Widget]]) -> list[dict[str, Any]]:
    """The widgets of ``rows`` with their grid positions: left to right, wrapping at 24
    columns; each row of ``rows`` starts below everything placed before it."""
    placed: list[dict[str, Any]] = []
    top = 0
    for row in rows:
        x, y, line_height, bottom = 0, top, 0, top
        for widget in row:
            width = min(widget.width, GRID_COLUMNS)
            if x + width > GRID_COLUMNS:
                x, y = 0, y + line_height
                line_height = 0
            placed.append(
                {
                    "type": widget.type,
                    "x": x,
                    "y": y,
                    "width": width,
                    "height": widget.height,
                    "properties": widget.properties,
                }
            )
            x += width
            line_height = max(line_height, widget.height)
            bottom = max(bottom, y + widget.height)
        top = bottom
    return placed


def alarm_status_widgets(
    alarm_arns: Sequence[str],
    title: str,
    limits: Limits = Limits(),  # noqa: B008
) -> list[Widget]:
    """Alarm status widgets (full width) listing ``alarm_arns``, at most
    ``limits.alarms_per_widget`` each."""
    step = limits.alarms_per_widget
    chunks = [list(alarm_arns[i : i + step]) for i in range(0, len(alarm_arns), step)]
    return [
        Widget(
            "alarm",
            {
                "title": title if len(chunks) == 1 else f"{title} ({n + 1}/{len(chunks)})",
                "alarms": chunk,
                "sortBy": "stateUpdatedTimestamp",
                "states": [],
            },
            width=GRID_COLUMNS,
            height=2 + len(chunk) // 4,
        )
        for n, chunk in enumerate(chunks)
    ]


def page_body(page: Page, title: str, limits: Limits = Limits()) -> dict[str, Any]:  # noqa: B008
    """A dashboard body for ``page``: its alarms first, then each section from a new row;
    graphs show the last three hours by default."""
    rows: list[Sequence[Widget]] = []
    if page.alarm_arns:
        rows.append(alarm_status_widgets(page.alarm_arns, f"{title}: alarms", limits))
    rows.extend(section.widgets for section in page.sections)
    return {"start": "-PT3H", "periodOverride": "inherit", "widgets": place(rows)}

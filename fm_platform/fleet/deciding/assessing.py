"""The options and hosting decision of each distinct entry of a catalog.

In: per entry number, one model of it, its needs and the needs that models alike share
(:func:`~fm_platform.fleet.sizing.needs.alike_needs`). Out: per entry, its needs, its priced
options and its decision, or why it cannot be assessed. The options of models alike are
computed once per process (:func:`~fm_platform.fleet.deciding.options.alike_options`) and priced
once per traffic.
"""

from __future__ import annotations

from typing import TypeAlias

from fm_platform.fleet.deciding.fitness import Decider, Decision
from fm_platform.fleet.deciding.options import Assessment, alike_options, priced_assessment
from fm_platform.fleet.models.catalog import ModelEntry
from fm_platform.fleet.sizing.needs import Needs

#: An entry's needs, options and decision, or why it cannot be assessed.
Result: TypeAlias = "tuple[Needs, Assessment, Decision | None] | str"
#: Per entry number, one model of it, its needs and what models alike share of them
#: (:func:`~fm_platform.fleet.sizing.needs.alike_needs`).
Work: TypeAlias = "dict[int, tuple[ModelEntry, Needs, Needs]]"


def assess_entries(work: Work, region: str, decider: Decider) -> dict[int, Result]:
    """Each entry's :class:`Result`, in ``work``'s order."""
    results: dict[int, Result] = {}
    for key, (model, needs, alike) in work.items():
        try:
            options = alike_options(alike, region)
        except ValueError as error:
            results[key] = str(error)
            continue
        assessment = priced_assessment(options, needs)
        results[key] = (needs, assessment, decider.decide(model, assessment))
    return results

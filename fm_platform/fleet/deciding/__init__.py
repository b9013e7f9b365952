"""Deciding: how each model should be hosted.

In: a model's needs. Out: its options per endpoint kind, instance type and degree, priced
at its traffic (:mod:`~fm_platform.fleet.deciding.options`), the hosting decision the five
fitness scores and the catalog's priorities drive (:mod:`~fm_platform.fleet.deciding.fitness`),
and what the catalog's ``group`` and isolation choices cost.
"""

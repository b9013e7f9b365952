"""Model facts: the catalog and what is known about each model before it is sized.

In: a catalog file (YAML or JSON). Out: a validated
:class:`~fm_platform.fleet.models.catalog.Catalog` of model entries, with the
architectures the planner knows by name (``fleet/data/architectures.json``), where each
model's weights and container come from, and its LoRA adapters folded onto their base
models.
"""

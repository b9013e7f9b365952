"""Placing: every model on an endpoint, every endpoint in a stack.

In: the catalog, each model's decision and options, and the previous plan (state).
Out: a :class:`~fm_platform.fleet.outputs.plan.Plan`: models packed onto shared endpoints,
instance counts and scaling targets, fallback pools, stacks and costs; repacking moves.
"""

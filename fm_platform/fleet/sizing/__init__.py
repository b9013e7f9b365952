"""Sizing: what one copy of a model needs and serves.

In: a catalog entry. Out: its :class:`~fm_platform.fleet.sizing.needs.Needs` (weights, KV
cache, request shape, latency objective) and, per instance type and tensor-parallel degree,
the requests a minute one copy sustains (measured rows of ``fleet/data/performance.json``
where they exist, else the estimate per task: decoders, diffusion pipelines, speech,
encoders), its cold start and its serverless memory sizes.
"""

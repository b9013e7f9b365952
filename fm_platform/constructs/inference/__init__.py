"""Inference side: SageMaker real-time endpoints (Inference Components, single-model,
multi-model) and their scaling."""

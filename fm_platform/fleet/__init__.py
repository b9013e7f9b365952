"""Fleet side: plan hundreds of models from one catalog onto SageMaker endpoints (fitness
scores, hosting option, packing, stable assignment, cost) and synthesize the plan to
sharded stacks."""

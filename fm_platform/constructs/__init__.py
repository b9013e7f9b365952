"""CDK constructs, one module per concern."""

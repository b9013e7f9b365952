"""`fmp`: the operations command line for the deployed training and inference stacks."""

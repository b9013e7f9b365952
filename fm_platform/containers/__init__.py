"""Serving containers: which AWS Deep Learning Container image a model family runs on each
kind of hardware, and the environment that makes it serve as planned. Pure Python (no
aws-cdk-lib): the planner, the CLI and the stacks read it alike."""

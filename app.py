#!/usr/bin/env python3
"""CDK app entry point: the default (or configured) training and inference stacks, checked
by cdk-nag on every synth. Configuration: see README.md, "Configure"."""

import aws_cdk as cdk

from fm_platform.app import build_app

app = cdk.App()
build_app(app)
app.synth()

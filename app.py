#!/usr/bin/env python3
"""CDK app entry point: the default (or configured) training and inference stacks, checked
by cdk-nag on every synth. Configuration: see README.md, "Configure"."""

import sys

from fm_platform.app import main

sys.exit(main())

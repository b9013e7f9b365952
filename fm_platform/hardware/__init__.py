"""Facts about the hardware: what each ``ml.*`` instance type holds, what it costs, and
which region an AZ ID is in. Pure Python (no aws-cdk-lib), so the planner and the CLI can
use them.

- :mod:`fm_platform.hardware.instances`: accelerators, memory and network facts per
  instance type, which botocore does not know, from the package data file
  ``instance_specs.json`` (sources and date inside the file);
  ``scripts/regenerate_instance_specs.py`` (a maintenance tool, not shipped) rebuilds it.
- :mod:`fm_platform.hardware.devices`: per accelerator, memory bandwidth, FP32 and 16-bit
  throughput and compute capability; per CPU family, FP32 per vCPU (the planner's
  roofline), from ``device_figures.json`` (a source per record).
- :mod:`fm_platform.hardware.prices`: on-demand hourly prices of SageMaker hosting;
  :mod:`fm_platform.hardware.price_list` regenerates them from the AWS Price List.
- :mod:`fm_platform.hardware.regions`: the region of an AZ ID.
"""

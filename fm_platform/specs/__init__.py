"""Facts the constructs check input against.

- :mod:`fm_platform.specs.sagemaker_model`: limits, enums and name patterns read from
  botocore's SageMaker service model (the same model the AWS APIs validate against).
- :mod:`fm_platform.specs.instances`: accelerators, memory and network facts per ``ml.*``
  instance type, which botocore does not know, from the package data file
  ``instance_specs.json`` (sources and date inside the file).
"""

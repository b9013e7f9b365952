"""The ground floor under the constructs: CDK tokens, a construct's stack and its values,
the compliance packs and their acknowledgements, the default model images, customer-managed
keys and how props are checked. It imports nothing above it (no constructs, configuration,
stacks, planner or CLI); it may read the rules and the hardware facts, which load no
aws-cdk-lib."""

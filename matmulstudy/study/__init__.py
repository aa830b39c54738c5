"""What a study is: its variants, its settings, the plan of its jobs and where their files lie.

paths       the repository's files and the workflow's path templates, in one place
registry    kernels/registry.yaml: the variants, their chapters and roles (variant.py: one variant;
            expressions.py: the arithmetic of its defines)
counters    the hardware counters a step names as showing its change
settings    config/config.yaml validated into typed settings (shapes.py: a shape)
plan        the jobs: what is measured, built, and checked against what
run         one run: the settings resolved (label, arch), what this GPU skips, the jobs
snapshot    what a study was measured with, kept beside its tables
provenance  where a result comes from: commit, host, time
"""

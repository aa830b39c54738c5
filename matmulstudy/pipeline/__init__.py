"""The Snakemake side: what the Snakefile and its rule scripts call, and nothing of the study's logic.

rules       the files each rule reads and writes, its wildcard patterns and resources, for one run
preflight   what a run checks before its first job (a GPU, folders it can write)
rulescript  logging and one-line errors for the rule scripts
ending      the lines that end a run of the workflow
"""

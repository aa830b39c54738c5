"""The report: a study's tidy tables, and the figures and pages drawn from them without a GPU.

results      the tidy results table, its summary, failures and the hardware table
committed    one committed study (reports/<label>/), read for drawing and checking
figures      the one table of figures
plots/       the figures themselves
explain      the progression table, and why a step is slower
study_facts  where and how a study was measured, and what checked it
pages        each study's summary page and the index across GPUs
render       every figure and page of committed studies
"""

# Every sample of the study in one tidy table, with the summary, failures,
# the GPU's facts, and what the study was measured with (its registry
# entries and settings: matmulstudy/study/snapshot.py).


rule collect_results:
    input:
        bench=lambda wc: RULES.samples(wc.label),
        resources=lambda wc: RULES.resource_reports(wc.label),
        sass=lambda wc: RULES.sass_reports(wc.label),
        ncu=lambda wc: RULES.ncu_reports(wc.label),
        sanitizer=lambda wc: RULES.sanitizer_reports(wc.label),
        tuning=lambda wc: RULES.tuning_tables(wc.label),
        gpu=lambda wc: RULES.gpu_facts(wc.label),
        energy=lambda wc: [paths.ENERGY.format(label=wc.label)] if RUN.measures_energy else [],
        headline=lambda wc: [paths.HEADLINE.format(label=wc.label)] if RUN.measures_headline else [],
    output:
        **{key: paths.study_file(key) for key in
           ("results", "measured_with", "summary", "hardware", "failures", "skipped", "gpu", "registry", "config")},
        **({"sanitizer": paths.study_file("sanitizer")} if SETTINGS.sanitizer else {}),
        **({"tuning": paths.study_file("tuning")} if RUN.tuned else {}),
        **({"energy": paths.study_file("energy")} if RUN.measures_energy else {}),
        **({"headline": paths.study_file("headline")} if RUN.measures_headline else {}),
        **({"counters_at": paths.study_file("counters_at")} if RUN.shown_at else {}),
    log:
        "logs/collect_results/{label}.log",
    params:
        settings=SETTINGS,
        skipped=RUN.skipped,
        why_no_energy=RUN.why_no_energy,
    script:
        "../scripts/collect_results.py"

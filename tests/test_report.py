"""The report, rendered without a GPU from the committed results, as CI does; and the probe: a
step added to the registry changes no committed study."""

import json
import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from conftest import ROOT, fresh_copy, snakemake, svg_words
from matmulstudy.report.results import read_results, write_results
from matmulstudy import precisions
from matmulstudy.report import render
from matmulstudy.report.committed import Study
from matmulstudy.study import snapshot
from matmulstudy.report.figures import FIGURES, family
from matmulstudy.study.registry import Registry, load_registry
from matmulstudy.precisions import PRECISIONS

TABLES = ["samples.csv.gz", "measured_with.csv", "summary.csv", "hardware.csv", "gpu.json", "failures.txt", "config.yaml",
          "registry.yaml", "crosscheck.csv", "repeat.csv", "before.csv", "sanitizer.csv", "faults.csv"]
COMMITTED = render.studies_in(ROOT / "reports")
COURSE = "h200"   # the study whose step pages the course (README, docs/) links: re-run at the numbering of today
LEGIBLE = "error:illegible figure:UserWarning"   # an IllegibleFigure (its words, its base class) stops a render
RENDER = "snakemake -s workflow/render.smk --cores 1 --forceall --report reports/report.html --report-after-run"


def copy_tables(dest):
    """Only the committed tables: every figure and page must come from them."""
    for folder in COMMITTED:
        (dest / "reports" / folder.name).mkdir(parents=True)
        for name in TABLES:
            if (folder / name).exists():
                shutil.copy(folder / name, dest / "reports" / folder.name / name)


def test_the_committed_studies_are_the_h100s_and_the_h200s():
    """One study per GPU model, each of every chapter with its repeat inside (issue 23)."""
    assert [f.name for f in COMMITTED] == ["h100", "h200"]
    for folder in COMMITTED:
        assert (folder / "repeat.csv").exists() and (folder / "repeat" / "summary.csv").exists()


def test_readme_documents_the_render_command_and_shows_the_figure():
    readme = (ROOT / "README.md").read_text()
    assert RENDER in readme
    assert f"](reports/{COURSE}/figures/progression.png)" in readme
    for folder in COMMITTED:
        assert f"](reports/{folder.name}/README.md)" in readme


def test_the_readmes_numbers_are_those_of_the_committed_studies():
    """Every figure the README quotes from a study is written from reports/ (report/readme.py), and which steps
    each GPU runs from the registry: after a new study, `python -m matmulstudy.tools.readme` writes them again,
    and until then this fails."""
    from matmulstudy.report import readme
    text = (ROOT / "README.md").read_text()
    assert readme.replaced(text, readme.block(readme.committed_studies(ROOT / "reports"), load_registry())) == text, \
        "README.md's numbers differ from reports/: run python -m matmulstudy.tools.readme"


def test_the_readme_block_is_replaced_between_its_markers_and_only_there():
    from matmulstudy.report import readme
    text = f"before\n{readme.BEGIN}\nold figures\n{readme.END}\nafter\n"
    assert readme.replaced(text, f"{readme.BEGIN}\nnew\n{readme.END}") == f"before\n{readme.BEGIN}\nnew\n{readme.END}\nafter\n"
    with pytest.raises(ValueError, match="no .* block"):
        readme.replaced("no markers", "x")


def test_the_readmes_chapter_table_has_a_cell_for_every_gpu_and_size_and_the_best_step_in_it():
    """Each chapter's row has a cell per GPU and size: the best verified step's share of cuBLAS in its precision
    and its number in the course now (the live registry's, whatever the study's own registry numbered it)."""
    from matmulstudy.report import readme
    studies, registry = readme.committed_studies(ROOT / "reports"), load_registry()
    lines = readme.chapter_table(studies, (4096,), registry)
    rows = {cells[0]: cells[2:] for cells in ([c.strip() for c in line.split("|")[1:-1]]
                                              for line in lines[2:])}
    for chapter in registry.chapters.values():
        name = next(k for k in rows if k.startswith(f"[{chapter.title}]"))
        for st, cell in zip(studies, rows[name]):
            s = st.summary
            mine = s[(s.M == 4096) & (s.N == 4096) & (s.K == 4096) & s.verified
                     & s.variant.isin([v.id for v in registry.steps(chapter.id)])]
            if mine.empty:   # a chapter the study did not measure (it came after it)
                assert cell == readme.ABSENT
                continue
            best = mine.loc[mine["frac_of_cublas"].idxmax()]
            assert cell == f"{best['frac_of_cublas']:.1%} ({registry[best['variant']].title.split()[0]})"
    # every reference of the live registry is named, and a study that did not measure one shows ABSENT there
    references = [r for r in (registry.reference(p) for p in precisions.TABLE) if r is not None]
    labels = " / ".join(r.precision.label for r in references)
    assert lines[-1].startswith(f"| cuBLAS {labels}, TFLOP/s |")
    for st, cell in zip(studies, [c.strip() for c in lines[-1].split("|")[1:-1]][2:]):
        measured = set(st.summary["variant"])
        assert [v == readme.ABSENT for v in cell.split(" / ")] == [r.id not in measured for r in references]


def test_a_study_numbered_before_the_course_was_renumbered_says_so_in_the_readme():
    """A committed study whose own registry numbers a step otherwise than the live one is named with a note, in
    the README and on reports/README.md (its pages keep the numbers it had); one numbered as now has none.
    Tried on a committed study's registry with one step's number changed."""
    import dataclasses
    from matmulstudy.report import readme
    registry = load_registry()
    st = readme.committed_studies(ROOT / "reports")[0]
    step = next(v for v in registry.values() if v.title[0].isdigit() and v.id in st.registry)
    same = {v.id: registry[v.id] for v in st.registry.values() if v.id in registry}
    changed = {**same, step.id: dataclasses.replace(step, title="99 " + step.title.split(maxsplit=1)[1])}
    for variants, note in ((same, False), (changed, True)):
        mine = dataclasses.replace(st, registry=Registry(st.registry.chapters, variants, st.registry.raw))
        assert readme.renumbered(mine, registry) == note
        assert ("measured before the steps were renumbered" in readme._gpu(mine, registry)) == note
        from matmulstudy.report.pages import index_page   # and the page of every GPU's study, reports/README.md
        assert ("the course was renumbered since" in index_page([mine], 4096, registry)) == note


def test_the_readmes_gpu_table_follows_the_registrys_needs():
    from matmulstudy.report import readme
    lines = readme.gpu_table(load_registry())
    turing, hopper = (next(line for line in lines if f"({arch})" in line) for arch in ("sm_75", "sm_90"))
    assert "| 1-8 | 9-17 | none | none | none | none | FP32 |" in turing
    assert "| 1-8 | 9-23 | 24-36 | 37-49 | 50 | 51-53 | FP32, TF32, BF16, FP8 fast-accum, FP8 |" in hopper


def test_an_svg_has_the_same_bytes_whatever_the_cpus_last_bit():
    """Two CPUs that differ in a coordinate's last bit (NumPy's AVX2 and AVX-512 logarithms) write the
    same SVG: coordinates to a hundredth of a point, hashed ids numbered; the words are left alone."""
    from matmulstudy.report.plots.style import steady_svg
    def page(edge, clip):
        return (f'<clipPath id="{clip}"><rect x="78.189375" width="{edge}"/></clipPath>'
                f'<path d="M 1.5 -0.001 L {edge} 2.004999" clip-path="url(#{clip})"/><!-- 97.3125% -->')
    avx2, avx512 = steady_svg(page("724.640812", "p284d2f720b")), steady_svg(page("724.640813", "p1f0e9a8b7c"))
    assert avx2 == avx512
    assert avx2 == ('<clipPath id="px1"><rect x="78.19" width="724.64"/></clipPath>'
                    '<path d="M 1.5 0 L 724.64 2" clip-path="url(#px1)"/><!-- 97.3125% -->')
    # a figure's corner summed to -0.0 on one render and 0 on another (progression_by_gpu): both 0, and only those
    assert steady_svg('<path d="M 0 -0 L -0 -0.5 L -0.004 -05"/><!-- -0 -->') == \
        '<path d="M 0 0 L 0 -0.5 L 0 -05"/><!-- -0 -->'


def add_a_step(repo) -> str:
    """What a user does to add a step: a new numbered kernel file in its chapter's folder (here a copy of a
    step that has a file of its own, its kernel renamed) and one registry entry appended to
    kernels/registry.yaml. Returns its id."""
    registry = load_registry(repo / "kernels" / "registry.yaml")
    model = next(v for v in registry.steps() if v.kernel == v.id)
    number = max(int(v.file.name[:2]) for v in registry.values() if v.file) + 1
    vid = f"gpu_added_{number:02d}"
    source = re.sub(rf"\b{model.kernel}\b", vid, model.file.read_text())
    (model.file.parent / f"{number:02d}_{vid}.cu").write_text(source)
    entry = dict(registry.raw_entry(model.id), id=vid, file=f"{model.chapter}/{number:02d}_{vid}.cu",
                 title=f"{number} a step added later", source="tests/test_report.py's probe")
    entry.pop("kernel", None)
    text = yaml.safe_dump([entry], sort_keys=False)
    with open(repo / "kernels" / "registry.yaml", "a") as fh:
        fh.write("\n" + "".join("  " + line for line in text.splitlines(keepends=True)))
    return vid


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    """A fresh copy of the repository with a step added; its package is the one that runs there."""
    repo = tmp_path_factory.mktemp("probe")
    fresh_copy(repo)
    vid = add_a_step(repo)
    env = {**os.environ, "PYTHONPATH": str(repo)}
    where = subprocess.run([sys.executable, "-c", "import matmulstudy; print(matmulstudy.__file__)"], cwd=repo,
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(repo)), where
    return repo, env, vid


@pytest.fixture(scope="module")
def rendered(probe):
    """Every committed study re-rendered in the probe's copy, as CI renders them (render.smk), every figure
    legible where it is shown: an IllegibleFigure (report/plots/legible.py) fails the render."""
    repo, env, _ = probe
    args = [a for a in RENDER.split()[1:] if a not in ("-s", "workflow/render.smk")]
    proc = snakemake(*args, cwd=repo, snakefile=repo / "workflow" / "render.smk",
                     env={**env, "PYTHONWARNINGS": LEGIBLE})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Invalid -W option" not in proc.stderr + proc.stdout   # the check was made, not ignored
    return repo / "reports"


@pytest.mark.slow
def test_a_new_step_is_in_the_dag_and_changes_no_committed_study(probe, rendered):
    """The dry run of a study plans the new step; every committed figure, page and table re-renders
    byte for byte from the studies' own registries (the snapshot), whatever the live one says."""
    repo, env, vid = probe
    proc = snakemake("-n", "--config", "label=probe", "arch=sm_90", cwd=repo, snakefile=repo / "Snakefile", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"results/probe/build/float32/{vid}.cubin" in proc.stdout
    assert f"results/probe/bench/float32/{vid}_s0.csv" in proc.stdout
    changed = [str(p.relative_to(rendered)) for p in sorted(rendered.rglob("*")) if p.is_file()
               and p.name != "report.html" and p.read_bytes() != (ROOT / "reports" / p.relative_to(rendered)).read_bytes()]
    assert changed == []


@pytest.mark.slow
@pytest.mark.parametrize("label", [f.name for f in COMMITTED])
def test_every_figure_of_every_gpu_is_drawn_with_every_step(rendered, label):
    figures = rendered / label / "figures"
    has = {v.precision.id for v in snapshot.read_registry(rendered / label).steps()} | {"int32"}
    registry = snapshot.read_registry(rendered / label)   # the study's own
    energy = "mean_power_w" in pd.read_csv(rendered / label / "summary.csv", nrows=1)
    for f in FIGURES:
        # else a figure that says there is no step of its precision or its chapter, or no energy (a study
        # measured before it was)
        big = (not f.name.startswith("progression_") or f.name.split("_", 1)[1] in has) and \
            (energy or not f.name.startswith("power")) and (f.chapter is None or registry.steps(f.chapter))
        for ext in f.files:
            assert (figures / f"{f.name}.{ext}").stat().st_size > (5_000 if big else 0), (f.name, ext)
    words = {f.name: svg_words(figures / f"{f.name}.svg") for f in FIGURES}
    fp32 = [v.title for v in registry.steps(precision=PRECISIONS["fp32"])]
    tensor = [v.title for v in registry.steps(precision=PRECISIONS["tf32"])]
    # the FP32 progression draws the FP32 steps, progression_tf32 the TF32 ones
    for name, titles in (("progression", fp32), ("progression_tf32", tensor)):
        assert [t for t in titles if t not in words[name]] == [], name
    for chapter in registry.chapters:   # a chapter's figures its steps, each in the words its figure uses
        steps = registry.steps(chapter)
        context = {v.title for v in registry.values() if not v.is_step and v.is_gpu and v.runs_on((4096,) * 3)}
        for name, shown in (("roofline", [v.title for v in steps]), ("size_sweep", [v.title for v in steps]),
                            ("efficiency", [v.title for v in steps]), ("hardware", [v.number for v in steps]),
                            ("timing", [v.title for v in steps if v.runs_on((4096,) * 3)])):
            assert [t for t in shown if t not in words[f"{name}_{chapter}"].split("  ") and
                    t not in words[f"{name}_{chapter}"]] == [], (name, chapter)
        assert any(t in words[f"timing_{chapter}"] for t in context) or not steps, chapter   # its reference


@pytest.mark.slow
@pytest.mark.parametrize("label", [f.name for f in COMMITTED])
def test_summary_page_counts_failures_and_throttled_samples(rendered, label):
    page = (rendered / label / "README.md").read_text()
    summary = pd.read_csv(rendered / label / "summary.csv")
    failed = int((~summary["verified"]).sum())
    throttled = int(summary["throttled_samples"].fillna(0).sum())
    assert f"| failed verifications | {failed}" in page
    assert f"| throttled samples | {throttled}" in page
    assert "![the progression at 4096](figures/progression.png)" in page
    assert "![each chapter's best step by size](figures/best_by_size.svg)" in page
    gpu = pd.read_json(rendered / label / "gpu.json", typ="series")
    assert gpu["gpu_name"] in page and f"UUID `{gpu['uuid']}`" in page
    provenance = (rendered / label / "provenance.rst").read_text()
    assert f"**Failed verifications**: {failed} of {len(summary)}" in provenance


@pytest.mark.slow
def test_cross_gpu_figure_and_the_html_report(rendered):
    svg = svg_words(rendered / "figures" / "progression_by_gpu_fp32.svg")
    index = (rendered / "README.md").read_text()
    for folder in COMMITTED:
        name = pd.read_json(folder / "gpu.json", typ="series")["gpu_name"]
        assert name in svg and f"[{folder.name}/]({folder.name}/README.md)" in index
    html = (rendered / "report.html").read_text()
    assert len(html) > 1_000_000
    for text in ("Measured on", "1. Progression", "3. Efficiency", "7. Across GPUs", "Throttled samples"):
        assert text in html, text


def test_the_cross_gpu_figure_sets_a_step_beside_itself_when_two_studies_number_it_otherwise():
    """A study measured before the steps were renumbered (its own registry) and one measured after: a step is
    one group of bars, named as the newer study names it, not two groups of one bar each. Tried with one
    study's registry giving the BF16 steps other numbers."""
    import dataclasses
    from matmulstudy.report.plots.gpus import _by_gpu_column
    from matmulstudy.report.study_facts import facts
    from matmulstudy.report.committed import Study
    studies = [Study.load(folder) for folder in COMMITTED]
    older = min(range(len(studies)), key=lambda i: str(facts(studies[i])["first"]))
    raw = studies[older].registry
    renamed = {v.id: dataclasses.replace(v, title="9" + v.title) if v.precision.id == "bf16" and v.is_step else v
               for v in raw.values()}
    studies[older] = dataclasses.replace(studies[older], registry=Registry(raw.chapters, renamed, raw.raw))
    df, order, chapters, _ = _by_gpu_column(studies, [st.label for st in studies], 4096, PRECISIONS["bf16"])
    assert (df.groupby("variant")["title"].nunique() == 1).all()
    assert len(order) == df["variant"].nunique() == len(set(order))
    newer = studies[1 - older].registry
    assert set(order) == {newer[v].title for v in df["variant"].unique()}


def test_a_study_that_keeps_the_one_before_it_says_how_far_each_median_moved(tmp_path):
    """Issue 58: a study re-run after a change of the code is set against the one before it (compare's
    before.csv, its facts in before/): the page counts the GPU medians from 1024 inside that study's
    interquartile range and within 1% and 2%, names those beyond, and says how far the repeat of the same code
    moved. Tried with the committed H200 study's repeat as the study before, one median moved by hand by 5%."""
    from matmulstudy.report.committed import Study
    from matmulstudy.report.study_facts import harness_checks
    from matmulstudy.tools.compare import agreement
    folder = tmp_path / "h200"
    shutil.copytree(ROOT / "reports" / "h200", folder,
                    ignore=shutil.ignore_patterns("figures", "steps", "kernels.tar.gz", "before", "before.csv"))
    shutil.copytree(folder / "repeat", folder / "before")
    pd.DataFrame({"git_commit": ["0123456789abcdef"]}).to_csv(folder / "before" / "measured_with.csv", index=False)
    summary = pd.read_csv(folder / "summary.csv")
    moved = (summary["variant"] == "gpu_wgmma_bf16_drawn_late") & (summary["M"] == 8192)
    summary.loc[moved, "median_ms"] *= 1.05
    summary.to_csv(folder / "summary.csv", index=False)
    table = agreement(pd.read_csv(folder / "before" / "summary.csv"), summary)
    table.to_csv(folder / "before.csv", index=False)
    study = Study.load(folder)
    checks = harness_checks(study)
    line = next(x for x in checks if x.startswith("| against the study before it"))
    big = table[(table[["M", "N", "K"]].min(axis=1) >= 1024) & study.on_gpu(table)]
    before_uuid = json.loads((folder / "before" / "gpu.json").read_text())["uuid"]
    where = "on the same GPU" if before_uuid == study.gpu["uuid"] else f"UUID `{before_uuid}`"
    assert "commit `0123456789`" in line and where in line
    inside = int(big["within_first_iqr"].sum())
    assert f"of {len(big)} GPU medians, {inside} inside that study's interquartile range" in line
    assert f"{int((big['difference'].abs() <= 0.01).sum())} within 1%" in line
    far = big[big["difference"].abs() > 0.02]
    heading = f"Beyond 2% of the study before ({len(far)}):"
    assert len(far) >= 1 and heading in checks   # listed under the table, the largest move first, 10 at most
    listed = [x for x in checks[checks.index(heading):] if x.startswith("- ")][:11]
    mine = table[table["variant"].eq("gpu_wgmma_bf16_drawn_late") & table["M"].eq(8192)]["difference"].iloc[0]
    assert listed[0] == f"- **{study.registry['gpu_wgmma_bf16_drawn_late'].title}** at 8192×8192×8192 {mine:+.1%}"
    assert len(listed) == min(len(far), 10) + (len(far) > 10)
    assert "two studies of this code moved by up to" in line
    (folder / "before.csv").unlink()
    assert not [x for x in harness_checks(Study.load(folder)) if "study before" in x]


def test_counters_and_sanitizer_runs_taken_on_another_gpu_say_which(tmp_path):
    """Nsight Compute and the sanitizer may run on a second GPU of the host while the first times the steps
    (a study in one call), or on another machine: the pages name that GPU by its UUID, the energy phase's and
    the headline rounds' too; tables that do not record it say nothing."""
    from matmulstudy.report.committed import Study
    from matmulstudy.report.study_facts import harness_checks, verification
    folder = tmp_path / "h100"
    shutil.copytree(ROOT / "reports" / "h100", folder,
                    ignore=shutil.ignore_patterns("figures", "steps", "kernels.tar.gz"))
    ncu_line = lambda: next(x for x in harness_checks(Study.load(folder)) if x.startswith("| Nsight Compute"))
    sanitizer_line = lambda: next(x for x in verification(Study.load(folder)) if x.startswith("compute-sanitizer"))
    assert "UUID" not in ncu_line() and "UUID" not in sanitizer_line()
    own = Study.load(folder).gpu["uuid"]
    hardware, sanitizer = pd.read_csv(folder / "hardware.csv"), pd.read_csv(folder / "sanitizer.csv")
    hardware.assign(ncu_gpu_uuid=hardware["ncu_shape"].where(hardware["ncu_shape"].isna(), "GPU-second")).to_csv(
        folder / "hardware.csv", index=False)
    sanitizer.assign(gpu_uuid=own).to_csv(folder / "sanitizer.csv", index=False)
    assert ncu_line().endswith("), on another NVIDIA H100 80GB HBM3 (UUID `GPU-second`) | [hardware.csv](hardware.csv) |")
    assert ", on the same GPU: " in sanitizer_line()
    from matmulstudy.report.pages import holds, study_page   # a study without ncu's counters (ncu: false) is listed too
    assert "Nsight Compute" in holds(Study.load(folder))
    # the energy phase and the headline rounds, where their tables record a GPU (a study resumed elsewhere)
    page = study_page(Study.load(folder))
    assert "([energy.csv](energy.csv)):" in page and "rounds on one GPU, the steps" in page
    for name, uuid in (("energy.csv", "GPU-third"), ("headline.csv", own)):
        pd.read_csv(folder / name).assign(gpu_uuid=uuid).to_csv(folder / name, index=False)
    page = study_page(Study.load(folder))
    assert "([energy.csv](energy.csv)), on another NVIDIA H100 80GB HBM3 (UUID `GPU-third`):" in page
    assert "rounds, on the same GPU, the steps" in page
    hardware.drop(columns=[c for c in hardware if c.startswith("ncu")]).to_csv(folder / "hardware.csv", index=False)
    assert "Nsight Compute" not in holds(Study.load(folder)) and "compute-sanitizer" in holds(Study.load(folder))


@pytest.mark.slow
def test_a_failed_measurement_is_marked_and_counted(tmp_path):
    """One H100 measurement turned into a failure: the figures mark it, the page counts it."""
    copy_tables(tmp_path)
    folder = tmp_path / "reports" / "h100"
    df = read_results(folder / "samples.csv.gz")
    hit = (df.variant == "gpu_tiled") & (df.dtype == "float32") & (df.M == 4096) & (df.N == 4096) & (df.K == 4096)
    df = pd.concat([df[~hit], df[hit].head(1).assign(verified=False, time_ms=float("nan"),
                                                      gflops=float("nan"), bad_elements=7)])
    write_results(df, folder / "samples.csv.gz")
    s = pd.read_csv(folder / "summary.csv")
    s.loc[(s.variant == "gpu_tiled") & (s.dtype == "float32") & (s.M == 4096) & (s.N == 4096) & (s.K == 4096),
          ["verified", "samples", "median_gflops", "frac_of_cublas", "frac_of_fp32_peak"]] = [False, 0] + [None] * 3
    s.to_csv(folder / "summary.csv", index=False)
    render.render(folder, only=["progression", "efficiency"])
    assert "| failed verifications | 1 (see [failures.txt](failures.txt))" in (folder / "README.md").read_text()
    assert "verification" in (folder / "figures" / "progression.svg").read_text()
    chapter = snapshot.read_registry(folder)["gpu_tiled"].chapter
    assert "failed" in svg_words(folder / "figures" / f"efficiency_{chapter}.svg").split()


def test_the_margin_figure_is_drawn_where_no_check_measured_a_precision_against_fp32s_bound(tmp_path):
    """A small study can hold no margin against FP32's bound for a whole precision (the README's study on an H200
    with numpy, gpu_naive, step 47, cuBLAS and cuBLAS BF16 at 64 and 256: its report stopped at this figure).
    The figure is drawn, without the circles that would mark those margins."""
    copy_tables(tmp_path)
    folder = tmp_path / "reports" / "h100"
    s = pd.read_csv(folder / "summary.csv")
    label = f"against {precisions.BASE.label}"
    tensor = next(c for c in snapshot.read_registry(folder).chapters.values() if not c.precision.is_base).id
    assert label in (ROOT / "reports" / "h100" / "figures" / f"margin_{tensor}.svg").read_text()
    s.loc[s.precision != precisions.BASE.id, "fp32_margin"] = None
    s.to_csv(folder / "summary.csv", index=False)
    render.render(folder, only=["margin"])
    svg = (folder / "figures" / f"margin_{tensor}.svg").read_text()
    assert "Verification margins" in svg and label not in svg


def test_an_exact_result_has_its_point_on_the_margin_figure(tmp_path):
    """A result right to the last bit (margin 0: step 47 and cuBLAS BF16 at 1x1x1 on an H200) has no place on
    the figure's log scale: it is drawn at the left edge, and the axis says how many are."""
    copy_tables(tmp_path)
    folder = tmp_path / "reports" / "h100"
    s = pd.read_csv(folder / "summary.csv")
    first = next(iter(snapshot.read_registry(folder).chapters))
    assert "exact results" not in (ROOT / "reports" / "h100" / "figures" / f"margin_{first}.svg").read_text()
    hit = (s.M == 256) & (s.N == 256) & (s.K == 256) & (s.dtype == "float32")
    s.loc[hit, "margin"] = 0.0
    s.to_csv(folder / "summary.csv", index=False)
    render.render(folder, only=["margin"])
    study = Study.load(folder)
    zeros = len(study.chapter_rows(s[hit], first, context=True))
    assert zeros > 0 and f"{zeros} exact results (margin 0) drawn at the left" in \
        svg_words(folder / "figures" / f"margin_{first}.svg")


@pytest.mark.slow
def test_figures_drawn_side_by_side_have_the_bytes_of_those_drawn_one_after_another(tmp_path):
    """plot_report draws a study's figures in as many processes as it has cores (render.render's workers):
    each figure comes out byte for byte as the committed one, drawn one after another (tests/test_figures.py
    draws them all one after another; here a figure of each kind, one a process)."""
    copy_tables(tmp_path)
    folder = tmp_path / "reports" / "h100"
    shutil.copy(ROOT / "reports" / "h100" / "kernels.tar.gz", folder)   # the step pages read it
    kinds = list(dict.fromkeys(family(f) for f in FIGURES))
    names = [next(f.name for f in FIGURES if family(f) == kind) for kind in kinds]
    drawn = [p for p in render.render(folder, only=names, workers=3) if p.parent.name == "figures"]
    assert len(drawn) >= len(names) > 5
    assert [p.name for p in drawn if p.read_bytes() != (ROOT / "reports" / "h100" / "figures" / p.name).read_bytes()] \
        == []


def test_a_value_beside_a_bar_is_written_one_way():
    """Issue 26: the hardware figure wrote its numbers three ways ('4.63e-05', '0.000349', '6')."""
    from matmulstudy.report.plots.style import value_label
    assert [value_label(v) for v in (0, 5.14e-05, 0.000349, 0.0112, 6, 99.6, 99.96, 125.4, 999.6, 1234.5,
                                     float("nan"))] == \
        ["0", "<0.01", "<0.01", "0.0112", "6", "99.6", "100", "125", "1,000", "1,234", ""]


def test_a_log_axis_of_less_than_two_decades_has_ticks_at_1_2_and_5():
    """Issue 26: the CPU-only study's non-square panel (values from 5 to 60) had one tick, 10."""
    import matplotlib.pyplot as plt
    from matmulstudy.report.plots.style import plain_log_ticks
    ticks = {}
    for name, (lo, hi) in {"narrow": (5, 60), "wide": (3, 400_000)}.items():
        fig, ax = plt.subplots()
        ax.plot([lo, hi], [1, 2])
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        plain_log_ticks(ax.xaxis)
        fig.canvas.draw()
        ticks[name] = [t.get_text() for t in ax.get_xticklabels() if lo <= t.get_position()[0] <= hi]
        plt.close(fig)
    assert ticks["narrow"] == ["5", "10", "20", "50"]
    assert ticks["wide"] == ["10", "100", "1,000", "10,000", "100,000"]


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: f.name)
def test_the_committed_rooflines_number_each_steps_point(folder):
    """Issue 26: the TF32 panel's steps 25 to 33 lay on top of each other, told apart by colours that repeat;
    each point now carries its step's number (placed clear of the others where it can be)."""
    from matmulstudy.study import snapshot
    registry = snapshot.read_registry(folder)
    words = set()   # each label's numbers, a run of them written as a range ('38, 40-47')
    for chapter in registry.chapters:
        for label in re.findall(r"<text[^>]*>([^<]*)</text>", (folder / "figures" / f"roofline_{chapter}.svg")
                                .read_text()):
            for part in label.split(", "):
                first, _, last = part.partition("-")
                words |= {str(n) for n in range(int(first), int(last) + 1)} if last.isdigit() and first.isdigit() \
                    else {part}
    summary = pd.read_csv(folder / "summary.csv")
    drawn = set(summary[(summary.M == 4096) & (summary.N == 4096) & (summary.K == 4096) & summary.verified]["variant"])
    numbers = [v.title.split()[0] for v in registry.steps() if v.id in drawn]
    assert len(numbers) > 20 and all(n in words for n in numbers), [n for n in numbers if n not in words]


def test_a_guides_label_lies_on_its_line_away_from_the_points_or_is_not_drawn():
    """The power figure's lines of equal GFLOP per joule crossed the tensor-core steps' cluster, and their labels,
    at the line's end, lay on the points' labels: a guide's label goes where its line passes farthest from them."""
    import matplotlib.pyplot as plt
    from matmulstudy.report.plots.style import guide_label
    fig, ax = plt.subplots(figsize=(6, 4))
    points = [(x, 1.0, "") for x in (1.0, 1.5, 2.0, 2.5)]   # a cluster on the left half of the line y = 1
    ax.scatter(*zip(*[(x, y) for x, y, _ in points]))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 2)
    fig.canvas.draw()
    label = guide_label(ax, "guide", (0, 1), (10, 1), points)
    assert label.get_text() == "guide" and label.xy[1] == pytest.approx(1) and label.xy[0] > 8
    assert guide_label(ax, "outside", (0, 5), (10, 5), points) is None   # above the axes: nowhere to write it
    plt.close(fig)


def test_a_points_label_keeps_clear_of_every_marker_where_there_is_room():
    """The H100 power figure of 4f994d6 had step 43's label on the diamonds of step 47 and cuBLAS BF16: a label
    only kept 4 points from other points' centres, where a diamond of area 60 reaches 5.5. A label pushed past
    the corners of its own marker is led to it by a line."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text
    from matmulstudy.report.plots.style import LABEL_OFFSETS, place_labels
    fig, ax = plt.subplots(figsize=(6, 4))
    points = [(1.0, 1.0, "38"), (1.08, 1.02, "44"), (1.16, 1.0, "cuBLAS BF16"), (1.04, 0.97, "43"), (3.0, 1.5, "1")]
    ax.scatter(*zip(*[(x, y) for x, y, _ in points]), s=60, marker="D")
    ax.set_xlim(0, 4)
    ax.set_ylim(0, 2)
    fig.canvas.draw()
    place_labels(ax, points)
    fig.canvas.draw()
    to_pt = 72 / fig.dpi
    centres = ax.transData.transform([(x, y) for x, y, _ in points]) * to_pt
    assert sorted(t.get_text() for t in ax.texts) == sorted(text for _, _, text in points)
    for t in ax.texts:
        x0, y0, x1, y1 = (v * to_pt for v in Text.get_window_extent(t).extents)   # the words, not a leader line
        for (_, _, text), (cx, cy) in zip(points, centres):
            m = 0 if text == t.get_text() else 5.5   # a diamond of area 60 reaches 5.5 points from its centre
            assert not (x0 - m < cx < x1 + m and y0 - m < cy < y1 + m), (t.get_text(), text)
        own = centres[[text for _, _, text in points].index(t.get_text())]
        assert max(abs(x0 - own[0]), abs(x1 - own[0])) < 60, t.get_text()   # still beside its own point
        assert (t.arrow_patch is not None) == (tuple(t.xyann) not in LABEL_OFFSETS[:4]), t.get_text()   # led to it
    plt.close(fig)


def test_two_points_labels_never_run_together():
    """The H200 power figure of f4dcfec wrote '3643' over steps 41, 46 and 47, 10 points apart on one row: a
    label's width was reckoned at 0.6 of the font size a character, narrower than its digits, so boxes that only
    met held words that touched. Each label's words now keep LABEL_GAP from every other label's."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text
    from matmulstudy.report.plots.style import LABEL_GAP, place_labels
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_xlim(0, 4)
    ax.set_ylim(0, 2)
    fig.canvas.draw()
    to_pt = 72 / fig.dpi
    step = ax.transData.inverted().transform((10 / to_pt, 0))[0] - ax.transData.inverted().transform((0, 0))[0]
    points = [(1.0 + i * step, 1.0 + 0.002 * i, text) for i, text in enumerate(("38", "36", "43", "44", "cuBLAS"))]
    ax.scatter(*zip(*[(x, y) for x, y, _ in points]), s=60, marker="D")
    place_labels(ax, points)
    fig.canvas.draw()
    boxes = {t.get_text(): [v * to_pt for v in Text.get_window_extent(t).extents] for t in ax.texts}
    for a, (ax0, ay0, ax1, ay1) in boxes.items():
        for b, (bx0, by0, bx1, by1) in boxes.items():
            if a < b:
                apart = max(bx0 - ax1, ax0 - bx1, by0 - ay1, ay0 - by1)   # > 0: a gap on some side
                assert apart >= LABEL_GAP - 0.5, (a, b, apart)   # glyph boxes, not the reckoned ones: half a point
    plt.close(fig)


def test_a_study_with_energy_only_at_other_sizes_gets_a_power_figure_saying_so(tmp_path):
    """Energy is measured at the progression's size and 8192 (the config's energy sizes may differ): with none
    there, the figure says so instead of drawing no panel."""
    import dataclasses
    import importlib
    power = importlib.import_module("matmulstudy.report.plots.power")
    from matmulstudy.report.committed import Study
    study = Study.load(COMMITTED[0])
    summary = study.summary.copy()
    summary.loc[summary.M != 2048, "mean_power_w"] = float("nan")
    summary.loc[summary.M == 2048, "mean_power_w"] = 500.0
    chapter = study.registry.steps()[0].chapter
    paths = power.power(dataclasses.replace(study, summary=summary), tmp_path / "power", chapter)
    assert "no energy of this chapter at 4096³ or 8192³" in svg_words(paths[0])


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: f.name)
def test_the_committed_power_figures_number_each_point_and_name_the_limit(folder):
    """A figure per chapter: each of its steps with its energy at 4096 or 8192 is numbered in its panel (steps
    that share a point share a label, '38, 40-47'), and the power limit and at least one line of equal GFLOP per
    joule a panel are named."""
    from matmulstudy.study import snapshot
    registry = snapshot.read_registry(folder)
    summary = pd.read_csv(folder / "summary.csv")
    square = summary[(summary.M == summary.N) & (summary.N == summary.K) & summary.M.isin([4096, 8192])
                     & (summary.dtype == "float32")]   # the figure draws the float32 inputs
    measured = square[square.verified & square.mean_power_w.notna()]
    for chapter in registry.chapters:
        words = re.findall(r"<text[^>]*>([^<]*)</text>", (folder / "figures" / f"power_{chapter}.svg").read_text())
        numbers_drawn = {n for w in words for n in _numbers(w)}
        mine = measured[measured.variant.isin([v.id for v in registry.steps(chapter)])]
        panels = mine.M.nunique()
        numbers = {registry[v].number for v in mine.variant}
        assert numbers <= numbers_drawn, (chapter, sorted(numbers - numbers_drawn))
        assert sum(w.startswith("power limit") for w in words) == panels, chapter
        assert sum(w.endswith("GFLOP/J") for w in words) >= panels, chapter


def _numbers(label: str) -> set[str]:
    """The step numbers a point's label names: '38, 40-42' -> {'38', '40', '41', '42'}; any other label itself."""
    out = set()
    for part in label.split(", "):
        first, _, last = part.partition("-")
        out |= {str(n) for n in range(int(first), int(last) + 1)} if first.isdigit() and last.isdigit() else {part}
    return out


@pytest.mark.parametrize("folder", COMMITTED, ids=lambda f: f.name)
def test_the_committed_hardware_figures_write_no_power_of_ten_and_no_percentage_past_100(folder, monkeypatch):
    """The bar labels and the ticks of every chapter's figure: no '4.63e-05', and a percentage's axis ends at
    100 (its labels may run past it)."""
    import importlib
    import matplotlib.pyplot as plt
    counters = importlib.import_module("matmulstudy.report.plots.counters")
    study, percent_ticks, words = Study.load(folder), [], []

    def keep(fig, stem):
        fig.canvas.draw()
        for ax in fig.axes:
            shown = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
            if "%" in ax.get_title():
                percent_ticks.append(max(shown))
            words.extend(t.get_text() for t in ax.texts + ax.get_xticklabels())
        plt.close(fig)
        return []
    monkeypatch.setattr(counters, "save", keep)
    for chapter in study.registry.chapters:
        counters.hardware(study, folder, chapter)
    assert words and not [w for w in words if re.fullmatch(r"-?[\d.]+e[-+]\d+", w)]
    assert percent_ticks and max(percent_ticks) == 100


def test_a_step_page_shows_where_a_header_two_includes_down_reads_its_define():
    """Steps 43 and 44 (46 and 47 now) change a define that a header of a header reads (wgmma_bf16.cuh through
    persistent_bf16.cuh; tiles.cuh): their pages showed only the .cu files' diff, which is the kernel's name.
    Rendered from the committed H100 study, each page now quotes the lines that read the define."""
    from matmulstudy.report.committed import Study
    from matmulstudy.report.steps import step_pages
    pages = step_pages(Study.load(ROOT / "reports" / "h100"))
    p44, p43 = pages["44_gpu_wgmma_bf16_drawn_late.md"], pages["43_gpu_wgmma_bf16_stepped_descriptors.md"]
    assert "Where [`common/tiles.cuh`](../kernels.tar.gz) switches on `DRAW_LATE`:" in p44
    assert "publish(s, use, tile_of(DRAW_LATE ? atomicAdd(&tile_ticket, 1u) : ticket));" in p44
    assert "Where [`common/wgmma_bf16.cuh`](../kernels.tar.gz) switches on `STEPPED_DESCRIPTORS`:" in p43
    assert "wgmma_m64n256k16_bf16(d, base[0] + stage + 2 * kk, base[1] + stage + 128 * kk);" in p43
    assert (ROOT / "reports/h100/steps/44_gpu_wgmma_bf16_drawn_late.md").read_text() == p44   # and committed so


def test_a_step_that_switches_a_roles_technique_on_shows_where_the_shared_code_reads_it():
    """Issue 77: step 46's code that changed was one token (`Bf16Mainloop<false, ...>` to `<true, ...>`), and the
    change itself, in a shared header, was neither shown nor linked. The argument's parameter is found by its
    position, through the alias template to the role it names, and the places that read it are quoted."""
    from matmulstudy.report.steps import step_pages, template_switches
    headers = ["template <class Ops, bool Stepped, bool Own, int B = 1, class S = Sums>\nstruct Loop { };\n",
               "template <bool SteppedDescriptors, bool OwnLoads, int BBlocks = 1>\n"
               "using Bf16Loop = Loop<Bf16Ops, SteppedDescriptors, OwnLoads, BBlocks>;\n"]
    diff = ["-using Mainloop = Bf16Loop<false, false, B_BLOCKS>;", "+using Mainloop = Bf16Loop<true, false, B_BLOCKS>;",
            " using Scheduler = Queued<GROUP, true>;"]
    assert template_switches(diff, headers) == {"SteppedDescriptors", "Stepped"}
    assert template_switches(diff[:1] + ["+using Mainloop = Other<true, false, B_BLOCKS>;"], headers) == set()
    page = step_pages(Study.load(ROOT / "reports" / "h200"))["46_gpu_wgmma_bf16_stepped_descriptors.md"]
    code = page[page.index("## The code that changed"):]
    assert "Where [`sm90/mainloop_smem.cuh`](../kernels.tar.gz) switches on `SteppedDescriptors`:" in code
    assert "return SteppedDescriptors ? int(unsigned(count) % STAGES) : count % STAGES;" in code
    assert (ROOT / "reports/h200/steps/46_gpu_wgmma_bf16_stepped_descriptors.md").read_text() == page


@pytest.mark.parametrize("was, said", [(28, "Step 28 before"), ([18, 22], "Step 18, then 22, before")])
def test_a_step_page_gives_the_number_the_step_had_before_the_course_was_renumbered(was, said):
    """A registry entry's `was` (issues 58 and 60: one number, or the numbers before each renumbering): said on its
    page, so that old notes and links still resolve; a study measured before it has none, and its pages say
    nothing of it."""
    import dataclasses
    from matmulstudy.report.committed import Study
    from matmulstudy.report.steps import page_name, step_pages
    study = Study.load(ROOT / "reports" / "h100")
    raw = study.registry.raw
    renumbered = Registry.from_entries({**raw, "variants": [
        dict(e, was=was) if e["id"] == "gpu_async_tile" else e for e in raw["variants"]]})
    name = page_name(study.registry["gpu_async_tile"])
    page = step_pages(dataclasses.replace(study, registry=renumbered))[name]
    assert f"{said} the course was renumbered." in page
    assert "before the course was renumbered" not in (ROOT / "reports/h100/steps" / name).read_text()


@pytest.mark.parametrize("label", [f.name for f in COMMITTED])
def test_every_step_of_a_committed_study_has_its_page_linked_in_order(label):
    """Issue 26: a page per step the study timed (steps/), listed in the progression's order, each linked to
    the pages before and after it and to the study, which links the list; its header's words; the code that
    changed from the step before (a diff), or, for a precision's first step, its whole file; every link to a
    kernel file lands in the study's own copy (kernels/)."""
    from matmulstudy.report import steps
    from matmulstudy.report.committed import Study
    study = Study.load(ROOT / "reports" / label)
    if study.cpu_only:
        pytest.skip("a study without a GPU has no steps")
    folder = study.folder / steps.FOLDER
    order = steps.timed_in_order(study)
    assert "[a page per step](steps/README.md)" in (study.folder / "README.md").read_text()
    index = (folder / "README.md").read_text()
    assert [m for m in re.findall(r"\]\(([^)]+\.md)\)", index) if m != "../README.md"] == [
        steps.page_name(v) for v in order]
    for i, v in enumerate(order):
        page = (folder / steps.page_name(v)).read_text()
        assert page.startswith(f"# {v.title}\n")
        if i > 0:
            assert f"previous: [{order[i - 1].title}]({steps.page_name(order[i - 1])})" in page
        if i + 1 < len(order):
            assert f"next: [{order[i + 1].title}]({steps.page_name(order[i + 1])})" in page
        source = snapshot.read_kernel(study.folder, study.registry.raw_entry(v.id)["file"])
        first_words = " ".join(source.splitlines()[0][3:].split()[:4])
        assert first_words in page, (v.id, first_words)
        before = steps.step_before(study, v)
        assert ("```diff" in page or "The same code." in page) == (before is not None), v.id   # 8a and 8b share one
        for path in re.findall(r"\[`([^`]+)`\]\(\.\./kernels\.tar\.gz\)", page):   # each file it names, kept
            assert snapshot.read_kernel(study.folder, path) is not None, (v.id, path)
    # a step that switches on a shared header shows the part it selects: step 14's serpentine order
    page = (folder / "14_gpu_operand_reuse.md").read_text()
    assert "Where [`common/pipeline.cuh`](../kernels.tar.gz) switches on `serpentine`" in page
    assert "order == FmaOrder::serpentine" in page
    # a step whose change is how the host launches it says so (rows copied onto 16 bytes; B's box), and only that:
    # the number it had before the renumbering and the technique's name are not how it is launched
    launched = {"gpu_wgmma_aligned": "`align_rows` (none) -> pad_copy",
                "gpu_wgmma_one_copy": "B: [BK, 32], C: [64, 32]} -> {A: [BM//CLUSTER, BK], B: [BK, 32, B_BLOCKS]"}
    for vid, change in launched.items():
        page = (folder / steps.page_name(study.registry[vid])).read_text()
        assert "How the host launches it (the registry)" in page and change in page, vid
    for v in order:
        page = (folder / steps.page_name(v)).read_text()
        assert not re.search(r"How the host launches it.*`(was|technique)`", page), v.id


def test_a_header_comment_reads_as_markdown():
    from matmulstudy.report.steps import excerpt, header_comment
    source = ("// Step 9: a title\n//\n// What changes: one\n// two.\n// - an item\n//   continued\n"
              "// After the list.\n//     kept as is\n#include \"x.cuh\"\n// not the header\n")
    assert header_comment(source) == ["Step 9: a title", "", "What changes: one two.", "- an item continued", "",
                                      "After the list.", "```text", "    kept as is", "```"]
    header = "a\n#if LEAN\nx\n#if B\ny\n#endif\n#else\nz\n#endif\n#if OTHER\nq\n#endif\n"
    assert excerpt(header, {"LEAN"}) == [["#if LEAN", "x", "#if B", "y", "#endif", "#else", "z", "#endif"]]


def test_a_study_keeps_its_kernels_with_what_they_include(tmp_path):
    """snapshot.write keeps every built variant's file and, recursively, what it includes: the kernel by shape
    brings the Stream-K step's file and, through it, the headers of both."""
    registry = load_registry().subset(["gpu_async_by_shape", "numpy"])
    sources = snapshot.kernel_sources(registry, lambda path: (ROOT / "kernels" / path).read_text())
    assert set(sources) == {"beyond/20_gpu_async_by_shape.cu", "beyond/19_gpu_async_stream_k.cu",
                            "common/async_slices.cuh", "common/stream_k.cuh", "common/pipeline.cuh",
                            "common/slice.cuh", "common/load_quad.cuh"}
    snapshot.write_kernels(tmp_path, sources)
    assert snapshot.kept_kernels(tmp_path) == sources
    first = (tmp_path / snapshot.KERNELS).read_bytes()
    snapshot.write_kernels(tmp_path, dict(reversed(sources.items())))   # the same files: the same bytes
    assert (tmp_path / snapshot.KERNELS).read_bytes() == first
    snapshot.write_kernels(tmp_path, {"x/only.cu": "//\n"})   # a second copy replaces the first
    assert snapshot.kept_kernels(tmp_path) == {"x/only.cu": "//\n"}
    assert snapshot.read_kernel(tmp_path, "x/only.cu") == "//\n" and snapshot.read_kernel(tmp_path, "y.cu") is None


def test_where_public_kernels_go_wrong_gets_a_section_of_its_own():
    """Step 12's header names the double-buffering bug of a public kernel (an odd number of slices) and its
    source; the step page lifts that paragraph out of the header into a section of its own."""
    from matmulstudy.report.steps import header_comment, split_pitfalls
    header, pitfalls = split_pitfalls(header_comment((ROOT / "kernels/beyond/12_gpu_double_buffer.cu").read_text()))
    assert len(pitfalls) == 1 and "LeetCUDA/pull/514" in pitfalls[0] and "(K = 1, 65, 129)" in pitfalls[0]
    assert not any(line.startswith("Where public kernels") for line in header)
    assert "" in header and all(a or b for a, b in zip(header, header[1:]))   # no two blank lines in a row


def test_every_link_of_the_readme_and_the_docs_lands_on_a_file():
    """The README and the course's pages (docs/) link the kernels, the step pages of the course's study and the
    reports: each relative link names a file or folder of the repository (a step page renamed, or a study re-run
    without one, shows), and together they link every step's page."""
    step_links, broken = [], []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for link in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if link.startswith(("http://", "https://", "#", "mailto:")):
                continue
            target = (page.parent / link.split("#")[0]).resolve()
            (step_links if "/steps/" in link else []).append(target.name)
            if not target.exists():
                broken.append(f"{page.name}: {link}")
    assert broken == []
    pages = {p.name for p in (ROOT / "reports" / COURSE / "steps").glob("*.md")} - {"README.md"}
    assert pages - set(step_links) == set()


def readme_snakemake_lines() -> list[str]:
    """Every `snakemake ...` line of the README's fenced blocks (after a `&&`, the snakemake part)."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    lines = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    return [line[line.index("snakemake "):] for line in lines if "snakemake " in line]


@pytest.mark.slow
@pytest.mark.parametrize("line", readme_snakemake_lines())
def test_every_snakemake_command_of_the_readme_plans_as_written(line):
    """Each command the README shows, as a dry run with a fixed arch (no GPU here to ask), plans without an
    error (issue 57: its first example stopped on reference_size)."""
    import shlex
    args = [a for a in shlex.split(line)[1:] if a not in ("--report-after-run",)]
    if "--report" in args:   # the report is written after a run; its plan is the run's
        i = args.index("--report")
        del args[i:i + 2]
    if "--profile" in args and "profiles/slurm" in args:
        pytest.skip("tests/test_slurm.py runs the cluster's command on a Slurm of its own")
    study = "-s" not in args and "--directory" not in args
    if study:   # a study of this repository's config: the GPU's facts given, as on a login node
        config = ["label=readme", "arch=sm_90"]
        if "--config" in args:
            i = args.index("--config") + 1
            while i < len(args) and not args[i].startswith("-"):
                i += 1
            args[i:i] = [c for c in config if c.split("=")[0] + "=" not in " ".join(args)]
        else:
            args += ["--config", *config]
    snakefile = ROOT / "Snakefile"
    if "-s" in args:
        i = args.index("-s")
        snakefile = ROOT / args[i + 1]
        del args[i:i + 2]
    proc = snakemake("-n", *args, snakefile=snakefile)
    assert proc.returncode == 0, (line, proc.stderr[-2000:])


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--virtual-time-budget=15000"]


@pytest.mark.slow
@pytest.mark.skipif(chromium() is None, reason="no Chromium here (Debian's chromium package; .ci/run installs it)")
def test_the_html_report_opens_in_a_browser_with_every_figure_and_no_console_error(rendered, tmp_path):
    """Snakemake's HTML report of the committed studies, opened in headless Chromium as a reviewer opens it: the
    page runs without a console error, its app draws the menu of every category of figures, every figure of
    every study is in it with its caption, and a screenshot of it is not blank."""
    from PIL import Image
    html = rendered / "report.html"
    url = html.resolve().as_uri()
    proc = subprocess.run([chromium(), *HEADLESS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
                           "--v=0", "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert not [line for line in console if "ERROR:CONSOLE" in line or "Uncaught" in line], console
    dom, raw = proc.stdout, html.read_text()
    for category in {f.category for f in FIGURES} | {"6. Tables", "7. Across GPUs"}:
        assert dom.count(category) > raw.count(category), category   # drawn by the report's app, not only data
    for folder in COMMITTED:
        for f in FIGURES:
            assert f"{f.name}.svg" in dom, (folder.name, f.name)
            caption = (ROOT / "workflow" / "report" / f.caption).read_text().split()[:4]
            assert " ".join(caption) in " ".join(dom.split()), (f.name, caption)
    shot = tmp_path / "report.png"
    subprocess.run([chromium(), *HEADLESS, f"--user-data-dir={tmp_path / 'shot'}", "--window-size=1400,1000",
                    f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True)
    with Image.open(shot) as image:
        assert len(image.convert("L").getcolors(1 << 16) or []) > 50   # text and menus, not an empty page


@pytest.mark.parametrize("workers", ["1", "4"])
def test_render_of_a_folder_that_holds_no_study_says_so_in_one_line(workers):
    """A mistyped study (reports/h300) is named with what it lacks and the studies there are, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "matmulstudy.report.render", str(ROOT / "reports" / "h300"),
                           "--workers", workers], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    line, = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {ROOT / 'reports' / 'h300'} is no study: it has no gpu.json, samples.csv.gz"), line
    assert all(st.name in line for st in COMMITTED), line


def test_the_html_reports_front_page_names_each_precisions_reference():
    """workflow/report/workflow.rst, the first page of `snakemake --report`: every precision's reference by the
    name the figures give it, and no word of cuBLAS FP32 being the reference of every fraction (it said so)."""
    from matmulstudy import precisions
    text = " ".join((ROOT / "workflow" / "report" / "workflow.rst").read_text().split())
    missing = [p.reference_name for p in precisions.TABLE if p.reference_name not in text]
    assert not missing, missing
    assert "of every fraction" not in text


def test_the_readmes_time_of_a_committed_study_is_the_span_its_samples_record():
    """The README's "timed launches span N min M s" of a committed study is read from that study's samples, so
    that the README states no time that no committed file holds (it gave one from a log that was not kept)."""
    import pandas as pd
    from matmulstudy.report.committed import Study
    said = re.findall(r"committed (\w+) study's timed launches span (\d+) min (\d+) s", (ROOT / "README.md").read_text())
    assert said, "the README gives no committed study's time"
    for gpu, minutes, seconds in said:
        first, last = (pd.Timestamp(t) for t in Study.load(ROOT / "reports" / gpu.lower()).measured)
        assert round((last - first).total_seconds()) == 60 * int(minutes) + int(seconds), (gpu, first, last)


def test_rendering_one_figure_rewrites_that_figure_alone(tmp_path):
    """`render --only size_sweep` on a committed study: its chapters' figures written, and no page, step page or
    other figure touched (the pages are made in full, and written where they changed only; it rewrote 60 files)."""
    fresh_copy(tmp_path / "repo")   # inside a repository, as its pages link into it
    study = tmp_path / "repo" / "reports" / COMMITTED[-1].name
    before = {p: p.stat().st_mtime_ns for p in study.rglob("*") if p.is_file()}
    proc = subprocess.run([sys.executable, "-m", "matmulstudy.report.render", str(study), "--only", "size_sweep"],
                          capture_output=True, text=True, cwd=tmp_path / "repo", timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    touched = sorted(str(p.relative_to(study)) for p in study.rglob("*") if p.is_file()
                     and before.get(p) != p.stat().st_mtime_ns)
    sweeps = [f"figures/{f.name}.svg" for f in FIGURES if family(f) == "size_sweep"]
    assert len(sweeps) > 1 and touched == sorted(sweeps), touched
    assert proc.stdout.split() == [str(study / path) for path in sweeps]


@pytest.mark.parametrize("study", COMMITTED, ids=[f.name for f in COMMITTED])
def test_every_step_page_has_a_counter_table_or_says_why_not(study):
    """A step's page sets its counters beside the step before's: those its registry entry names, or else the
    chapter table's, with the sentence that says why those (a seed's step, the first of a precision, an entry that
    names none). 16 of the H200's 54 pages had no counter at all."""
    pages = sorted((study / "steps").glob("[0-9]*.md"))
    assert pages
    bare = [p.name for p in pages if "| counter |" not in p.read_text()
            and "no counter of them was measured in this study" not in p.read_text()]
    assert not bare, bare


def test_a_step_built_on_another_precisions_step_is_set_against_it():
    """Issue 77: step 51 (FP8, sums promoted) is step 50's kernel (FP8 fast-accum) with its sums promoted, but its
    page said it had no step before it, and showed no counter beside another step's. With builds_on (today's
    registry), its page gives its speed over step 50 and the counters of both; tried on the H200 study, whose own
    registry predates the key."""
    import dataclasses
    from matmulstudy.report.steps import step_pages
    study = Study.load(ROOT / "reports" / "h200")
    registry = study.registry
    promoted = next(v for v in load_registry().steps() if v.builds_on)
    variants = {vid: dataclasses.replace(v, builds_on=promoted.builds_on) if vid == promoted.id else v
                for vid, v in registry.items()}
    page = step_pages(dataclasses.replace(study, registry=Registry(registry.chapters, variants, registry.raw)))[
        f"{promoted.file.stem}.md"]
    before = registry[promoted.builds_on]
    rows = study.summary.set_index(["variant", "M", "N", "K", "dtype"])["median_gflops"]
    ratio = rows[promoted.id, 4096, 4096, 4096, "float32"] / rows[before.id, 4096, 4096, 4096, "float32"]
    assert f"×{ratio:.2f} over step **{before.title}**" in page
    assert "| counter | step before | this step |" in page and "there is no step before it" not in page
    assert f"against step **{before.title}**'s" in page   # the code: its file against step 50's

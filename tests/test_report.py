"""The report, rendered without a GPU from the committed results, as CI does."""

import shutil

import pandas as pd
import pytest

from conftest import ROOT, snakemake
from matmulstudy import render
from matmulstudy.render import FIGURES

TABLES = ["results.csv", "summary.csv", "hardware.csv", "gpu.json", "failures.txt", "config.yaml",
          "crosscheck.csv", "repeat.csv"]
COMMITTED = render.studies_in(ROOT / "reports")
RENDER = "snakemake -s workflow/render.smk --cores 1 --forceall --report reports/report.html --report-after-run"


def copy_tables(dest):
    """Only the committed tables: every figure and page must come from them."""
    for folder in COMMITTED:
        (dest / "reports" / folder.name).mkdir(parents=True)
        for name in TABLES:
            if (folder / name).exists():
                shutil.copy(folder / name, dest / "reports" / folder.name / name)


def test_the_committed_studies_are_an_h100_and_an_h200():
    assert [f.name for f in COMMITTED] == ["h100", "h200"]


def test_readme_documents_the_render_command_and_shows_the_figure():
    readme = (ROOT / "README.md").read_text()
    assert RENDER in readme
    assert "](reports/h100/figures/progression.png)" in readme
    for folder in COMMITTED:
        assert f"](reports/{folder.name}/README.md)" in readme


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("render")
    copy_tables(out)
    args = RENDER.split()[1:]
    proc = snakemake(*[a for a in args if a != "-s" and a != "workflow/render.smk"], cwd=out,
                     snakefile=ROOT / "workflow" / "render.smk")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "reports"


@pytest.mark.slow
@pytest.mark.parametrize("label", [f.name for f in COMMITTED])
def test_every_figure_of_every_gpu_is_drawn_with_every_step(rendered, registry, label):
    figures = rendered / label / "figures"
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (figures / f"{name}.{ext}").stat().st_size > 10_000, (name, ext)
    steps = [v.title for v in registry.values() if v.backend == "cuda"]
    for name in ("progression", "roofline", "hardware"):
        svg = (figures / f"{name}.svg").read_text()
        positions = [svg.find(t) for t in steps]
        assert min(positions) >= 0, (name, [t for t, p in zip(steps, positions) if p < 0])
    for name in ("size_sweep", "efficiency"):
        svg = (figures / f"{name}.svg").read_text()
        assert all(v.title in svg for v in registry.values()), name   # baselines too
    timing = (figures / "timing.svg").read_text()
    assert all(v.title in timing for v in registry.values() if v.id != "cpu_naive")   # capped below 4096


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
    gpu = pd.read_json(rendered / label / "gpu.json", typ="series")
    assert gpu["gpu_name"] in page and f"UUID `{gpu['uuid']}`" in page
    provenance = (rendered / label / "provenance.rst").read_text()
    assert f"**Failed verifications**: {failed} of {len(summary)}" in provenance


@pytest.mark.slow
def test_cross_gpu_figure_and_the_html_report(rendered):
    svg = (rendered / "figures" / "progression_by_gpu.svg").read_text()
    index = (rendered / "README.md").read_text()
    for folder in COMMITTED:
        name = pd.read_json(folder / "gpu.json", typ="series")["gpu_name"]
        assert name in svg and f"[{folder.name}/]({folder.name}/README.md)" in index
    html = (rendered / "report.html").read_text()
    assert len(html) > 1_000_000
    for text in ("Measured on", "1. Progression", "3. Efficiency", "7. Across GPUs", "Throttled samples"):
        assert text in html, text


@pytest.mark.slow
def test_a_failed_measurement_is_marked_and_counted(tmp_path, registry):
    """One H100 measurement turned into a failure: the figures mark it, the page counts it."""
    copy_tables(tmp_path)
    folder = tmp_path / "reports" / "h100"
    df = pd.read_csv(folder / "results.csv")
    hit = (df.variant == "gpu_tiled") & (df.dtype == "float32") & (df.M == 4096) & (df.N == 4096)
    df = pd.concat([df[~hit], df[hit].head(1).assign(verified=False, time_ms=float("nan"),
                                                      gflops=float("nan"), bad_elements=7)])
    df.to_csv(folder / "results.csv", index=False)
    s = pd.read_csv(folder / "summary.csv")
    s.loc[(s.variant == "gpu_tiled") & (s.dtype == "float32") & (s.M == 4096) & (s.N == 4096),
          ["verified", "samples", "median_gflops", "frac_of_cublas", "frac_of_fp32_peak"]] = [False, 0] + [None] * 3
    s.to_csv(folder / "summary.csv", index=False)
    render.render(folder)
    assert "| failed verifications | 1 (see [failures.txt](failures.txt))" in (folder / "README.md").read_text()
    assert "verification" in (folder / "figures" / "progression.svg").read_text()
    assert "failed" in (folder / "figures" / "efficiency.svg").read_text()

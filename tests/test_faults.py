"""The planted-fault suite: every defect is caught wherever it changes the result (GPU), and
the suite's own definitions (CPU)."""

import io

import pytest

from matmulstudy.tools import faults
from matmulstudy.study.settings import default_settings
from matmulstudy.study.shapes import Shape


def test_the_suite_has_each_kind_of_defect():
    suite = faults.load_suite(tolerance=8)
    assert len(suite) >= 9
    assert {f.changes_result for f in suite} == set(faults.CHANGES)
    barrier = next(f for f in suite if f.changes_result == "race")
    assert barrier.racecheck and max(max(s) for s in barrier.shapes) <= 256   # racecheck is slow
    assert all(f.variant.defines["TAU"] == 8 for f in suite if "TAU" in f.variant.defines)
    rows = sum(len(f.shapes) for f in suite)
    assert rows >= 16


def test_where_a_defect_is_live():
    suite = {f.variant.id: f for f in faults.load_suite()}
    assert suite["fault_k_tail"].live(Shape(17, 33, 65)) and not suite["fault_k_tail"].live(Shape(256, 256, 256))
    assert suite["fault_large_only"].live(Shape(4096, 4096, 4096))
    assert not suite["fault_large_only"].live(Shape(4096, 1024, 8192))
    assert not suite["fault_missing_barrier"].live(Shape(1, 1, 1))


@pytest.mark.gpu
def test_every_live_defect_is_caught_and_no_harmless_one_flagged(gpu_builds):
    check = default_settings().checking
    table = faults.run_suite(gpu_builds["arch"], faults.load_suite(tolerance=check.tolerance), check,
                             log=io.StringIO(), max_size=4096)
    assert faults.misses(table).empty, faults.misses(table).to_string()
    assert table["expected"].any() and (~table["expected"].astype(bool)).any()
    barrier = table[table["fault"] == "fault_missing_barrier"]
    assert barrier.loc[barrier["expected"], "by"].str.contains("racecheck").all()

"""The stopping criterion of the timed launches (nvbench's), and the clock flags."""

import math

import numpy as np
import pytest

from matmulstudy.gpu import nvml
from matmulstudy.measure.criterion import BATCH, Criterion, relative_noise

CRIT = Criterion(min_samples=10, max_samples=200, max_noise=0.005, max_time_s=1.0)


def test_relative_noise_is_iqr_over_median():
    t = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert relative_noise(t) == pytest.approx((4.0 - 2.0) / 3.0)
    assert relative_noise([7.0]) == math.inf
    assert relative_noise([2.0] * 9 + [50.0]) == 0.0   # one late sample does not count as noise


def test_quiet_samples_stop_at_the_minimum_on_noise():
    quiet = list(1.0 + 1e-4 * np.random.default_rng(0).standard_normal(10))
    assert CRIT.stop(quiet[:9], 0.01) is None          # fewer than min_samples: go on
    assert CRIT.stop(quiet, 0.01) == "noise"


def test_quiet_samples_of_a_short_kernel_go_on_until_their_times_add_up_to_the_minimum():
    crit = Criterion(min_samples=10, max_samples=5000, max_noise=0.005, max_time_s=1.0, min_time_s=0.05)
    quiet = [0.02] * 10                                  # ten launches of 20 us: 0.2 ms of samples
    assert CRIT.stop(quiet, 0.01) == "noise"             # without a minimum time they would stop here
    assert crit.stop(quiet, 0.01) is None
    assert crit.stop([0.02] * 2499, 0.01) is None        # 49.98 ms
    assert crit.stop([0.02] * 2500, 0.01) == "noise"     # 50 ms
    assert crit.stop([5.0] * 10, 0.01) == "noise"        # a long kernel: the minimum count decides
    assert crit.stop([0.02] * 5000, 0.01) == "noise" and CRIT.stop(quiet * 20, 0.01) == "noise"
    assert Criterion(10, 200, 0.005, 1.0, 0.05).stop(quiet * 20, 0.01) == "samples"   # the cap still holds
    assert crit.stop(quiet * 2, 1.0) == "time"           # and so does the time budget


def test_noisy_samples_run_until_the_time_budget_or_the_cap():
    noisy = list(1.0 + 0.05 * np.random.default_rng(1).standard_normal(50))
    assert relative_noise(noisy) > CRIT.max_noise
    assert CRIT.stop(noisy, 0.5) is None
    assert CRIT.stop(noisy, 1.0) == "time"
    assert CRIT.stop(noisy * 4, 0.5) == "samples"      # 200 samples
    assert CRIT.stop(noisy[:5], 30.0) is None          # the minimum is always taken


def test_batches_grow_within_the_budget_and_the_cap():
    assert CRIT.next_batch(0, 0.0, 0.0) == 10                  # first the minimum
    assert CRIT.next_batch(10, 1e-4, 0.01) == 10               # then doubling
    assert CRIT.next_batch(40, 1e-4, 0.01) == 40
    assert CRIT.next_batch(100, 1e-5, 0.01) == min(BATCH, 100)
    assert CRIT.next_batch(190, 1e-5, 0.01) == 10              # never past max_samples
    assert CRIT.next_batch(10, 0.2, 0.5) == 2                  # only what the time left allows
    assert CRIT.next_batch(10, 0.2, 0.99) == 1                 # but always one


def test_a_measurement_in_three_contexts_takes_a_third_of_the_limits_in_each_and_the_whole_in_the_last():
    crit = Criterion(min_samples=10, max_samples=200, max_noise=0.005, max_time_s=1.0, min_time_s=0.05)
    shares = [crit.share(part, 3) for part in range(3)]
    assert [(c.min_samples, c.max_samples) for c in shares] == [(4, 67), (7, 134), (10, 200)]
    assert [c.max_time_s for c in shares] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert [c.min_time_s for c in shares] == pytest.approx([0.05 / 3, 0.1 / 3, 0.05])
    assert shares[2] == crit and all(c.max_noise == crit.max_noise for c in shares) and crit.share(0, 1) == crit
    # a 29 us kernel at 1024 stops on its samples: 67 in each context, judged on all of them so far
    short = [0.029] * 67
    assert shares[0].stop(short, 0.1) == "samples" and shares[1].stop(short, 0.2) is None
    assert shares[1].stop(short * 2, 0.2) == "samples" and shares[2].stop(short * 2, 0.3) is None
    assert shares[2].stop(short * 3, 0.3) == "samples"
    # a noisier pool than each context's: the last context goes on until the pool meets the noise target
    pooled = [1.0] * 20 + [1.01] * 20
    assert shares[0].stop(pooled[:20], 0.1) == "noise" and shares[2].stop(pooled, 0.3) is None
    for part, parts in [(3, 3), (-1, 3), (0, 0)]:
        with pytest.raises(ValueError):
            crit.share(part, parts)


def test_clock_readings_flag_throttled_samples():
    readings = [nvml.Reading(1980, 2619, 40, 300, 0x1), nvml.Reading(1755, 2619, 55, 690, 0x4 | 0x1)]
    worst = nvml.worst(readings)
    assert worst.sm_clock_mhz == 1755 and worst.temperature_c == 55 and worst.power_w == 690
    assert nvml.reason_names(worst.reasons) == "sw_power_cap"   # idle is not a slowdown
    assert nvml.throttled(worst.sm_clock_mhz, 1980, 0.9) is True      # 1755 < 1782
    assert nvml.throttled(1980, 1980, 0.9) is False
    assert nvml.throttled(math.nan, 1980, 0.9) is None               # no reading: unknown, not "fine"
    assert math.isnan(nvml.worst([]).sm_clock_mhz)


def test_without_nvml_the_readings_are_unknown_and_say_why():
    monitor = nvml.Monitor("0000:ff:1f.7")   # no such device, or no NVML at all
    try:
        assert monitor.unavailable.startswith("NVML unavailable:")
        assert math.isnan(monitor.read().sm_clock_mhz)
        assert "nvml" in monitor.facts()
    finally:
        monitor.close()


def test_each_placement_after_the_first_gets_a_module_copy_of_its_own(tmp_path):
    """Where a module lies is a placement (bench.ModuleCopies): copy c of a cubin is the same bytes under a
    name of its own, made once a session, made again for a binary built again, deleted with the session."""
    import os
    from matmulstudy.measure.bench import ModuleCopies
    binary = tmp_path / "step.cubin"
    binary.write_bytes(b"\x7fELF one")
    copies = ModuleCopies()
    first, second = copies.path(binary, 1), copies.path(binary, 2)
    assert first != second and first != binary and copies.path(binary, 1) == first
    assert first.read_bytes() == second.read_bytes() == binary.read_bytes()
    binary.write_bytes(b"\x7fELF two, longer")
    os.utime(binary, ns=(1, 1))   # a rebuilt binary: another size and time
    again = copies.path(binary, 1)
    assert again != first and again.read_bytes() == binary.read_bytes()
    copies.close()
    assert not first.parent.exists()

"""When to stop timing, and which batches count: nvbench's rules, in a form that is tested on the CPU.

Timed launches come in batches. A batch during which the GPU throttled is
not counted but taken again (Retake, below). After each counted batch the
relative noise of all samples so far is computed; timing stops as soon as

- there are at least `min_samples` samples, their times add up to at
  least `min_time_s`, and the noise is at most `max_noise` ("noise"), or
- the timed batches have taken `max_time_s` seconds of wall time ("time"), or
- there are `max_samples` samples ("samples"),

and the reason is recorded with the measurement. The noise is the
interquartile range over the median, the same robust statistics the summary
reports: one late sample does not keep the loop running, and a criterion met
means the reported IQR is within max_noise of the median.

The minimum time is nvbench's --min-time: without it, ten launches of a
20 us kernel (0.2 ms of samples) that happen to fall within 0.5% of each
other stop the timing, and the median of those ten is one of the modes of
a spread of launch times, not its middle. On the H100, the tensor-core
chapter's cuBLAS reference at 1024 takes 16.3-18.5 us a launch with a cold
L2; the medians of the first ten samples of 16 measurements ranged over
4.8%, those of all 200 over 1.2% (6fbf69a:notes/power_cap.md).

A measurement may be taken in several CUDA contexts, one after another
(the config's `contexts`): a context sets an offset that all its launches
share, so one context's samples are not the kernel's time. In each context
the timing goes on until `Criterion.share` says stop, judged on the
samples of every context so far; the last context's criterion is the
whole one, so a measurement that stopped on "noise" has its pooled noise
within max_noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BATCH = 64   # launches queued behind the blocker (gpu/timer.py), each with a flush and an event pair


def relative_noise(times) -> float:
    """(q3 - q1) / median of the samples; inf for fewer than 2."""
    t = np.asarray(times, dtype=float)
    if t.size < 2:
        return float("inf")
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return float((q3 - q1) / med) if med > 0 else float("inf")


@dataclass(frozen=True)
class Criterion:
    min_samples: int
    max_samples: int
    max_noise: float
    max_time_s: float
    min_time_s: float = 0.0   # the counted samples' times (ms) add up to this many seconds before "noise" stops

    @classmethod
    def from_timing(cls, timing) -> "Criterion":
        """From the study's Timing settings (study/settings.py)."""
        return cls(timing.min_samples, timing.max_samples, timing.max_noise, timing.max_time_s, timing.min_time_s)

    def share(self, part: int, parts: int) -> "Criterion":
        """The criterion for a measurement taken in `parts` CUDA contexts one after another, while it is in
        the context `part` (0, 1, ...), judged on the samples of all its contexts so far: the limits on
        samples and time are the first part+1 of `parts` shares of this one's, the noise limit the same. The
        last context's is this criterion: the measurement as a whole meets it."""
        if parts < 1 or not 0 <= part < parts:
            raise ValueError(f"context {part} of {parts}")
        f = (part + 1) / parts
        return Criterion(math.ceil(self.min_samples * f), math.ceil(self.max_samples * f), self.max_noise,
                         self.max_time_s * f, self.min_time_s * f)

    def stop(self, times, elapsed_s: float) -> str | None:
        """Why to stop now ('noise', 'time', 'samples'), or None to go on."""
        n = len(times)
        if (n >= self.min_samples and sum(times) >= 1e3 * self.min_time_s
                and relative_noise(times) <= self.max_noise):
            return "noise"
        if n >= self.max_samples:
            return "samples"
        if n >= self.min_samples and elapsed_s >= self.max_time_s:
            return "time"
        return None

    def next_batch(self, done: int, estimate_s: float, elapsed_s: float) -> int:
        """How many launches to queue next.

        First the minimum; then as many again as there are (doubling), at
        most BATCH, never past max_samples, and no more than the time left
        allows at `estimate_s` per launch (but always one).
        """
        want = self.min_samples - done if done < self.min_samples else done
        want = min(want, BATCH, self.max_samples - done)
        if done >= self.min_samples and estimate_s > 0:
            want = min(want, int((self.max_time_s - elapsed_s) / estimate_s))
        return max(want, 1)


@dataclass(frozen=True)
class Retake:
    """nvbench's throttle handling (--throttle-threshold, --throttle-recovery-delay), per batch of launches.

    A batch is throttled when any NVML reading taken while it ran has the SM
    clock below `fraction` of the device's highest (`max_clock_mhz`). Such a
    batch does not count: its samples are kept, marked re-taken; the timer
    pauses `recovery_s` for the clock to come back and times the batch again,
    with half as many launches (a shorter batch draws less energy before the
    power cap reacts). At most `max_retakes` batches of a measurement are
    taken again; past that the GPU cannot hold its clock for even a short
    batch at this shape (the cap at 8192, say), and the samples count as they
    are, flagged throttled, so that the measurement says which regime it is in.
    A reading without a clock (no NVML) never throttles.
    """
    max_clock_mhz: float
    fraction: float
    recovery_s: float
    max_retakes: int

    def throttled(self, readings) -> bool:
        """Whether a batch's readings show the clock below the threshold."""
        floor = self.fraction * self.max_clock_mhz
        return any(r.sm_clock_mhz < floor for r in readings if not math.isnan(r.sm_clock_mhz))

    def again(self, readings, retakes: int) -> bool:
        """Whether to take this batch again, `retakes` batches of the measurement having been taken again."""
        return retakes < self.max_retakes and self.throttled(readings)

    @staticmethod
    def next_batch(count: int) -> int:
        """How many launches the batch taken again holds: half as many, at least one."""
        return max(1, count // 2)

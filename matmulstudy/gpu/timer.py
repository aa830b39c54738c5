"""Timing launches on the GPU: the study's protocol, in three pieces as nvbench keeps them.

- L2Flush: a read of twice the L2's size queued before a launch, so that it
  starts with a cold L2 (cold measurement, as Nsight Compute measures);
- Blocker: a kernel that holds the stream until the host releases it, so a
  batch of launches is queued first and runs back to back, free of
  Python's launch gaps;
- Timer: batches of launches behind the blocker, each launch between its
  own pair of CUDA events, for as long as the stopping criterion
  (measure/criterion.py) asks; while a batch runs, an observer (nvml.py's
  Monitor) is read.

The harness's kernels (harness.cu) do the flushing and the blocking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

BLOCK_TIMEOUT_NS = 5 * 10**9   # the blocker gives up after 5 s
POLL_S = 0.002                 # the observer is read every ~2 ms while a batch runs


class L2Flush:
    """flush_l2 (harness.cu) over a buffer of twice the L2's size."""

    def __init__(self, gpu, harness_cubin):
        self._kernel = gpu.load_function(harness_cubin, "flush_l2", "PQP")
        self.bytes = max(2 * gpu.attribute("L2_CACHE_SIZE"), 1 << 20) // 16 * 16
        self._buffer = gpu.empty(self.bytes)
        gpu.fill_u32(self._buffer, 0, self.bytes // 4)
        self._sink = gpu.empty(4)
        self._grid = (4 * gpu.sm_count, 1, 1)

    def queue(self) -> None:
        """Queue a read of twice L2's size: the next launch starts with a cold L2."""
        self._kernel.prepared_call(self._grid, (512, 1, 1), self._buffer, np.uint64(self.bytes // 16), self._sink)


class Blocker:
    """block_stream (harness.cu): holds the stream until released, or for BLOCK_TIMEOUT_NS at most."""

    def __init__(self, gpu, harness_cubin):
        cuda = gpu.cuda
        self._kernel = gpu.load_function(harness_cubin, "block_stream", "PPQ")
        self._flags = cuda.pagelocked_zeros((2,), np.int32, mem_flags=cuda.host_alloc_flags.DEVICEMAP)
        self._flags_dev = np.intp(self._flags.base.get_device_pointer())

    def hold(self) -> None:
        """Queue the blocking kernel: what is queued after it waits."""
        self._flags[:] = 0
        self._kernel.prepared_call((1, 1, 1), (1, 1, 1), self._flags_dev, self._flags_dev + 4, BLOCK_TIMEOUT_NS)

    def release(self) -> None:
        self._flags[0] = 1

    @property
    def held_throughout(self) -> bool:
        """Whether the last hold lasted until its release (it did not time out)."""
        return bool(self._flags[1] == 0)


@dataclass
class TimedSamples:
    """The samples of one measurement, and how it went."""
    times_ms: list = field(default_factory=list)
    batch_readings: list = field(default_factory=list)   # the observer's readings during each sample's batch
    blocked: bool = True          # every batch waited behind the blocker until released
    stop_reason: str = ""
    elapsed_s: float = 0.0


class Timer:
    """The study's timing protocol on one GPU session (one per session: `for_session`)."""

    def __init__(self, gpu, harness_cubin):
        self.gpu = gpu
        self.blocker = Blocker(gpu, harness_cubin)
        self.flush = L2Flush(gpu, harness_cubin)

    @classmethod
    def for_session(cls, gpu, harness_cubin) -> "Timer":
        """The session's timer: its harness loaded and its buffers allocated once."""
        return gpu.kept("timer", lambda: cls(gpu, harness_cubin))

    def time(self, launch, warmup: int, criterion, cold: bool = True, monitor=None) -> TimedSamples:
        """Time `launch` until `criterion` says stop.

        After `warmup` launches, timed launches are queued in batches behind
        the blocker, each launch between its own pair of events (with an L2
        flush before the start event when `cold`), released together and
        synchronised once per batch. While a batch runs, `monitor` is read;
        each sample keeps the readings of its batch.
        """
        cuda = self.gpu.cuda
        for _ in range(warmup):
            if cold:
                self.flush.queue()
            launch()
        self.gpu.synchronize()
        out = TimedSamples()
        t0 = time.perf_counter()
        estimate = 0.0
        while True:
            elapsed = time.perf_counter() - t0
            reason = criterion.stop(out.times_ms, elapsed)
            if reason:
                out.stop_reason, out.elapsed_s = reason, elapsed
                return out
            count = criterion.next_batch(len(out.times_ms), estimate, elapsed)
            starts = [cuda.Event() for _ in range(count)]
            ends = [cuda.Event() for _ in range(count)]
            self.blocker.hold()
            for start, end in zip(starts, ends):
                if cold:
                    self.flush.queue()
                start.record()
                launch()
                end.record()
            self.blocker.release()
            readings = []
            if monitor is not None:
                readings.append(monitor.read())
                while not ends[-1].query():
                    time.sleep(POLL_S)
                    readings.append(monitor.read())
            ends[-1].synchronize()
            out.blocked &= self.blocker.held_throughout
            out.times_ms += [start.time_till(end) for start, end in zip(starts, ends)]
            out.batch_readings += [readings] * count
            # wall time per launch, flushes included, for the next batch's size
            estimate = (time.perf_counter() - t0 - elapsed) / count

"""Timing launches on the GPU: the study's protocol, in three pieces as nvbench keeps them.

- L2Flush: a read of twice the L2's size queued before a launch, so that it
  starts with a cold L2 (cold measurement, as Nsight Compute measures);
- Blocker: a kernel that holds the stream until the host releases it, so a
  batch of launches is queued first and runs back to back, free of
  Python's launch gaps;
- Timer: batches of launches behind the blocker, each launch between its
  own pair of CUDA events, for as long as the stopping criterion
  (measure/criterion.py) asks; while a batch runs, an observer (nvml.py's
  Monitor) is read, and a batch during which the GPU throttled is taken
  again after a pause (the criterion's Retake). These are the burst
  samples: short batches, each launch with a cold L2, each batch followed
  by a rest as long as it ran (CUTLASS's guidelines ask for a cool-down
  between kernels): on the H100, 64 launches of a tensor-core step at 4096 back
  to back (27 ms) ran 6.6% slower in a study's second hundred samples than
  in its first, at an SM clock NVML still read as 1980 MHz.
- Timer.sustain: launches back to back, hot, for a while: what a long run
  gets at the power cap, and the energy it draws (NVML's energy counter,
  read from one of its ticks to another, so that no partial tick counts).

The harness's kernels (harness.cu) do the flushing and the blocking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

BLOCK_TIMEOUT_NS = 5 * 10**9   # the blocker gives up after 5 s
BURST_S = 0.01                 # a timed batch holds ~10 ms of launches at most (one launch at least),
REST_MAX_S = 0.05              # and the GPU then rests as long as the batch ran (50 ms at most): bursts from idle
WARMUP_MAX_S = 0.1             # warm-up launches stop once they have taken this long (one at least): 5 of a naive
                               # step's 0.36 s launches at 8192 were 1.8 s of idle heat before its timing
POLL_S = 0.002                 # the observer is read every ~2 ms while a batch runs
SUSTAIN_CHUNK_S = 0.01         # a sustained run queues ~10 ms of launches a chunk (at most SUSTAIN_CHUNK of them),
SUSTAIN_CHUNK = 256            # with ~50 ms queued ahead of the GPU: the host's polling never lets it go idle
SUSTAIN_AHEAD_S = 0.05
QUEUED = 512                   # launches queued ahead at most
SUSTAIN_TIMEOUT_S = 5.0        # a counter that does not tick in this long gives no energy
TICK_JITTER_S = 0.02           # the counter's ticks come a few ms early or late: one this early closes a window


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

    def close(self) -> None:
        """Free the flags' pinned memory while the context lives."""
        self._flags.base.free()

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
    retaken_ms: list = field(default_factory=list)        # samples of the batches taken again: kept, not counted
    retaken_readings: list = field(default_factory=list)
    retakes: int = 0              # batches taken again
    recovery_s: float = 0.0       # spent waiting for the clock to come back
    context: int = 0              # the CUDA context the next batches are taken in (a measurement may span several)
    contexts: list = field(default_factory=list)                # each counted sample's context
    retaken_contexts: list = field(default_factory=list)        # each sample taken again's

    def add(self, batch_ms: list, readings: list, retake=None) -> bool:
        """Keep a timed batch, with the observer's readings while it ran: counted, or, where `retake`
        (criterion.Retake) says the GPU throttled and it may be taken again, kept aside. True: take it again
        (after retake.recovery_s, which is counted here)."""
        if retake is not None and retake.again(readings, self.retakes):
            self.retaken_ms += batch_ms
            self.retaken_readings += [readings] * len(batch_ms)
            self.retaken_contexts += [self.context] * len(batch_ms)
            self.retakes += 1
            self.recovery_s += retake.recovery_s
            return True
        self.times_ms += batch_ms
        self.batch_readings += [readings] * len(batch_ms)
        self.contexts += [self.context] * len(batch_ms)
        return False


@dataclass
class Sustained:
    """Launches back to back for a while: the rate a long run gets, and the energy it draws."""
    launches: float               # completed within the window (interpolated between chunks)
    seconds: float                # the window: from one tick of the energy counter to another (or host time)
    joules: float | None          # drawn by the whole GPU in the window; None where there is no counter
    readings: list = field(default_factory=list)
    note: str = ""                # why there is no energy, where there is none
    timed_launches: int = 0       # the whole chunks between the first and the last chunk seen finished in the
    timed_s: float = 0.0          # window, and their time by the CUDA events that closed those two chunks

    @property
    def launch_ms(self) -> float:
        """Time per launch: by the CUDA events where the window saw two chunks finish, else the window's host
        time over its interpolated launches. The host sees a chunk finished only when it polls, between NVML
        reads: at 8192 on the H100 (cuBLAS FP32, one 21 ms launch a chunk, 0.5 s windows) the interpolated rate
        spread over 51.1-52.0 TFLOP/s in six windows, the events' over 51.63-52.00 (6fbf69a:notes/power_cap.md)."""
        if self.timed_launches:
            return self.timed_s * 1e3 / self.timed_launches
        return self.seconds * 1e3 / self.launches


class Timer:
    """The study's timing protocol on one GPU session (one per session: `for_session`)."""

    def __init__(self, gpu, harness_cubin):
        self.gpu = gpu
        self.blocker = Blocker(gpu, harness_cubin)
        self.flush = L2Flush(gpu, harness_cubin)

    def close(self) -> None:
        """Called when the session ends (GpuSession.kept), before its context goes."""
        self.blocker.close()

    @classmethod
    def for_session(cls, gpu, harness_cubin) -> "Timer":
        """The session's timer: its harness loaded and its buffers allocated once."""
        return gpu.kept("timer", lambda: cls(gpu, harness_cubin))

    def time(self, launch, warmup: int, criterion, cold: bool = True, monitor=None, retake=None,
             out: TimedSamples | None = None) -> TimedSamples:
        """Time `launch` until `criterion` says stop.

        After `warmup` launches (as many as fit in WARMUP_MAX_S after the
        first), timed launches are queued in batches behind the blocker,
        each launch between its own pair of events (with an L2
        flush before the start event when `cold`), released together and
        synchronised once per batch; a batch holds BURST_S of launches at
        most (sized by the warm-up's time per launch, then the last
        batch's), and the GPU rests as long as it ran (REST_MAX_S at most)
        before the next. While a batch runs, `monitor` is read;
        each sample keeps the readings of its batch. With `retake`
        (criterion.Retake) a batch the GPU throttled in is kept aside, and
        after a pause taken again, shorter. With `out`, the samples a measurement took in an earlier CUDA
        context: the timing goes on from them (its elapsed time and batches taken again included), and the
        criterion judges them all, once this context has a counted batch of its own.
        """
        cuda = self.gpu.cuda
        t0, warmed = time.perf_counter(), 0
        while warmed < warmup:   # `warmup` launches, or as many as fit in WARMUP_MAX_S after the first
            if cold:
                self.flush.queue()
            launch()
            warmed += 1
            if warmed == 1:
                self.gpu.synchronize()
                first = time.perf_counter() - t0
                warmup = min(warmup, max(1, int(WARMUP_MAX_S / first))) if first > 0 else warmup
        self.gpu.synchronize()
        out = out if out is not None else TimedSamples()
        before, earlier_s = len(out.times_ms), out.elapsed_s   # what earlier contexts took
        # wall time per launch, flushes included: sizes the batches (BURST_S) and their rests
        estimate = (time.perf_counter() - t0) / warmed if warmed else 0.0
        t0, rested, cap = time.perf_counter(), 0.0, None   # cap: the size of a batch taken again
        while True:
            # the rests after batches do not count against max_time_s
            own = time.perf_counter() - t0 - rested
            elapsed = earlier_s + own
            reason = criterion.stop(out.times_ms, elapsed) if len(out.times_ms) > before else None
            if reason:
                out.stop_reason, out.elapsed_s = reason, elapsed
                return out
            count = criterion.next_batch(len(out.times_ms), estimate, elapsed)
            count = min(count, cap) if cap else count
            if estimate > 0:
                count = max(1, min(count, int(BURST_S / estimate)))
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
            if monitor is not None:   # the clocks only: the energy counter would slow the polling
                readings.append(monitor.read(energy=False))
                while not ends[-1].query():
                    time.sleep(POLL_S)
                    readings.append(monitor.read(energy=False))
            ends[-1].synchronize()
            out.blocked &= self.blocker.held_throughout
            ran = time.perf_counter() - t0 - rested - own
            estimate = ran / count
            if out.add([start.time_till(end) for start, end in zip(starts, ends)], readings, retake):
                cap = retake.next_batch(count)
                time.sleep(retake.recovery_s)
            rest = min(ran, REST_MAX_S)
            time.sleep(rest)
            rested += rest

    def sustain(self, launch, launch_ms: float, window_s: float, monitor) -> Sustained:
        """Launch back to back (BackToBack) until the energy counter has ticked twice at least `window_s`
        apart, the GPU busy since before the first tick.

        The window runs from one tick to another: the counter moves in steps (every 100 ms on the H100,
        tools/powertrace.py measures it), so the energy between two ticks is whole. Without an energy counter,
        or one that does not move, the window is `window_s` of host time and joules is None.
        """
        run = BackToBack(self.gpu, launch, launch_ms)
        counter = monitor.unavailable is None and monitor.energy_unavailable is None
        readings, first, last = [], None, None
        start = time.perf_counter()
        while last is None:
            run.keep_full()
            time.sleep(POLL_S)
            r = monitor.read()
            readings.append(r)
            run.collect(r.time_s)
            busy = run.done > 0   # a chunk has finished: the GPU has been at it since
            if counter and r.time_s - start > SUSTAIN_TIMEOUT_S:
                counter, first = False, None   # the counter does not move: host time, no energy
            if counter:
                ticked = len(readings) > 1 and r.energy_mj != readings[-2].energy_mj
                if ticked and busy and first is None:
                    first = r
                elif ticked and first is not None and r.time_s - first.time_s >= window_s - TICK_JITTER_S:
                    last = r
            elif busy:
                first = first or r
                last = r if r.time_s - first.time_s >= window_s else None
        run.drain()
        joules = (last.energy_mj - first.energy_mj) / 1e3 if counter else None
        note = "" if counter else (monitor.unavailable or monitor.energy_unavailable
                                   or f"NVML's energy counter did not move in {SUSTAIN_TIMEOUT_S:g} s")
        timed_launches, timed_s = run.timed_between(first.time_s, last.time_s)
        return Sustained(launches=run.between(first.time_s, last.time_s), seconds=last.time_s - first.time_s,
                         joules=joules, readings=[x for x in readings if first.time_s <= x.time_s <= last.time_s],
                         note=note, timed_launches=timed_launches, timed_s=timed_s)


class BackToBack:
    """One launch after another, L2 warm: chunks of ~10 ms of launches (at most SUSTAIN_CHUNK), ~50 ms queued
    ahead of the GPU so that the host's polling never lets it go idle, within CUDA's queue of pending launches
    (QUEUED), or queueing would block. `launch_ms` sizes the chunks. Each chunk ends with a CUDA event: the host
    times at which chunks were seen finished say which ran between two times, their events how long they took."""

    def __init__(self, gpu, launch, launch_ms: float):
        self.gpu, self.launch = gpu, launch
        per_launch = max(launch_ms, 1e-4)
        self.per_chunk = min(SUSTAIN_CHUNK, max(1, int(SUSTAIN_CHUNK_S * 1e3 / per_launch)))
        self.ahead = max(2, min(int(SUSTAIN_AHEAD_S * 1e3 / (self.per_chunk * per_launch)), QUEUED // self.per_chunk))
        # (host time a chunk was seen finished, launches finished with it, the event that closed it); the start
        # first, with no event
        self.chunks, self.finished = [], [(time.perf_counter(), 0, None)]

    @property
    def done(self) -> int:
        return self.finished[-1][1]

    def keep_full(self) -> None:
        """Queue chunks until `ahead` are waiting."""
        while len(self.chunks) < self.ahead:
            for _ in range(self.per_chunk):
                self.launch()
            event = self.gpu.cuda.Event()
            event.record()
            self.chunks.append(event)

    def collect(self, now: float) -> None:
        """The chunks finished by host time `now`."""
        while self.chunks and self.chunks[0].query():
            self._finished(now, self.chunks.pop(0))

    def _finished(self, now: float, event) -> None:
        self.finished.append((now, self.done + self.per_chunk, event))

    def drain(self) -> None:
        """Wait for the chunks queued, each finish timed (the last ones come after any window's end)."""
        while self.chunks:
            self.chunks[0].synchronize()
            self._finished(time.perf_counter(), self.chunks.pop(0))

    def between(self, t0: float, t1: float) -> float:
        """Launches finished between host times t0 and t1, interpolated between the finishes seen."""
        times, done, _ = zip(*self.finished)
        return float(np.interp(t1, times, done) - np.interp(t0, times, done))

    def timed_between(self, t0: float, t1: float) -> tuple[int, float]:
        """(launches, seconds) from the first to the last chunk seen finished between host times t0 and t1, by
        the events that closed them: whole launches, GPU time; (0, 0.0) where fewer than two were seen."""
        inside = [(done, event) for seen, done, event in self.finished[1:] if t0 <= seen <= t1]
        if len(inside) < 2:
            return 0, 0.0
        (done0, event0), (done1, event1) = inside[0], inside[-1]
        return done1 - done0, event0.time_till(event1) / 1e3

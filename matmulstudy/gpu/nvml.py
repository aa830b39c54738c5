"""Clocks, temperature, power and throttle reasons of the GPU, from NVML.

A kernel timed while the GPU had lowered its SM clock (power cap, heat) is
slower for a reason that has nothing to do with the kernel. The harness
reads these while each batch of timed launches runs, keeps them with every
sample, and flags samples whose SM clock was below a fraction of the
device's highest clock (`throttle_fraction` in the config). The total-energy
counter (millijoules since the driver loaded; Volta and later) is read with
them: the energy between two readings is what the GPU drew in between.

The NVML device is found by the PCI bus id of the CUDA device, so both name
the same GPU whatever CUDA_VISIBLE_DEVICES says. Without NVML (no
nvidia-ml-py, or the library does not start) the readings are NaN and the
reason is recorded; the timings themselves do not depend on it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

# Bits of nvmlDeviceGetCurrentClocksEventReasons (nvml.h); idle and the
# applications-clocks setting are not slowdowns.
REASONS = {
    0x1: "idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks",
}
BENIGN = 0x1 | 0x2


def reason_names(mask: int) -> str:
    """'sw_power_cap+hw_thermal' for a bitmask ('' if none, benign bits left out)."""
    return "+".join(name for bit, name in REASONS.items() if mask & bit and not bit & BENIGN)


@dataclass(frozen=True)
class Reading:
    sm_clock_mhz: float = math.nan
    mem_clock_mhz: float = math.nan
    temperature_c: float = math.nan
    power_w: float = math.nan
    reasons: int = 0
    energy_mj: float = math.nan   # the total-energy counter (NaN where the GPU or NVML has none)
    time_s: float = math.nan      # time.perf_counter() when read


def worst(readings: list[Reading]) -> Reading:
    """The lowest clocks, highest temperature and power, and every reason seen."""
    if not readings:
        return Reading()
    mask = 0
    for r in readings:
        mask |= r.reasons
    return Reading(sm_clock_mhz=min(r.sm_clock_mhz for r in readings),
                   mem_clock_mhz=min(r.mem_clock_mhz for r in readings),
                   temperature_c=max(r.temperature_c for r in readings),
                   power_w=max(r.power_w for r in readings), reasons=mask)


def throttled(sm_clock_mhz: float, max_sm_clock_mhz: float, fraction: float) -> bool | None:
    """Whether a clock reading counts as throttled; None when there is none."""
    if math.isnan(sm_clock_mhz):
        return None
    return sm_clock_mhz < fraction * max_sm_clock_mhz


class Monitor:
    """NVML readings of the GPU at `pci_bus_id` (as CUDA names it)."""

    def __init__(self, pci_bus_id: str):
        self.unavailable = None
        self.energy_unavailable = None
        self._nvml = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
            self._nvml = pynvml
        except Exception as err:   # ImportError or any NVMLError: no readings, said why
            self.unavailable = f"NVML unavailable: {type(err).__name__}: {err}"
            return
        self._reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
        try:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except pynvml.NVMLError as err:   # older than Volta, or not exposed here
            self.energy_unavailable = f"NVML's total-energy counter: {err}"

    @classmethod
    def for_session(cls, gpu) -> "Monitor":
        """The session's monitor of its GPU: NVML started once (14 ms each time), shut down when the session
        ends (GpuSession.kept)."""
        return gpu.kept("nvml", lambda: cls(gpu.device.pci_bus_id()))

    def read(self, energy: bool = True) -> Reading:
        """The GPU's clocks, temperature, power and reasons now; and the energy counter, unless `energy` is
        False (it takes 4-5 ms to read on the H100, which a timed batch of 10 ms would wait for: timing needs
        the clock only)."""
        if self._nvml is None:
            return Reading(time_s=time.perf_counter())
        n, h = self._nvml, self._handle
        energy = (math.nan if self.energy_unavailable or not energy
                  else float(n.nvmlDeviceGetTotalEnergyConsumption(h)))
        return Reading(sm_clock_mhz=float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
                       mem_clock_mhz=float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
                       temperature_c=float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
                       power_w=n.nvmlDeviceGetPowerUsage(h) / 1000.0,
                       reasons=int(self._reasons(h)), energy_mj=energy, time_s=time.perf_counter())

    def facts(self) -> dict:
        """Driver version, power limit and the highest clocks NVML reports."""
        if self._nvml is None:
            return {"nvml": self.unavailable}
        n, h = self._nvml, self._handle
        version = n.nvmlSystemGetDriverVersion()
        return {"driver_version": version.decode() if isinstance(version, bytes) else version,
                "power_limit_w": n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                "nvml_max_sm_clock_mhz": n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM),
                "nvml_max_mem_clock_mhz": n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_MEM)}

    def close(self) -> None:
        if self._nvml is not None:
            self._nvml.nvmlShutdown()
            self._nvml = None

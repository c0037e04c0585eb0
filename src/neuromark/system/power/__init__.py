"""Power meters on the shared monotonic clock: RAPL, NVML, CSV traces, null."""

"""Time helpers, as cyclonedds.util has them: durations and timestamps are integers of
nanoseconds."""

import time as _time

#: An infinite duration (DDS_INFINITY).
dds_infinity = 0x7FFFFFFFFFFFFFFF


def duration(*, weeks: float = 0, days: float = 0, hours: float = 0, minutes: float = 0,
             seconds: float = 0, milliseconds: float = 0, microseconds: float = 0,
             nanoseconds: int = 0, infinite: bool = False) -> int:
    """A duration in nanoseconds, from human units (``duration(seconds=1)``)."""
    if infinite:
        return dds_infinity
    total = ((((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds)
    return int(((total * 1000 + milliseconds) * 1000 + microseconds) * 1000 + nanoseconds)


class timestamp:
    """Timestamps in nanoseconds since the epoch."""

    @staticmethod
    def now() -> int:
        """The current time."""
        return _time.time_ns()


def _seconds(ns) -> float:
    """A cyclonedds-python duration (nanoseconds, or None for infinite) in seconds."""
    if ns is None or ns >= dds_infinity:
        return float("inf")
    return max(ns, 0) / 1e9

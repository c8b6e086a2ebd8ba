"""What the driver prints while it runs: timestamped lines, and per point
the phase, point i of n, elapsed time and an estimate of the time left."""

import statistics
import time


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def fmt_s(s):
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Phase, point i of n, elapsed, estimate of the time left."""

    def __init__(self, left):
        self.left = dict(left)       # phase -> points still to measure
        self.total = sum(self.left.values())
        self.done = 0
        self.t0 = time.monotonic()
        self.spent = {}      # phase -> (points, seconds) measured in this run

    def step(self, phase, what, seconds):
        self.done += 1
        n, s = self.spent.get(phase, (0, 0.0))
        self.spent[phase] = (n + 1, s + seconds)
        elapsed = time.monotonic() - self.t0
        left = self.left.get(phase, 0) - 1
        self.left[phase] = left
        est = sum(self.per_point(p) * k for p, k in self.left.items())
        log(f"{phase}: point {self.done}/{self.total} {what}; "
            f"elapsed {fmt_s(elapsed)}, about {fmt_s(est)} left")

    def add(self, phase, n):
        """n more points to measure than planned (a row's extra repetition)."""
        self.left[phase] = self.left.get(phase, 0) + n
        self.total += n

    def per_point(self, phase):
        n, s = self.spent.get(phase, (0, 0.0))
        if n:
            return s / n
        allp = [s / n for n, s in self.spent.values() if n]
        return statistics.mean(allp) if allp else 2.0

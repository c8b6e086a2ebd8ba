"""runs.csv: every measurement of a result directory, one row each,
appended and flushed as it is taken; what a resumed run reads to skip what
is measured already."""

import csv

# reads ... probe_unsupported: bench/slowread.c's counters during the timed
# VACUUM (harness.COUNTERS); modified: pages the point left not all-visible;
# map: what VACUUM reads at each threshold on the visibility map the point
# left (workloads.kept_map(); runs from before 2026-12-07 lack it).
CSV_FIELDS = ("phase", "server", "major", "mode", "profile", "workload", "pages", "frac",
              "rep", "threshold", "ms", "scanned", "rel_pages", "modified", "reads",
              "penalised", "bytes", "uncached", "uncached_bytes", "delay_us",
              "probe_unsupported", "map", "note")

# The fields that name a point: a second row with the same key is never taken.
KEY_FIELDS = ("phase", "server", "mode", "profile", "workload", "pages", "frac", "rep",
              "threshold")


# A calibration's note holds each round's figures (density x threshold x
# round, four kinds): hundreds of kB after a long calibration on fast
# storage, past the csv module's default limit on a field (128 kB).
FIELD_LIMIT = 1 << 30


def dict_rows(path):
    """A csv file's field names and rows (dicts of strings), whatever its
    layout."""
    csv.field_size_limit(FIELD_LIMIT)
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def read_rows(path):
    """The rows of a runs.csv, as dicts of strings.  A runs.csv of another
    layout (an earlier benchmark's) is refused: its points are not this
    benchmark's."""
    fields, rows = dict_rows(path)
    if fields is not None and tuple(fields) != CSV_FIELDS:
        raise SystemExit(f"{path}: written by an earlier version of the benchmark (fields "
                         f"{', '.join(fields)}); use a new result directory")
    return rows


class Results:
    """runs.csv: one row per measurement, appended and flushed as taken."""

    def __init__(self, path):
        self.path = path
        self.rows = read_rows(path) if path.exists() else []
        self.keys = {self.key(r) for r in self.rows}
        new = not path.exists()
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=CSV_FIELDS)
        if new:
            self.w.writeheader()

    @staticmethod
    def key(r):
        return tuple(str(r.get(k, "")) for k in KEY_FIELDS)

    def have(self, **kw):
        return self.key(kw) in self.keys

    def get(self, **kw):
        k = self.key(kw)
        return next(r for r in self.rows if self.key(r) == k)

    def add(self, **kw):
        if self.have(**kw):
            raise ValueError(f"runs.csv has this point already: {self.key(kw)}")
        unknown = set(kw) - set(CSV_FIELDS)
        if unknown:
            raise ValueError(f"not runs.csv fields: {sorted(unknown)}")
        row = {k: kw.get(k, "") for k in CSV_FIELDS}
        row = {k: (f"{v:.3f}" if isinstance(v, float) and k == "ms" else v)
               for k, v in row.items()}
        row = {k: str(v) for k, v in row.items()}
        self.w.writerow(row)
        self.f.flush()
        self.rows.append(row)
        self.keys.add(self.key(row))

    def close(self):
        self.f.close()

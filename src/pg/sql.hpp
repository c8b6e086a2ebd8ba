// Helpers the SQL-callable functions share (functions.cpp, calibrate.cpp).
#pragma once

#include "../core/calibration.hpp"
#include "postgres.hpp"

namespace vacskip::pg {

// The blessed tuple descriptor of a function returning a record; with
// `columns`, an ERROR unless it has that many (the SQL declaration of
// vacskip.`function`() installed with another version of the module).
TupleDesc result_tupdesc(FunctionCallInfo fcinfo);
TupleDesc result_tupdesc(FunctionCallInfo fcinfo, int columns, const char *function);

// The columns of calibrate()'s result row, as vacskip--1.0.sql declares them.
constexpr int kCalibrateColumns = 18;

// What calibrate() keeps of each pattern's rounds: its timings, of the part
// after a file's first pages and of those pages, then the device's read
// requests of the two parts, then the share of its time on a CPU.
constexpr int kCalibrateSampleKinds = 5;

// calibrate()'s result row for a calibration of tablespace `spcoid`;
// samples[(kind * patterns + k) * stride + r] is pattern k's (k = density
// * thresholds + threshold) figure of kind `kind` (kCalibrateSampleKinds'
// order) in round r, for rec.rounds rounds; NaN where the device's
// requests were not counted.
Datum calibration_datum(TupleDesc tupdesc, Oid spcoid, const vacskip::CalibrationRecord &rec,
						const double *samples, int stride);

// "buffered reads, io_method worker with 3 workers, ...: 3 in flight": the
// I/O path of `in`, for people.
void describe_io_path(const vacskip::StorageInputs &in, char *out, size_t size);

}  // namespace vacskip::pg

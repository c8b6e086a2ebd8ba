// Where calibrations live: one file per tablespace under the data
// directory, vacskip/calibration.<tablespace OID>, written whole and
// renamed into place (durable_rename), so a crash leaves the previous file
// or the new one, never a part.  The hook reads it with no catalog access:
// one stat() per VACUUM, the file itself again only when it changed.
#pragma once

#include "../core/calibration.hpp"
#include "postgres.hpp"

namespace vacskip::pg {

// The calibration of tablespace `spcoid`; false if there is none (or it
// cannot be read or parsed: a damaged file is as good as none, and says so
// with a WARNING once per backend).
bool load_calibration(Oid spcoid, vacskip::CalibrationRecord *out);

// Replaces the calibration of `spcoid`.
void save_calibration(Oid spcoid, const vacskip::CalibrationRecord &rec);

// Removes it; false if there was none.
bool forget_calibration(Oid spcoid);

}  // namespace vacskip::pg

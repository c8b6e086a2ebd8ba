// The only way files under src/pg include PostgreSQL headers.  C++ standard
// headers must come before this (port.h redefines printf, snprintf, Min ...).
#pragma once

// PostgreSQL's headers are C and not -Wextra clean as C++ (unused parameters
// in inline functions): treat them as system headers so that vacskip's own
// code can build with -Wall -Wextra -Werror.
#pragma GCC system_header

extern "C" {
#include "postgres.h"

#include "fmgr.h"
#include "storage/block.h"
#include "utils/guc.h"
#include "utils/relcache.h"
}

// The only way files under src/pg include PostgreSQL headers.  C++ standard
// headers must come before this (port.h redefines printf, snprintf, Min
// ...): they are included only by headers that start with
// src/core/cpp_only.hpp, which refuses to follow postgres.h, and by the
// first lines of a .cpp file (t/test_unit.py checks that).
#pragma once

// PostgreSQL's headers are C and not -Wextra clean as C++ (unused parameters
// in inline functions): treat them as system headers so that vacskip's own
// code can build with -Wall -Wextra -Werror.
#pragma GCC system_header

extern "C" {
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/heapam_xlog.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/relation.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_tablespace.h"
#include "catalog/pg_type.h"
#include "commands/tablespace.h"
#include "commands/vacuum.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "postmaster/autovacuum.h"
#include "storage/block.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/checksum.h"
#include "storage/fd.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/smgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/spccache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"
#if PG_VERSION_NUM >= 180000
#include "storage/io_worker.h"
#include "storage/read_stream.h"
#endif
}

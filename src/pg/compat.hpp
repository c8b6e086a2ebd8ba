// Everything that differs between PostgreSQL versions, patched or not.
//
// The skip threshold hook exists only in servers built with patches/pg*/.
// vacskip does not link against it: it looks the hook variable up when it is
// loaded, so one vacskip.so serves patched and stock servers alike.  These
// declarations mirror the patched access/heapam.h (same layout in the 15 and
// 18 series) and are the module-facing ABI of the patches.
#pragma once

#include "postgres.hpp"

extern "C" {
struct VacuumParams;

typedef struct VacskipSkipThresholds
{
	BlockNumber all_frozen;
	BlockNumber all_visible;
} VacskipSkipThresholds;

typedef void (*VacskipSkipThresholdHook) (Relation rel,
										  const struct VacuumParams *params,
										  bool aggressive,
										  BlockNumber rel_pages,
										  VacskipSkipThresholds *thresholds);
}

// Name of the hook variable in patched servers.
constexpr const char kSkipThresholdHookSymbol[] = "vacuum_skip_threshold_hook";

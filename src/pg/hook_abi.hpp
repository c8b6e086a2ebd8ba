// The skip threshold hook as the patched servers declare it (patches/pg15
// and patches/pg18 give access/heapam.h the same declarations): the
// module-facing ABI of the patches, mirrored here because vacskip does not
// link against it.  hook.cpp looks the hook variable up by name when the
// module is loaded, so one vacskip.so serves patched and stock servers
// alike; docs/hook.md describes the hook's semantics.
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

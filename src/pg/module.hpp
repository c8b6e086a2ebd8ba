// Entry points of the PostgreSQL-facing modules, called from _PG_init.
#pragma once

#include "../core/model.hpp"
#include "postgres.hpp"

struct VacuumParams;

namespace vacskip::pg {

void hook_init();            // hook.cpp
bool hook_active();          // hook.cpp: installed in a patched server?
// hook.cpp: what vacskip chooses for a VACUUM of rel (params: nullptr for a
// manual VACUUM with this session's settings)
vacskip::Decision decide_for(Relation rel, const struct VacuumParams *params);
void guc_init();             // guc.cpp
int threshold_setting();     // guc.cpp: current vacskip.threshold

}  // namespace vacskip::pg

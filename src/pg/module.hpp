// Entry points of the PostgreSQL-facing modules, called from _PG_init, and
// the module state they share.  Plain C++ (no PostgreSQL types).
#pragma once
#include "../core/cpp_only.hpp"

namespace vacskip::pg {

void hook_init();            // hook.cpp
bool hook_active();          // hook.cpp: installed in a patched server?
void guc_init();             // guc.cpp
int threshold_setting();     // guc.cpp: current vacskip.threshold

}  // namespace vacskip::pg

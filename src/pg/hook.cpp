// The skip threshold hook: core VACUUM -> here -> model (src/core) -> core.
#include <dlfcn.h>

#include "../core/model.hpp"
#include "guard.hpp"
#include "module.hpp"
#include "hook_abi.hpp"
#include "inputs.hpp"

namespace {

// Address of the core's hook variable; nullptr on a server without the patch.
VacskipSkipThresholdHook *core_hook = nullptr;
VacskipSkipThresholdHook prev_skip_threshold_hook = nullptr;

}  // namespace

extern "C" {
static void vacskip_skip_threshold_hook(Relation rel,
										const struct VacuumParams *params,
										bool aggressive,
										BlockNumber rel_pages,
										VacskipSkipThresholds *thresholds);

static void
vacskip_skip_threshold_hook(Relation rel, const struct VacuumParams *params,
							bool aggressive, BlockNumber rel_pages,
							VacskipSkipThresholds *thresholds)
{
	vacskip::pg::guarded([&] {
		if (prev_skip_threshold_hook)
			prev_skip_threshold_hook(rel, params, aggressive, rel_pages,
									 thresholds);
		const vacskip::Decision d = vacskip::pg::decide_for(rel, params, aggressive ? 1 : 0,
															  rel_pages);

		thresholds->all_frozen = d.thresholds.all_frozen;
		thresholds->all_visible = d.thresholds.all_visible;
	});
}
}

namespace vacskip::pg {

void
hook_init()
{
	if (core_hook != nullptr)
		return;
	core_hook = reinterpret_cast<VacskipSkipThresholdHook *>(
		dlsym(RTLD_DEFAULT, kSkipThresholdHookSymbol));
	if (core_hook == nullptr)
		return;
	prev_skip_threshold_hook = *core_hook;
	*core_hook = vacskip_skip_threshold_hook;
}

bool
hook_active()
{
	return core_hook != nullptr;
}

}  // namespace vacskip::pg

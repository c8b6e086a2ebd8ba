// The skip threshold hook: core VACUUM -> here -> policy (src/core) -> core.
#include <dlfcn.h>

#include "../core/policy.hpp"
#include "compat.hpp"
#include "guard.hpp"
#include "module.hpp"

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
		const vacskip::Thresholds chosen =
			vacskip::choose_thresholds(vacskip::pg::threshold_setting());
		thresholds->all_frozen = chosen.all_frozen;
		thresholds->all_visible = chosen.all_visible;
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

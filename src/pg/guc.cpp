// vacskip.threshold
#include "../core/policy.hpp"
#include "guard.hpp"
#include "module.hpp"
#include "postgres.hpp"

namespace {

int vacskip_threshold = vacskip::kThresholdAutotune;

}  // namespace

extern "C" {
static bool check_vacskip_threshold(int *newval, void **extra, GucSource source);

static bool
check_vacskip_threshold(int *newval, void **extra, GucSource source)
{
	(void) extra;
	return vacskip::pg::guarded([&] {
		if (!vacskip::threshold_setting_valid(*newval))
		{
			GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
			GUC_check_errdetail("vacskip.threshold must be -1 (autotune) or between %d and %d.",
								vacskip::kThresholdMin, vacskip::kThresholdMax);
			return false;
		}
		if (!vacskip::pg::hook_active() && source >= PGC_S_INTERACTIVE)
			ereport(WARNING,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("vacskip.threshold has no effect on this server"),
					 errdetail("This server was built without the vacuum skip threshold hook."),
					 errhint("Use a PostgreSQL server built with vacskip's patches.")));
		return true;
	});
}
}

namespace vacskip::pg {

void
guc_init()
{
	DefineCustomIntVariable("vacskip.threshold",
							"Minimum length of a run of skippable pages that VACUUM skips.",
							"-1 chooses the threshold automatically; 1 to 1000000 "
							"fixes it (1 skips every run, 32 is stock PostgreSQL).",
							&vacskip_threshold,
							vacskip::kThresholdAutotune,
							vacskip::kThresholdAutotune,
							vacskip::kThresholdMax,
							PGC_USERSET,
							0,
							check_vacskip_threshold,
							nullptr,
							nullptr);
	MarkGUCPrefixReserved("vacskip");
}

int
threshold_setting()
{
	return vacskip_threshold;
}

}  // namespace vacskip::pg

// SQL-callable functions.
#include "module.hpp"
#include "guard.hpp"
#include "postgres.hpp"

extern "C" {
PG_FUNCTION_INFO_V1(vacskip_hook_active);

Datum
vacskip_hook_active(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	return vacskip::pg::guarded([] {
		return BoolGetDatum(vacskip::pg::hook_active());
	});
}
}

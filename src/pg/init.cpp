// _PG_init: a table of contents of the module.
#include "module.hpp"
#include "guard.hpp"
#include "postgres.hpp"

extern "C" {
PG_MODULE_MAGIC;

void _PG_init(void);

void
_PG_init(void)
{
	vacskip::pg::guarded([] {
		vacskip::pg::hook_init();
		vacskip::pg::guc_init();
	});
}
}

namespace vacskip::pg {

void
raise_error(int sqlstate, const char *message)
{
	ereport(ERROR, (errcode(sqlstate), errmsg("vacskip: %s", message)));
	pg_unreachable();
}

}  // namespace vacskip::pg

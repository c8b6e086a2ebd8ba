// _PG_init: a table of contents of the module.
#include "guard.hpp"
#include "module.hpp"
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
raise_error(ErrorKind kind, const char *message)
{
	const int	sqlstate = kind == ErrorKind::kInvalidParameter ?
		ERRCODE_INVALID_PARAMETER_VALUE : ERRCODE_INTERNAL_ERROR;

	ereport(ERROR, (errcode(sqlstate), errmsg("vacskip: %s", message)));
	pg_unreachable();
}

}  // namespace vacskip::pg

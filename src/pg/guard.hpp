// The one guard around every function that PostgreSQL calls.
//
// PostgreSQL reports errors with longjmp, C++ with exceptions; neither may
// cross the other's frames.  guarded() runs the body, catches any C++
// exception, copies its message into a plain buffer, leaves the try scope and
// only then raises a PostgreSQL ERROR.  Bodies that call PostgreSQL functions
// which can ereport must hold no object with a destructor.
#pragma once

#include <stdexcept>

#include "postgres.hpp"

namespace vacskip::pg {

[[noreturn]] void raise_error(int sqlstate, const char *message);

template <typename Body>
auto guarded(Body &&body) -> decltype(body())
{
	char message[512];
	int sqlstate;

	try
	{
		return body();
	}
	catch (const std::invalid_argument &e)
	{
		sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
		strlcpy(message, e.what(), sizeof(message));
	}
	catch (const std::exception &e)
	{
		sqlstate = ERRCODE_INTERNAL_ERROR;
		strlcpy(message, e.what(), sizeof(message));
	}
	catch (...)
	{
		sqlstate = ERRCODE_INTERNAL_ERROR;
		strlcpy(message, "unknown C++ exception", sizeof(message));
	}
	raise_error(sqlstate, message);
}

}  // namespace vacskip::pg

// The one guard around every function that PostgreSQL calls.
//
// PostgreSQL reports errors with longjmp, C++ with exceptions; neither may
// cross the other's frames.  guarded() runs the body, catches any C++
// exception, copies its message into a plain buffer, leaves the try scope and
// only then raises a PostgreSQL ERROR (raise_error(), init.cpp).  Bodies
// that call PostgreSQL functions which can ereport must hold no object with
// a destructor.
//
// Plain C++: it must be included before postgres.hpp (cpp_only.hpp makes the
// compiler refuse otherwise), since port.h redefines names the standard
// headers declare.
#pragma once
#include "../core/cpp_only.hpp"

#include <cstddef>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace vacskip::pg {

// What kind of failure a C++ exception reports; raise_error() maps it to a
// SQLSTATE.
enum class ErrorKind { kInvalidParameter, kInternal };

[[noreturn]] void raise_error(ErrorKind kind, const char *message);

template <typename Body>
auto guarded(Body &&body) -> decltype(body())
{
	char		message[512];
	ErrorKind	kind;

	try
	{
		return body();
	}
	catch (const std::invalid_argument &e)
	{
		kind = ErrorKind::kInvalidParameter;
		std::strncpy(message, e.what(), sizeof(message) - 1);
	}
	catch (const std::exception &e)
	{
		kind = ErrorKind::kInternal;
		std::strncpy(message, e.what(), sizeof(message) - 1);
	}
	catch (...)
	{
		kind = ErrorKind::kInternal;
		std::strncpy(message, "unknown C++ exception", sizeof(message) - 1);
	}
	message[sizeof(message) - 1] = '\0';
	raise_error(kind, message);
}

}  // namespace vacskip::pg

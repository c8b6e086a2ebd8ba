// Included first by every header that includes C++ standard headers (all of
// src/core, and src/pg's plain C++ headers): such a header must never follow
// PostgreSQL's headers, since port.h redefines printf, snprintf, Min ... and
// ereport longjmps through C++ frames.  The compiler enforces the order.
#pragma once
#ifdef POSTGRES_H
#error "plain C++ header included after postgres.h: include it before postgres.hpp"
#endif

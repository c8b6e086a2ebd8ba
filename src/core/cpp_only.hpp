// Included first by every file under src/core: these files are plain C++17 and
// must never see PostgreSQL headers (port.h redefines printf, Min, ... and
// ereport longjmps through C++ frames).
#pragma once
#ifdef POSTGRES_H
#error "src/core is PostgreSQL-free: do not include postgres.h before this header"
#endif

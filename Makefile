# vacskip: PGXS build of the extension, plus thin wrappers for the test suite
# and the benchmark.  PG_CONFIG selects the server to build against.

EXTENSION = vacskip
EXTVERSION = 1.0
MODULE_big = vacskip
OBJS = \
	src/core/calibration.o \
	src/core/model.o \
	src/core/policy.o \
	src/core/vmscan.o \
	src/pg/calibrate.o \
	src/pg/calibration_store.o \
	src/pg/functions.o \
	src/pg/guc.o \
	src/pg/hook.o \
	src/pg/init.o \
	src/pg/inputs.o
DATA = vacskip--$(EXTVERSION).sql

REGRESS = create_extension threshold_guc hook functions calibrate
TAP_TESTS = 1

PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Werror -Wno-register
SHLIB_LINK = -lstdc++

# Targets that need no PostgreSQL yet: they build one first.
NO_PGXS_GOALS = test bench
.PHONY: test bench

ifneq ($(filter $(NO_PGXS_GOALS),$(MAKECMDGOALS)),)
test:
	tools/test
bench:
	tools/bench
else
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
# PGXS also compiles each .cpp to LLVM bitcode with clang (on servers built
# with LLVM), which does not see PG_CXXFLAGS; Makefile.global sets it, so
# extend it after the include.
override BITCODE_CXXFLAGS += -std=c++17 -Wno-register
endif

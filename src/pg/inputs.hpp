// What the autotuner reads for one relation (its tablespace's storage
// settings, how old its relfrozenxid / relminmxid are), and the decision
// made from it.
#pragma once

#include "../core/model.hpp"
#include "postgres.hpp"

struct VacuumParams;

namespace vacskip::pg {

// Where each per-tablespace setting came from.
struct StorageSources {
	Oid tablespace;                 // the relation's, resolved (never 0)
	bool random_page_cost;          // true: ALTER TABLESPACE ... SET; false: global
	bool seq_page_cost;
	bool effective_io_concurrency;
	bool maintenance_io_concurrency;
};

void read_storage(Relation rel, vacskip::StorageInputs *in, StorageSources *sources);

// `params` of the VACUUM (autovacuum's per-table settings), or nullptr for
// a manual VACUUM with the session's settings.
void read_freeze(Relation rel, const struct VacuumParams *params, vacskip::FreezeInputs *in);

// What vacskip chooses for a VACUUM of rel under vacskip.threshold: the
// inputs above given to the model.  The hook's answer, and the SQL
// functions' (params nullptr: a manual VACUUM with this session's settings).
vacskip::Decision decide_for(Relation rel, const struct VacuumParams *params);

}  // namespace vacskip::pg

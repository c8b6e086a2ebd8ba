// What the autotuner reads for one relation: its tablespace's storage
// settings and how old its relfrozenxid / relminmxid are.
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

}  // namespace vacskip::pg

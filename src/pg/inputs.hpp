// What the autotuner reads for one relation (its tablespace's storage
// settings and calibration, its density, how old its relfrozenxid /
// relminmxid are), and the decision made from it.
#pragma once

#include "../core/calibration.hpp"
#include "../core/model.hpp"
#include "../core/vmscan.hpp"
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

// The storage settings in effect for tables in tablespace `spcoid`.
void read_storage_of(Oid spcoid, vacskip::StorageInputs *in);

// The kernel's readahead (read_ahead_kb) of the block device under
// tablespace `spcoid` (this database's directory there; a partition's
// disk), -1 where there is none (tmpfs, a network file system) or /sys
// cannot be read.
int read_ahead_kb_of(Oid spcoid);

// Where tablespace `spcoid`'s directory lies (vacskip::place_of() of base,
// or pg_tblspc/OID/PG_...); not known (an inode of 0) where it cannot be
// read.
vacskip::Place place_of_tablespace(Oid spcoid);

// The tablespace's calibration, if any, whether it was measured where the
// tablespace's directory is now (vacskip::same_place(); not: kElsewhere, a
// copy of the data), and whether it measured the I/O path VACUUM's reads
// take under `now` (vacskip::same_io_path(); not: kStale); where it
// measured buffered reads under a known readahead, now->read_ahead_kb is
// read first.  The readahead and the place are read at most once a second
// in a backend.
enum class CalibrationState { kNone, kCurrent, kStale, kElsewhere };
CalibrationState read_calibration(Oid spcoid, vacskip::StorageInputs *now,
								  vacskip::CalibrationRecord *rec);

// Walk rel's visibility map once for all thresholds in results[0..n).
void walk_visibility_map(Relation rel, BlockNumber rel_pages, bool aggressive,
						 vacskip::SimResult *results, int n);

// What VACUUM's cost-based delay sleeps per page it reads through and per
// page it must read (vacskip::cost_delay_us(): in->delay_page and
// in->delay_needed), and how long each of its naps lasts at least
// (in->delay_nap): session_cost_delay() for a manual VACUUM in this
// session, from its vacuum_cost_delay and vacuum_cost_limit;
// vacuum_cost_delay_now() for the VACUUM running in this process, as it
// stands when the VACUUM starts on the relation (autovacuum: the table's
// or autovacuum's settings, the limit balanced between the workers then),
// 0 where it is off.
void session_cost_delay(vacskip::RelationInputs *in);
void vacuum_cost_delay_now(vacskip::RelationInputs *in);

// Everything decide() needs, and where it came from.  `inputs.calibration`
// and `inputs.map` point into `calibration` and `map` when a current
// calibration makes the map count.
struct Inputs {
	vacskip::RelationInputs inputs;
	StorageSources sources;
	CalibrationState calibration_state;
	vacskip::CalibrationRecord calibration;
	vacskip::MapCounts map;
	bool aggressive;       // as walked: the VACUUM's, or as predicted
};

// `params` of the VACUUM (autovacuum's per-table settings), or nullptr for
// a manual VACUUM with the session's settings; `aggressive` the VACUUM's
// (0 or 1), or -1 to predict it from relfrozenxid's and relminmxid's ages.
// The map is walked where a current calibration needs it, or always with
// `walk_map`, over `rel_pages` pages (by default the relation's size now).
// `out` must not move afterwards (it points into itself).
void read_inputs(Relation rel, const struct VacuumParams *params, int aggressive,
				 Inputs *out, bool walk_map = false,
				 BlockNumber rel_pages = InvalidBlockNumber);

// The hook's answer for a VACUUM of rel under vacskip.threshold: the inputs
// above, with the running VACUUM's cost-based delay (read_inputs() gives a
// manual VACUUM's in this session), given to the model (the SQL functions
// call read_inputs() and decide() themselves, to show the inputs too).  `params` and `aggressive`
// the VACUUM's, `rel_pages` its count of the relation's pages.  A fixed
// vacskip.threshold reads no input of the relation.
vacskip::Decision decide_for(Relation rel, const struct VacuumParams *params, int aggressive,
							 BlockNumber rel_pages);

}  // namespace vacskip::pg

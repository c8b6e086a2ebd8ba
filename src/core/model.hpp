// The autotuner's cost model: from what reads cost on a tablespace's storage
// to the skip thresholds of one VACUUM.  Pure C++17, no PostgreSQL headers.
// docs/model.md derives it.
#pragma once
#include "cpp_only.hpp"

#include <cstdint>

#include "policy.hpp"

namespace vacskip {

// How the server performs I/O (io_method on 18; 15 has none: kNone).
enum class IoMethod { kNone, kSync, kWorker, kIoUring, kOther };

// Storage settings in effect for one relation (per tablespace where
// PostgreSQL allows it), plus the server facts that decide which matter.
struct StorageInputs {
	int server_major = 18;
	double random_page_cost = 4.0;
	double seq_page_cost = 1.0;
	int effective_io_concurrency = 16;
	int maintenance_io_concurrency = 16;
	int io_combine_limit = 16;          // pages; 0 where the server has none
	IoMethod io_method = IoMethod::kWorker;
	int io_workers = 3;                 // io_method worker only
	bool direct_io = false;             // debug_io_direct includes data
	// The kernel's readahead of the block device under the tablespace
	// (its queue's read_ahead_kb), which decides what a buffered read that
	// misses brings in; -1 where it is not known or not read (direct reads
	// do not use it).
	int read_ahead_kb = -1;
};

// The storage settings PostgreSQL `major` ships with.
StorageInputs default_storage(int major);

// The concurrency VACUUM's reads overlap with: from 18 on its read stream
// keeps up to maintenance_io_concurrency reads in flight, performed by
// io_workers processes with io_method worker, by the kernel with io_uring,
// and one at a time with io_method sync; before 18 VACUUM reads one block
// at a time.
int vacuum_read_concurrency(const StorageInputs &in);

// The thresholds the model prices, and the ones calibrate() times: stock's
// 32 and the powers of two below it.
constexpr int kGapCount = 6;
constexpr std::uint32_t kGaps[kGapCount] = {1, 2, 4, 8, 16, 32};

// The densities of pages VACUUM must read (not all-visible) at which
// calibrate() times reads.  On a map where each page must be read with
// probability d, the runs of skippable pages between two pages to read
// average (1 - d) / d pages, which is threshold T at d = 1 / (T + 1): from
// there on, denser maps have threshold T read most of their runs through,
// and with buffered reads the kernel's readahead then serves the pages
// after the runs it skips.  So calibrate() measures at 1 / (T + 1) for each
// threshold it prices, T = 32 down to 1, and at 1 % for sparse maps; and at
// 1/57, halfway in the logarithms between 1 % and 1/33, the one interval
// whose upper end was three times its lower (the others 1.5 to 1.9): with
// buffered reads the kernel's readahead stops serving thresholds 16 and 32
// inside it, where between two figures so far apart the interpolation
// cannot place the change (docs/model.md).
constexpr int kDensityCount = 8;
constexpr double kDensities[kDensityCount] = {
	0.01, 1.0 / 57, 1.0 / 33, 1.0 / 17, 1.0 / 9, 1.0 / 5, 1.0 / 3, 1.0 / 2};

// The first pages of a file that calibrate() times apart: 16 MB, twice
// the largest readahead window (read_ahead_kb 8192) of the disk vacskip is
// benchmarked on.  With buffered reads the kernel's readahead takes a
// stretch of reads to settle on a file it has just opened (serve every
// later read): on that disk (python3 -m bench.readahead, docs/model.md)
// VACUUM-like reads of scattered maps went to the device for most of the
// first pages to read, and where readahead settled it mostly did within
// the first few thousand pages.  A VACUUM opens each segment file of its
// relation (RELSEG_SIZE pages) anew, so its first kStartPages pages are
// read as calibrate()'s first ones were.
constexpr std::uint32_t kStartPages = 2048;

// What vacskip.calibrate() measured on one tablespace's storage through the
// server's own read path, cold, in microseconds.
struct Calibration {
	// Per page VACUUM must read, reading what a VACUUM with threshold
	// kGaps[t] reads on a pseudo-random map in which a fraction
	// kDensities[d] of the pages must be read: those pages, and the runs
	// shorter than the threshold between them.  start_read_us: on the
	// file's first kStartPages pages, just opened; read_us: on the pages
	// after those, read on (at least as many again).
	double start_read_us[kDensityCount][kGapCount] = {};
	double read_us[kDensityCount][kGapCount] = {};
	// How far each read_us figure of density kDensities[d] may be off where
	// it is compared with another of that density: the standard deviation
	// of its logarithm, from the rounds' residual once each of the density's
	// patterns' and each round's mean are taken out, and their number
	// (density_figures() in calibration.hpp: with direct reads, and with
	// buffered ones where the device's requests show a stall, timings a
	// disturbance took set aside first, and the noise then raised as far as
	// Student's t at the degrees of freedom left lies above it at all of
	// them); 0 where one round left it unmeasured.  start_read_noise: the
	// same of start_read_us (with direct reads, where both are one figure,
	// read_noise).  noise_dof: the degrees of freedom each is judged at,
	// (kGapCount - 1) * (rounds - 1).
	double read_noise[kDensityCount] = {};
	double start_read_noise[kDensityCount] = {};
	int noise_dof = 0;
	// VACUUM's work on a page it reads although the map let it skip it (an
	// all-frozen page: pruning and freezing find nothing to do), measured on
	// cached pages: a fixed part per page and a part per tuple.
	double cpu_page_us = 0;
	double cpu_tuple_us = 0;
	// The share of each pattern's time the backend spent on a CPU (its
	// thread's CPU time over the pattern's time, both parts together), the
	// median over the rounds: the part of the reading no nap of VACUUM's
	// can hide (hidden_by_sleep()).  All 0 in a record that did not
	// measure it.
	double read_cpu_share[kDensityCount][kGapCount] = {};
};

// Whether a calibration holds usable figures (finite, positive reads, work
// and noise not negative).
bool calibration_valid(const Calibration &c);

// What a VACUUM of one relation would read at each threshold kGaps[t], from
// a walk of its visibility map (vacskip::VmWalker): the pages it must read
// whatever the threshold, and those it reads through as well.
struct MapCounts {
	std::uint64_t rel_pages = 0;
	std::uint64_t segment_pages = 131072;   // RELSEG_SIZE: pages per file
	std::uint64_t needed = 0;
	std::uint64_t read_through[kGapCount] = {};
	std::uint64_t io_runs[kGapCount] = {};
};

// Where the costs came from.
enum class CostSource {
	kSettings,       // random_page_cost / seq_page_cost, as documented
	kCalibration,    // vacskip.calibrate() on this tablespace
};

// The model for one VACUUM, in `unit`s: seq_page_cost for kSettings,
// microseconds for kCalibration.
struct CostModel {
	CostSource source;
	// The settings' prices, whatever the run (kSettings): the page after a
	// skipped run, and each page read in sequence.
	double skip_cost;
	double seq_cost;
	// The relation's map: its share of pages VACUUM must read; the runs of
	// consecutive such pages, and the density of the scattered calibrated
	// map whose runs of skippable pages between them are as long on average
	// (run_density, see cost_model()); and what reading at each threshold
	// kGaps[t] would cost, VACUUM's work on the pages read through included.
	double density;
	double runs;
	double run_density;
	// The share of its pages among the first kStartPages of a segment file
	// (start_share()), priced with the calibration's start_read_us.
	double start_share;
	double cost[kGapCount];
	// VACUUM's work per page read through (0 where no measurement gives it).
	double cpu_page;
	// What VACUUM's cost-based delay sleeps per page it reads through (see
	// cost_delay_us()), added to the price of each page read through where
	// a calibration prices in microseconds; the settings' documented
	// meaning and VACUUM's accounting, not a measurement: it adds no noise.
	// delay_needed: the same per page VACUUM must read (that page's miss,
	// the free space map's hit, and the page dirtied).
	double delay_page;
	double delay_needed;
	// Whether VACUUM's reads go on while it sleeps: from 18 on, with
	// io_method worker or io_uring, its read stream has issued reads when
	// it sleeps, performed by I/O workers or the kernel, so that a
	// threshold costs VACUUM's work on the pages it reads through, its
	// reading and its sleeping, less the reading its naps hide
	// (hidden_by_sleep()).  An error of the reading then passes into a
	// cost only in part (kept[], below).  reads_ahead: how many reads the
	// stream has issued at most (maintenance_io_concurrency; at least 1);
	// nap: how long one of VACUUM's sleeps lasts at least, in microseconds
	// (vacuum_cost_delay); io_combine: the most pages one read holds
	// (io_combine_limit).
	bool sleep_overlaps;
	double reads_ahead;
	double nap;
	double io_combine;
	// cpu_share[t]: the share of the reading at threshold kGaps[t] spent
	// on a CPU, which no nap hides (measured_cpu_share() at run_density;
	// 0 without a calibration).
	double cpu_share[kGapCount];
	// How far each cost may be off, as the standard deviation of its
	// logarithm: its parts' figures' noise (measured_noise() at the
	// density each part is priced at), weighted by their shares of the
	// cost, VACUUM's work counted as noisy as the reads after a file's first
	// pages (0 without a calibration), the pages read on in a stream left
	// out.  Those are priced with one figure at every threshold, the same
	// part of every cost: shared_noise is how far that part may be off, in
	// `unit`s (its pages times that figure's noise).  noise_dof: the
	// degrees of freedom those noises were estimated from.  kept[t]: how
	// much of an error of the reading passes into cost[t], 1 unless the
	// reads go on while VACUUM sleeps (reading_share()); both noises count
	// so.
	double noise[kGapCount];
	double shared_noise;
	double kept[kGapCount];
	int noise_dof;
	// The saving over stock's threshold a saving's test judges,
	// ln(cost[32] / cost[t]), and how far it may be off because the map is
	// priced between two calibrated densities, run_density's neighbours,
	// whose figures it interpolates.  That logarithm priced with either
	// neighbour's figures, m and M, is taken to bound it: where the
	// interpolated one lies outside [m, M] (each cost is a sum of parts
	// interpolated each on its own), saving[t] is the nearer of the two;
	// otherwise it is taken for the saving's mean μ, and the most a
	// quantity within [m, M] with mean μ can spread, as a standard
	// deviation, is between[t] = sqrt((M - μ)(μ - m)) (the Bhatia-Davis
	// inequality).  between[t] is 0 at a calibrated density and beyond the
	// ends, and not a number where a bound is not (nothing can be told).
	double saving[kGapCount];
	double between[kGapCount];
	// vacuum_read_concurrency(): reported, and part of what a calibration
	// measured.
	int concurrency;
};

// PostgreSQL's documented meaning of random_page_cost: "The default value
// can be thought of as modeling random access as 40 times slower than
// sequential, while expecting 90% of random reads to be cached."  VACUUM's
// reads of the pages it would skip are not cached: the storage's own cost
// of a non-sequential read is random_page_cost / (1 - 0.9), 40 / 4 times
// random_page_cost.
constexpr double kDocumentedUncachedFactor = 40.0 / 4.0;

// What VACUUM's cost-based delay makes it sleep per page it reads through,
// in microseconds: reading the page in adds vacuum_cost_page_miss to its
// balance, and recording the page's free space (RecordPageWithFreeSpace(),
// which VACUUM does for every page it scans that has no dead items left for
// a second pass, as none of the pages it could skip has) finds the free
// space map's page in shared buffers, vacuum_cost_page_hit more; whenever
// the balance reaches vacuum_cost_limit VACUUM sleeps vacuum_cost_delay
// times balance / limit, so each point of cost costs delay / limit.  0
// where the delay is off (delay_ms not above 0) or the settings are not
// usable.
double cost_delay_us(double delay_ms, int cost_limit, int page_miss, int page_hit);

// `calibration` may be null (no valid calibration of this tablespace for
// the I/O path VACUUM uses now); `tuples_per_page` is the relation's density
// (reltuples / relpages), 0 when unknown; `map` its visibility map's counts,
// null when not walked.
//
// Calibrated, a map is priced by its runs of pages to read: on a scattered
// map of density d those runs are 1 / (1 - d) pages long on average, the
// skippable runs between them 1 / d, and reading such a map at threshold T
// cost read_us(d, T) per page to read, read_us(d, T) / (1 - d) per run.  A
// relation with `runs` runs of pages to read and `skippable` pages that
// need not be read is priced as that many runs of the scattered map whose
// skippable runs are as long, d = runs / skippable: what a threshold reads
// through and skips is decided between the runs, not within them.  Pages
// to read beyond the scattered map's 1 / (1 - d) per run (longer runs, as
// where changes cluster) cost what reading on in a stream does
// (stream_read_us()), at every threshold alike.  On a scattered map this
// is needed * read_us(density, T).  The relation's share among the first
// pages of its segment files (start_share()) is priced so with
// start_read_us, the rest with read_us.  `delay_page` (cost_delay_us()) is
// added to every page read through where a calibration prices the map; the
// settings' scale is not in time, and there it is not used.  Where the
// reads go on while VACUUM sleeps (CostModel::sleep_overlaps; naps of
// `delay_nap` microseconds, vacuum_cost_delay), a threshold costs the work
// on the pages it reads through, its reading and its sleeping, less the
// reading its naps hide (hidden_by_sleep()): `delay_needed` for every page
// it must read, `delay_page` for every page it reads through.
CostModel cost_model(const StorageInputs &in, const Calibration *calibration,
					 double tuples_per_page, const MapCounts *map,
					 double delay_page = 0.0, double delay_needed = 0.0,
					 double delay_nap = 0.0);

// The part of a threshold's reading (`reads`, in microseconds, in at most
// `ios` reads) that VACUUM's sleeping (`sleep` microseconds in all) hides
// where its reads go on while it sleeps (model.sleep_overlaps; 0
// elsewhere).  A nap hides only waiting: the share `cpu_share` of the
// reading the backend spends on a CPU (measured_cpu_share()) goes on only
// while it is awake, and the rest, reads * (1 - cpu_share), is its
// waiting.  VACUUM issues its next reads only while it runs: during a nap
// only the reads issued before it go on, model.reads_ahead of them at
// most, each taking the waiting's time per read on average.  So each of
// its sleep / model.nap naps hides at most model.reads_ahead * waiting /
// ios, and all of them no more than the sleep nor the waiting.  With one
// read issued ahead a nap hides one read's waiting; with 16 (18's
// default) at the cost settings' defaults a page to read sleeps 23 / 200
// of a nap and a page read through 3 / 200, so the naps times 16
// outnumber the reads (reads_at_most()) and hide as much as the sleep or
// the waiting lasts.
double hidden_by_sleep(const CostModel &model, double reads, double sleep, double ios,
					   double cpu_share = 0.0);

// How much of an error in the reading passes into a threshold's cost, per
// microsecond of it: the cost is reads + sleep - hidden_by_sleep(), which
// moves with the reading by 1 where the naps hide all the sleep (the
// reading the longer), by less where they hide part of the reading, by
// none where they hide all of it; `noise` microseconds of the reading's
// error (its figures' noise) either way, the larger of the two moves per
// microsecond, so that near where one case turns into another an error of
// that size counts as it would move the cost; without noise, the share of
// the reading not hidden.
double reading_share(const CostModel &model, double reads, double sleep, double ios,
					 double noise, double cpu_share = 0.0);

// The reads VACUUM issues for `pages_scanned` pages in `io_runs` runs of
// consecutive pages at most: a run of L pages takes L / io_combine reads
// rounded up, no more than one read more than L / io_combine.
double reads_at_most(const CostModel &model, double pages_scanned, double io_runs);

// The share of a relation's pages that lie among the first kStartPages
// pages of one of its segment files; 1 for an empty relation.
double start_share(std::uint64_t rel_pages, std::uint64_t segment_pages);

// The share of the reading at a map density and a threshold the backend
// spends on a CPU (Calibration::read_cpu_share): linear between the
// measured ones in the logarithms of density and threshold, the nearest
// measured one beyond.
double measured_cpu_share(const Calibration &c, double density, double threshold);

// Measured read cost per page that must be read, at a map density and a
// threshold: linear in the logarithms of both between the measured ones,
// the nearest measured one beyond; from start_read_us where `start`.
double measured_read_us(const Calibration &c, double density, double threshold,
						bool start = false);

// What a page read on in a stream cost: the densest calibrated map read at
// the highest threshold reads every page of its stretch of the table, a
// share kDensities[kDensityCount - 1] of them pages to read.
double stream_read_us(const Calibration &c, bool start = false);

// How noisy a calibrated figure of that density is (read_noise or, where
// `start`, start_read_noise): between two measured densities the figure is
// interpolated in the logarithms, so its error is the interpolation's
// weighted sum of theirs, whose standard deviation is at most the weighted
// sum of their noises; the nearest beyond.
double measured_noise(const Calibration &c, double density, bool start = false);

// The one-sided 95 % quantile of Student's t distribution with `dof`
// degrees of freedom (towards the normal's 1.645 for many): a saving
// measured with a noise that was itself estimated from `dof` degrees of
// freedom counts when it exceeds this many of those standard deviations.
// t_quantile(0.05, dof), below 1 degree of freedom 1's.
double one_sided_95(int dof);

// From a calibration: the threshold of kGaps whose cost on the relation's
// map is least (the larger one where two cost the same).
std::uint32_t cheapest_threshold(const CostModel &model);

// Whether the calibrated saving of threshold kGaps[t] over stock's is within
// the calibration's noise: saving[t], the logarithm of cost(32) / cost(t)
// (between two calibrated densities within its neighbours' bounds), at
// most one_sided_95(noise_dof) times the noise of that difference,
// sqrt(noise[t]^2 + noise[32]^2 + s^2 + between[t]^2), where s =
// shared_noise * |kept[t]/cost(t) - kept[32]/cost(32)|: an error of the
// part both costs share moves the two alike and their ratio only by that
// much.  Where the
// noise rests on no degrees of freedom (a calibration of one round, which
// cannot show a spread), or between[t] is not a number, every saving
// counts as within it: Student's t has no quantile there.
bool saving_within_noise(const CostModel &model, int t);

// The all-frozen threshold the model chooses, in 1..kStockThreshold so that
// vacskip never reads more than stock.  From the settings: the shortest run
// L for which reading it through (L + 1 pages in sequence) costs at least
// as much as the page after it costs after a skip.  From a calibration:
// the cheapest threshold whose saving over stock's 32 is not within the
// calibration's noise (saving_within_noise()); 32, as without vacskip,
// where none is.
std::uint32_t tuned_threshold(const CostModel &model);

// The model's cost of a VACUUM that reads `pages_scanned` pages, of which
// `read_through` only because their run was short, in `io_runs` runs of
// consecutive pages, at `threshold`; in the model's unit.
double estimated_cost(const CostModel &model, const Calibration *calibration,
					  std::uint32_t threshold, std::uint64_t pages_scanned,
					  std::uint64_t read_through, std::uint64_t io_runs);

// How far the relation is from the next aggressive VACUUM.
struct FreezeInputs {
	std::int64_t relfrozenxid_age = 0;
	std::int64_t freeze_table_age = 150000000;             // effective value
	std::int64_t relminmxid_age = 0;
	std::int64_t multixact_freeze_table_age = 150000000;   // effective value
};

// Once relfrozenxid (or relminmxid) is older than this fraction of the
// effective freeze table age, an autotuned VACUUM reads runs that contain
// all-visible, unfrozen pages, so that it can advance relfrozenxid.
constexpr double kReadThroughFraction = 0.5;

// A threshold no run reaches: the run is always read.
constexpr std::uint32_t kReadThrough = 0xFFFFFFFFu;

// Whether relfrozenxid or relminmxid is old enough to read all-visible runs.
bool relfrozenxid_due(const FreezeInputs &in);

// Everything the autotuner knows about one VACUUM.
struct RelationInputs {
	StorageInputs storage;
	const Calibration *calibration = nullptr;   // valid and current, or null
	double tuples_per_page = 0;
	const MapCounts *map = nullptr;             // walked where a calibration is used
	double delay_page = 0;                      // cost_delay_us() of this VACUUM
	double delay_needed = 0;                    // the same per page it must read
	double delay_nap = 0;                       // vacuum_cost_delay, µs; 0: off
	FreezeInputs freeze;
};

struct Decision {
	Thresholds thresholds;
	bool autotuned;        // vacskip.threshold = -1
	bool read_through;     // all-visible runs read so relfrozenxid can advance
	CostModel model;
	char reason[1024];     // one line for vacskip.explain_threshold()
};

// The thresholds for one VACUUM under vacskip.threshold = `setting`.
// Throws std::invalid_argument for an invalid setting.
Decision decide(int setting, const RelationInputs &in);

}  // namespace vacskip

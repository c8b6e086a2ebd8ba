// A calibration as vacskip keeps it: what vacskip.calibrate() measured on
// one tablespace, and the I/O path it measured through.  Pure C++17, no
// PostgreSQL headers, no allocation (the PostgreSQL layer parses files in
// frames that may raise an ERROR).
#pragma once
#include "cpp_only.hpp"

#include <cstddef>
#include <cstdint>

#include "model.hpp"

namespace vacskip {

// Where a directory lies (place_of()): its inode, when it was made
// (nanoseconds since the Unix epoch; 0 where the file system does not keep
// it) and its file system (statvfs()'s f_fsid).  A copy of the directory (a
// base backup, a restore, the data moved to other storage) is a directory
// made later.  All 0 where it is not known.
struct Place {
	std::uint64_t inode = 0;
	std::uint64_t born_ns = 0;
	std::uint64_t file_system = 0;
};

struct CalibrationRecord {
	Calibration costs;
	// The I/O path VACUUM's reads took when it was measured.
	int server_major = 0;
	bool direct_io = false;
	IoMethod io_method = IoMethod::kNone;
	int io_workers = 0;
	int maintenance_io_concurrency = 0;
	int io_combine_limit = 0;
	// With buffered reads, the kernel's readahead of the device under the
	// tablespace (read_ahead_kb); -1 where it was not found, with direct
	// reads, and in records written before it was kept.
	int read_ahead_kb = -1;
	// Where the tablespace's directory was; not known in records written
	// before it was kept.
	Place directory;
	// When (seconds since the Unix epoch), for how long, in how many rounds.
	std::int64_t measured_at = 0;
	double seconds = 0;
	int rounds = 0;
	char tablespace[64] = {};   // its name then
	// The rate limits found on the storage (find_rate_limit()), requests
	// and bytes a second; 0 where none was found.  Every pattern's figure
	// is at least the time its reads take at those rates (limited_us()).
	double limit_requests = 0;
	double limit_bytes = 0;
};

// What a series of reads, issued one after another, shows of a rate limit
// that lets reads through faster than it sustains them and then holds them
// back (a token bucket's burst, blk-throttle's and cgroup io.max's
// allowance per time slice, a cloud volume's short-term credits):
// amount[i], the running total of requests or bytes, had completed at
// t_us[i].  `per_s` is the series' rate, the least-squares slope of amount
// over time (the origin included as a point); `ahead` the most the series
// gained on that rate over any stretch of it; `ahead_per_s` the rate of
// the fastest stretch, as found, that served at least twice `min_ahead` in
// at least kMinStretchReads reads (one read's time is the device's
// jitter, not a limit's).  A limit is found where that is at least twice
// `per_s` (so that the stretch gained at least min_ahead on it): storage
// that serves reads as fast as it can gains on its own mean rate by its
// jitter only.
constexpr int kMinStretchReads = 8;
struct RateLimit {
	double per_s = 0;
	double ahead = 0;
	double ahead_per_s = 0;
	bool found = false;
};
RateLimit find_rate_limit(const double *t_us, const double *amount, int n, double min_ahead);

// A limit found by two probes alike: their rates' geometric mean where
// both found one and the rates are within a quarter of each other, 0
// otherwise.  A stall of the storage (reads held up once) looks like a
// limit to one probe; a limit holds reads back at the same rate again.
double repeated_limit(const RateLimit &a, const RateLimit &b);

// The least time, in microseconds, that reads of `requests` requests and
// `bytes` bytes take under the record's limits: the longer of the two at
// their rates; 0 where no limit was found.
double limited_us(const CalibrationRecord &r, double requests, double bytes);

// The record's I/O path, as StorageInputs (page costs left at defaults).
StorageInputs measured_path(const CalibrationRecord &r);

// Whether VACUUM's reads under `now` take the path the record measured:
// same major, direct or buffered alike, same io_method, io_combine_limit
// and read concurrency (vacuum_read_concurrency()), and with buffered reads
// the same kernel readahead where both know it.
bool same_io_path(const CalibrationRecord &r, const StorageInputs &now);

// The kernel's readahead (read_ahead_kb) of block device major:minor, as
// sysfs shows it under `sys_dev_block` ("/sys/dev/block": one link per
// device, to its directory): a disk's queue/read_ahead_kb, or for a
// partition, which has no queue of its own, its disk's; -1 where neither
// can be read as a number of kB (at most 10^9, as a calibration file
// keeps it).
int device_read_ahead_kb(const char *sys_dev_block, unsigned major, unsigned minor);

// Where directory `path` lies (statx()'s inode and birth time, statvfs()'s
// f_fsid); false, and *out left alone, where it cannot be read or is no
// directory.
bool place_of(const char *path, Place *out);

// Whether `then` and `now` are the same directory: the same inode, made at
// the same time where both know when, else on the same file system.  True
// where either does not know its inode (0).  The birth time decides where
// it is kept: f_fsid is on some file systems (XFS) the device's number,
// which another boot can change.
bool same_place(const Place &then, const Place &now);

// The most rounds calibrate() keeps per pattern.
constexpr int kMaxRounds = 200;

// How far each of calibrate()'s figures (a pattern's median over `rounds`
// rounds) may be off where figures of the given patterns are compared (one
// density's: calibrate() calls it per density), as the standard deviation
// of its logarithm.  samples[k * stride + r] is pattern k's figure in round
// r (at most kDensityCount * kGapCount patterns).  What two patterns'
// figures of one round share (a round slower or faster throughout) cancels
// in a comparison; what is left is the residual of the logarithms once each
// pattern's and each round's mean are taken out, pooled over all of them,
// (P - 1)(R - 1) degrees of freedom.  Times sqrt(pi / 2), a median's
// standard error over a mean's for many normal samples (for two rounds,
// whose median is their mean, a quarter too much), over sqrt(rounds).  0
// with fewer than two rounds or patterns (nothing measured the spread), or
// more than kMaxRounds rounds.
double read_noise(const double *samples, int patterns, int rounds, int stride);

// The median of xs[0..n), n > 0; sorts xs in place.
double median_in_place(double *xs, int n);

// The regularized incomplete beta function I_x(a, b), a, b > 0.
double incomplete_beta(double x, double a, double b);

// Student's t distribution with `dof` degrees of freedom: the chance of
// more than t (t >= 0), and the t with chance p of more (0 < p < 1/2).
double t_upper(double t, double dof);
double t_quantile(double p, double dof);

// The chance that a density's timings, normal and undisturbed, have one of
// them set aside as disturbed (density_figures()): the 95 % the autotuner
// asks of a saving everywhere.
constexpr double kDisturbedAlpha = 0.05;

// One density's figures from its patterns' rounds, as calibrate() keeps
// them: figures[k], the median over the `rounds` rounds of pattern k's
// samples[k * stride + r] with each round's own level taken out (in the
// logarithms, the round's mean over the patterns, and the mean of those
// added back), so that what a round's patterns share, a round slower or
// faster throughout, cancels in a comparison of two figures, as the noise
// assumes; returns their noise, read_noise()'s, which pairs the patterns'
// figures round by round.
//
// With `disturbances` (direct reads: calibrate() passes whether it read
// so), timings the layout's own spread cannot account for are set aside
// first: a pattern disturbed in one round, by a stall of the storage or of
// the machine.  With three rounds or more, the timing whose externally
// studentized residual in the two-way layout of patterns and rounds is the
// largest (its residual over the spread of the others', Student's t with
// the residual's degrees of freedom less one, taken with a cell's leverage
// in the whole layout, which understates it once one is set aside, and
// the test with it), while that exceeds Student's t quantile at
// kDisturbedAlpha / 2 over the timings still counted (Bonferroni:
// undisturbed normal timings lose one in at most kDisturbedAlpha of
// densities), while its pattern and its round each keep two timings
// besides it, and while three degrees of freedom or more are left; each
// replaced by what the layout of the others predicts for it (least
// squares), the test redone without it.  Then the noise has one degree of
// freedom less for each, and is raised by Student's t quantile at the
// degrees left over that at all (the noise is judged at all of them,
// CalibrationCosts::noise_dof, by one_sided_95(): t_quantile(0.05,
// noise_dof)).  *set_aside (if given): how many.
//
// Without `disturbances` (buffered reads), a pattern's timing also depends
// on whether the kernel's readahead got ahead of its reads, which changes
// from round to round, and a timing far from the others may be the
// pattern's other way of going, which VACUUM meets as well, not a
// disturbance.  The two differ in what the device did: a disturbance
// keeps the requests and takes longer; the other way of going asks the
// device for other requests.  So where `requests` gives the device's read
// requests of each timing (the same layout as `samples`; nullptr: not
// counted, and nothing is set aside), with three rounds or more and every
// count above 0, timings are set aside as with `disturbances`, but not one
// whose requests the layout of the others' requests (in the logarithms,
// the same two-way layout) cannot account for: an externally studentized
// residual beyond Student's t quantile at kDisturbedAlpha / 2, each count
// tested alone (no Bonferroni: more count as unusual, and fewer timings
// are set aside).  The device counts every process's reads: another
// process reading while a pattern is timed disturbs it and changes its
// requests, and such a timing is kept, which errs towards 32.  With direct
// reads the requests are not asked: there is no readahead to go another
// way, and a timing far from the others is a disturbance whatever the
// device counted.
//
// `samples` is left as it was (sorted in place, each pattern's rounds would
// no longer be paired with the others': sorting ranks them alike, and the
// spread between patterns the noise measures shrinks to a half, for three
// rounds, and less for more).  At most kGapCount patterns and kMaxRounds
// rounds.
double density_figures(const double *samples, int patterns, int rounds, int stride,
					   double *figures, bool disturbances = false, int *set_aside = nullptr,
					   const double *requests = nullptr);

// The format of the text format_calibration() writes: a record of another
// was measured otherwise and is not read (11: the share of the reading
// spent on a CPU not measured; 10: the patterns dirtied none of
// the pages they read, which VACUUM's ring then writes back; 9: one map
// per density, the same in every round, so that the noise did not show
// how much what a map's layout favours varies from map to map; 8: every
// noise understated, from rounds sorted before they were paired; 7: no
// rate limits).
constexpr int kCalibrationFormat = 12;

// The "version" a stored text says it is of; -1 where it says none.
int calibration_format(const char *text, std::size_t len);

// The text a record is stored as ("key value" lines); returns what
// snprintf returns.
int format_calibration(const CalibrationRecord &r, char *out, std::size_t size);

// Parses format_calibration()'s text; false if any field is missing or
// malformed, or the figures are not a valid calibration.
bool parse_calibration(const char *text, std::size_t len, CalibrationRecord *out);

const char *io_method_name(IoMethod m);   // "sync", "worker", ...; "none"

// The reverse: the IoMethod named so; null (a server without io_method) or
// "none" is kNone, a name vacskip does not know kOther.
IoMethod io_method_of(const char *name);

}  // namespace vacskip

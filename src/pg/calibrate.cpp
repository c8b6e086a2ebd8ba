// vacskip.calibrate(): measure what VACUUM's reads cost on the storage under
// a tablespace, through this server's own read path, and keep the result
// (calibration_store.cpp) for the autotuner.
//
// Three scratch tables are created in the tablespace, used and dropped in
// the caller's transaction (an error or a crash leaves nothing a later
// calibration depends on):
//
//   * an I/O table of kIoPages pages, written once past shared buffers,
//     made durable and written back; before every timed pattern its
//     buffers are dropped and, for buffered I/O, its file is evicted from
//     the kernel's page cache.
//     Patterns: for each density of kDensities, a pseudo-random map in
//     which that share of the pages must be read (each round its own),
//     and for each threshold of kGaps, the pages a VACUUM with that
//     threshold reads on that map (those pages, and every run between
//     two of them shorter than the threshold), read as VACUUM reads:
//     from 18 on a read stream with READ_STREAM_MAINTENANCE and a vacuum
//     buffer strategy (merging up to io_combine_limit,
//     maintenance_io_concurrency reads in flight, io_method's workers),
//     before 18 one ReadBuffer at a time (kernel readahead), timed per
//     page that must be read, and the share of its time the backend
//     spent on a CPU (its thread's CPU time), which no nap of VACUUM's
//     cost-based delay can hide.  Each page a pattern must read is dirtied
//     and WAL-logged as VACUUM changes it, and the pattern starts with
//     its ring as a VACUUM's is in the midst of a table, holding pages the
//     same share of which are dirty (the third table's), so that its reads
//     write them back as VACUUM's do.  A pattern reads up to the map's
//     kMaxNeeded-th page to read; with buffered reads first the table's
//     first vacskip::kStartPages pages, where the kernel's readahead
//     settles on the file just opened, timed apart, then up to the
//     kMaxNeeded-th page to read after them and at least as many pages
//     again (what readahead fetched ahead during the first part must not
//     make up most of the rest).  With direct reads (no kernel
//     readahead) one figure serves both parts.  Rounds read every
//     pattern, a density's patterns together, the densities and the
//     thresholds within each in an order rotating by round, until the
//     time is up; each figure is the median over the rounds with each
//     round's level taken out (density_figures()), a figure of the
//     density and not of one of its maps; the first round, aiming at a
//     share of the time that leaves room for kMinRounds, decides up to
//     how many pages that must be read each pattern reads in all of
//     them.  Before the rounds the storage is probed for rate limits
//     (requests and bytes a second, as blk-throttle or a cloud volume
//     impose them); where it has them, no part of a pattern counts as
//     faster than its reads, as the device counted them, take at those
//     rates.  Where the kernel counts the reads of the device under the
//     table, the requests each part of each pattern asked of it are
//     counted too: with buffered reads they tell a stall from the
//     readahead's other way of going (density_figures()).
//   * an unlogged table of as many pages as the vacuum ring holds, whose
//     pages fill the ring before each pattern (fill_ring());
//   * a CPU table of frozen tuples at two densities, in shared buffers:
//     what VACUUM's first pass does with an all-frozen page it reads
//     (heap_page_prune_and_freeze() on 18; on 15 heap_page_prune() and the
//     visibility and freeze checks lazy_scan_prune() makes per tuple),
//     timed per page; the two densities separate a fixed part per page from
//     a part per tuple.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../core/calibration.hpp"
#include "guard.hpp"
#include "module.hpp"
#include "calibration_store.hpp"
#include "inputs.hpp"
#include "sql.hpp"

namespace {

// The I/O table, and the patterns read from it: kDensities x kGaps.
constexpr BlockNumber kIoPages = 16384;
constexpr int kPatterns = vacskip::kDensityCount * vacskip::kGapCount;
constexpr int kSampleKinds = vacskip::pg::kCalibrateSampleKinds;
constexpr int kMinNeeded = 16;                      // after the first part, first round
constexpr int kMaxNeeded = 256;                     // after the first part, at most
// The rounds a calibration's first round leaves time for: a noise needs two
// (5 degrees of freedom, Student's t 2.015); three give it 10 (1.812), and
// a fourth would lower the quantile by 3 % more (1.753) while every round
// read less of each pattern.  Half a round more is left over, so that the
// last of them does not fail for running a little slower than the first.
constexpr int kMinRounds = 3;
constexpr double kRoundsLeftFor = kMinRounds + 0.5;
// A pattern's block list: the high bit marks a page that must be read.
constexpr uint32 kNeededBit = 0x80000000u;

// The CPU table: kCpuPages pages of each density.
constexpr BlockNumber kCpuPages = 32;
constexpr int kWideBytes = 1900;    // 4 per page, below TOAST_TUPLE_THRESHOLD
constexpr int kCpuPasses = 15;

// calibrate()'s bounds on `seconds`.
constexpr double kMaxSeconds = 3600;

// One cluster-wide advisory lock: calibrations take turns, so that none
// measures another's I/O.  ("vacs", "kip!")
constexpr uint32 kLockKey1 = 0x76616373;
constexpr uint32 kLockKey2 = 0x6b697021;

double
elapsed_us(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MICROSEC(now);
}

// Run SQL through SPI (CREATE / DROP of the scratch tables).
void
run_sql(const char *sql)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "vacskip: SPI_connect failed");
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "vacskip: could not run \"%s\"", sql);
	SPI_finish();
}

// Create a scratch table in tablespace `spcname` and open it.
Relation
create_scratch(const char *schema, const char *name, const char *columns,
			   const char *spcname, bool unlogged = false)
{
	char		sql[1024];

	snprintf(sql, sizeof(sql),
			 "CREATE %sTABLE %s.%s (%s) WITH (autovacuum_enabled = off) TABLESPACE %s",
			 unlogged ? "UNLOGGED " : "", quote_identifier(schema),
			 quote_identifier(name), columns, quote_identifier(spcname));
	run_sql(sql);
	CommandCounterIncrement();
	const Oid	relid = get_relname_relid(name, get_namespace_oid(schema, false));

	return table_open(relid, AccessExclusiveLock);
}

void
drop_scratch(Relation rel)
{
	char		sql[1024];
	const char *schema = get_namespace_name(RelationGetNamespace(rel));
	const char *name = pstrdup(RelationGetRelationName(rel));

	table_close(rel, NoLock);
	snprintf(sql, sizeof(sql), "DROP TABLE %s.%s", quote_identifier(schema),
			 quote_identifier(name));
	run_sql(sql);
}

// ---------------------------------------------------------------- I/O

// Whether block `blk` must be read on round `round`'s map of density `d`:
// a hash of the three against the density (each round its own map, and
// round r's maps the same in every calibration).
bool
needed_on_map(int d, int round, BlockNumber blk)
{
	uint64		x = (static_cast<uint64>(round) << 40 | static_cast<uint64>(d) << 32 | blk) +
		0x9E3779B97F4A7C15ull;

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	x ^= x >> 31;
	return static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0) < vacskip::kDensities[d];
}

// Pattern k = d * kGapCount + t of round `round`: into `blocks` (kIoPages
// entries), the blocks a VACUUM with threshold kGaps[t] reads on that
// round's map d, in order, those that must be read marked; up to the
// `max_needed`-th page that must be read, counted from block `from` on,
// and at least to block 2 * from.  Returns how many.
int
pattern_blocks(int k, int round, BlockNumber from, int max_needed, uint32 *blocks)
{
	const int	d = k / vacskip::kGapCount;
	const BlockNumber threshold = vacskip::kGaps[k % vacskip::kGapCount];
	BlockNumber prev = InvalidBlockNumber;
	int			n = 0;
	int			needed = 0;

	for (BlockNumber blk = 0; blk < kIoPages; blk++)
	{
		if (!needed_on_map(d, round, blk))
			continue;
		/* the run since the previous page to read: read through if short */
		if (prev != InvalidBlockNumber && blk - prev - 1 < threshold)
			for (BlockNumber b = prev + 1; b < blk; b++)
				blocks[n++] = b;
		blocks[n++] = blk | kNeededBit;
		prev = blk;
		if (blk >= from && ++needed >= max_needed && blk >= 2 * from)
			break;
	}
	return n;
}

// A valid page without tuples that holds pseudo-random bytes (from the
// state *x), and no hole: an image of it in the WAL is whole, as one of a
// heap page full of tuples is (dirty_page()).
void
random_page(Page page, uint64 *x)
{
	PageInit(page, BLCKSZ, 0);
	((PageHeader) page)->pd_upper = ((PageHeader) page)->pd_lower;
	for (size_t off = MAXALIGN(SizeOfPageHeaderData); off + 8 <= BLCKSZ; off += 8)
	{
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		memcpy(static_cast<char *>(page) + off, x, 8);
	}
}

// `pages` valid pages without tuples that hold pseudo-random bytes
// (storage that compresses or deduplicates must not find them cheap),
// written past shared buffers and made durable.
void
fill_io_table(Relation rel, BlockNumber pages)
{
#if PG_VERSION_NUM >= 160000
	PGIOAlignedBlock buf;
#else
	PGAlignedBlock buf;
#endif
	SMgrRelation smgr = RelationGetSmgr(rel);
	uint64		x = 0x9E3779B97F4A7C15ull ^ (uint64) MyProcPid;

	for (BlockNumber blk = 0; blk < pages; blk++)
	{
		Page		page = (Page) buf.data;

		random_page(page, &x);
		PageSetChecksumInplace(page, blk);
		smgrextend(smgr, MAIN_FORKNUM, blk, buf.data, true);
		CHECK_FOR_INTERRUPTS();
	}
	smgrimmedsync(smgr, MAIN_FORKNUM);
}

// The path of `rel`'s main fork (its first segment), palloc'd.
char *
main_fork_path(Relation rel)
{
#if PG_VERSION_NUM >= 180000
	return pstrdup(relpathperm(rel->rd_locator, MAIN_FORKNUM).str);
#elif PG_VERSION_NUM >= 160000
	return relpathperm(rel->rd_locator, MAIN_FORKNUM);
#else
	return relpathperm(rel->rd_node, MAIN_FORKNUM);
#endif
}

// Shared buffers hold none of `rel`'s main fork: its buffers are dropped,
// dirty or not, unwritten.
void
drop_buffers(Relation rel)
{
	ForkNumber	fork = MAIN_FORKNUM;
	BlockNumber first = 0;

#if PG_VERSION_NUM >= 160000
	DropRelationBuffers(RelationGetSmgr(rel), &fork, 1, &first);
#else
	DropRelFileNodeBuffers(RelationGetSmgr(rel), &fork, 1, &first);
#endif
}

// Neither shared buffers nor (for buffered I/O) the kernel hold the table,
// and this backend's next read of it opens its file again.
void
evict(Relation rel)
{
	SMgrRelation smgr = RelationGetSmgr(rel);

	drop_buffers(rel);
	char	   *path = main_fork_path(rel);
	const int	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);

	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	/*
	 * The kernel drops only clean pages: write them back first.  With fsync
	 * = off, smgrimmedsync() after writing the table did not, and the
	 * first rounds would read the table from the page cache.
	 */
	(void) fdatasync(fd);
	(void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	CloseTransientFile(fd);
	pfree(path);
	/* and read through new descriptors: the kernel's readahead starts anew */
	smgrrelease(smgr);
}

// Storage behind a rate limit (blk-throttle and cgroup io.max, a cloud
// volume's IOPS and throughput limits) lets reads through faster than it
// sustains them and then holds them back: blk-throttle, for one, passes a
// tenth of a second's allowance at once at the start of each tenth.  A
// pattern reads for a few milliseconds to a tenth of a second, so where
// its reads fall in that cycle decides its figure, while a VACUUM long
// enough for its threshold to matter reads at the rate sustained.  So the
// storage is probed once for such limits, by requests (pages at
// pseudo-random places) and by bytes (large sequential reads), each after a
// pause, through a descriptor of its own with direct I/O (neither shared
// buffers nor the page cache nor the patterns' readahead see them); where
// one is found, each part of a pattern is counted as taking at least the
// time its reads take at the limits' rates, its reads counted by the
// device (/sys/dev/block/MAJ:MIN/stat: every read it completed, the
// kernel's readahead and io_method's workers' included; requests as they
// were asked for, those merged into another counted, as a limit on the
// block layer counts them).
// Four probes, each after a pause half as long as it, take at most 15 % of
// calibrate()'s seconds: 0.5 s each (five of blk-throttle's slices) from
// 20 s on, less with less.
constexpr int kProbeReads = 4096;
constexpr double kProbeUs = 500000;
constexpr double kProbeShare = 0.15 / 6;
constexpr size_t kLargeRead = 1024 * 1024;
// The buffer's alignment for direct I/O (PG_IO_ALIGN_SIZE from 16 on).
constexpr uintptr_t kDirectAlign = 4096;

// Reads the device under the I/O table completed: requests and bytes;
// `valid` once read from its stat file.
struct DeviceReads
{
	double		requests = 0;
	double		bytes = 0;
	bool		valid = false;
};

// The device under the I/O table, as far as its reads can be counted, and
// its rate limits.
struct Limits
{
	int			stat_fd = -1;       // the device's stat file; -1: not counted
	const vacskip::CalibrationRecord *rec = nullptr;   // nullptr: no limits
};

DeviceReads
device_reads(const Limits *l)
{
	DeviceReads out;
	char		buf[512];
	unsigned long long ios, merges, sectors;

	if (l->stat_fd < 0)
		return out;
	const ssize_t n = pread(l->stat_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return out;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu %llu", &ios, &merges, &sectors) != 3)
		return out;
	out.requests = static_cast<double>(ios + merges);  /* as asked, before merging */
	out.bytes = static_cast<double>(sectors) * 512;    /* always 512-byte units */
	out.valid = true;
	return out;
}

// The least time the device's reads between two counts take under the
// limits; 0 where either count failed.
double
limited_between(const Limits *l, const DeviceReads &from, const DeviceReads &to)
{
	if (l->rec == nullptr || !from.valid || !to.valid)
		return 0;
	return vacskip::limited_us(*l->rec, to.requests - from.requests, to.bytes - from.bytes);
}

// A pseudo-random offset, aligned to a page, for a read of `size` bytes.
off_t
random_offset(uint64 *x, size_t size)
{
	const uint64 pages = kIoPages - size / BLCKSZ + 1;

	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return static_cast<off_t>(*x % pages) * BLCKSZ;
}

// Both series of a kind read the same pages: under a limit their rates
// agree even where the second finds them cached in the device or its host,
// which storage without a limit shows as a change of rate.
//
// Reads of `size` bytes through `fd`, one after another, for at most
// `probe_us` after a pause half as long: sequential ones where `bytes`
// (up to the table's end, kIoPages pages), pages at pseudo-random places
// otherwise (at most kProbeReads); what find_rate_limit() makes of them,
// counting bytes or requests.  Nothing found where a read fails.
vacskip::RateLimit
probe(int fd, char *buf, size_t size, bool bytes, double min_ahead, double probe_us)
{
	double	   *t = static_cast<double *>(palloc(sizeof(double) * kProbeReads));
	double	   *amount = static_cast<double *>(palloc(sizeof(double) * kProbeReads));
	uint64		x = 0x2545F4914F6CDD1Dull;
	instr_time	start;
	int			n = 0;

	pg_usleep(static_cast<long>(probe_us / 2));
	INSTR_TIME_SET_CURRENT(start);
	while (n < kProbeReads)
	{
		const off_t off = bytes ? static_cast<off_t>(n) * size : random_offset(&x, size);

		if (off + static_cast<off_t>(size) > static_cast<off_t>(kIoPages) * BLCKSZ)
			break;
		if (pg_pread(fd, buf, size, off) != static_cast<ssize_t>(size))
		{
			n = 0;              /* nothing found */
			break;
		}
		t[n] = elapsed_us(start);
		amount[n] = bytes ? static_cast<double>(n + 1) * size : n + 1;
		n++;
		if (t[n - 1] >= probe_us)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	const vacskip::RateLimit l = vacskip::find_rate_limit(t, amount, n, min_ahead);

	pfree(t);
	pfree(amount);
	return l;
}

// The device's stat file of the storage under `rel`, open, where its reads
// can be counted; -1 otherwise.
int
open_device_counts(Relation rel)
{
	struct stat st;
	char		stat_path[64];

	if (stat(main_fork_path(rel), &st) != 0)
		return -1;
	snprintf(stat_path, sizeof(stat_path), "/sys/dev/block/%u:%u/stat",
			 major(st.st_dev), minor(st.st_dev));
	const int	stat_fd = OpenTransientFile(stat_path, O_RDONLY);
	Limits		probe = {stat_fd, nullptr};

	if (stat_fd >= 0 && !device_reads(&probe).valid)
	{
		CloseTransientFile(stat_fd);
		return -1;
	}
	return stat_fd;
}

// Probe the storage under `rel` for rate limits: fills rec's limits and,
// where one is found and the device's reads are counted (limits->stat_fd),
// limits->rec.  A gain on the rate counts where it would change a
// pattern's figure: kMinNeeded pages' requests or bytes (a pattern times
// at least that many pages to read).
void
probe_limits(Relation rel, double seconds, vacskip::CalibrationRecord *rec, Limits *limits)
{
	if (PG_O_DIRECT == 0 || limits->stat_fd < 0)
		return;                 /* no counts of the device: no limits */
	const int	fd = OpenTransientFile(main_fork_path(rel), O_RDONLY | PG_BINARY | PG_O_DIRECT);

	if (fd < 0)
		return;                 /* no direct I/O here */
	char	   *raw = static_cast<char *>(palloc(kLargeRead + kDirectAlign));
	char	   *buf = reinterpret_cast<char *>(TYPEALIGN(kDirectAlign, raw));
	vacskip::RateLimit requests[2], bytes[2];
	const double probe_us = std::min(kProbeUs, seconds * 1e6 * kProbeShare);

	for (int i = 0; i < 2; i++)
	{
		requests[i] = probe(fd, buf, BLCKSZ, false, kMinNeeded, probe_us);
		bytes[i] = probe(fd, buf, kLargeRead, true, kMinNeeded * static_cast<double>(BLCKSZ),
						 probe_us);
	}
	CloseTransientFile(fd);
	pfree(raw);
	rec->limit_requests = vacskip::repeated_limit(requests[0], requests[1]);
	rec->limit_bytes = vacskip::repeated_limit(bytes[0], bytes[1]);
	if (rec->limit_requests > 0 || rec->limit_bytes > 0)
		limits->rec = rec;
	else
		rec->limit_requests = rec->limit_bytes = 0;
}

// One pattern being read: its blocks, how many were handed out and how
// many of those must be read, and how many of them lie before `split` (the
// first part, read whole; 0: one part).  It stops handing out at
// `deadline_us` after `start`, once past kMinNeeded pages that must be read
// after the first part and as many pages again as that part (what
// readahead fetched ahead during the first part must not make up most of
// the rest), at a page that must be read.
struct Pattern
{
	const uint32 *blocks;
	int			count;
	int			issued;
	int			needed;
	BlockNumber split;
	int			first_needed;
	instr_time	start;
	double		deadline_us;
};

bool
pattern_more(const Pattern *p)
{
	if (p->issued >= p->count)
		return false;
	if ((p->blocks[p->issued] & ~kNeededBit) < 2 * p->split)
		return true;
	/* a run read through is timed with the page to read that ends it */
	if (p->issued > 0 && (p->blocks[p->issued - 1] & kNeededBit) == 0)
		return true;
	return p->needed - p->first_needed < kMinNeeded || elapsed_us(p->start) < p->deadline_us;
}

BlockNumber
pattern_take(Pattern *p)
{
	const uint32 b = p->blocks[p->issued++];

	p->needed += (b & kNeededBit) != 0;
	return b & ~kNeededBit;
}

// VACUUM changes every page it must read (prunes or freezes it, or at
// least marks it all-visible) and WAL-logs the change, and its buffer ring
// writes the page back when it comes round to the buffer again, flushing
// the WAL up to the page's LSN first: the more pages a threshold reads,
// the more often the ring turns, and with io_method's workers the read
// stream starts no read while the backend writes.  So a pattern marks
// each page it must read dirty with a generic WAL record (whole only on
// its first change after a checkpoint, as VACUUM's records are; the page
// itself stays as it was).
void
dirty_page(Relation rel, Buffer buf)
{
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	GenericXLogState *state = GenericXLogStart(rel);

	(void) GenericXLogRegisterBuffer(state, buf, 0);
	(void) GenericXLogFinish(state);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
}

// How many buffers a vacuum ring holds (none: no ring), up to kIoPages.
int
ring_buffers(BufferAccessStrategy strategy)
{
	if (strategy == nullptr)
		return 0;
#if PG_VERSION_NUM >= 160000
	return std::min<int>(GetAccessStrategyBufferCount(strategy), kIoPages);
#else
	return 256 * 1024 / BLCKSZ;		// GetAccessStrategy(BAS_VACUUM)'s
#endif
}

// Every page VACUUM dirties is written once whatever its threshold, by its
// ring when the ring comes round to its buffer again: in the midst of a
// table the ring holds the last pages VACUUM read, a share of them
// dirtied, and each page read takes the place of one of them, writing it
// if dirty.  A pattern reads a few hundred pages where VACUUM reads a
// table, so before it is timed the ring is left as it would be there:
// each buffer holds a page of `fill` (an unlogged table of `ring` pages,
// taken with no I/O), the share `dirty` of them dirtied with pseudo-random
// bytes, spread evenly.  The pattern's reads then write them back as
// VACUUM's reads write the pages it dirtied, and what the ring holds dirty
// when the pattern ends is dropped unwritten (evict()), as VACUUM's time
// leaves it out.  (Unlogged: writing one flushes no WAL first, where
// VACUUM's ring flushes the WAL up to the page's change, about once a
// ring's worth of pages.  A ring of more than kIoPages buffers is filled
// up to kIoPages.)
void
fill_ring(Relation fill, BufferAccessStrategy strategy, int ring, double dirty)
{
	double		owed = 0;
	uint64		x = 0x2545F4914F6CDD1Dull ^ (uint64) MyProcPid;

	// none in shared buffers, so that each read takes one of the ring's
	// buffers
	drop_buffers(fill);
	for (int i = 0; i < ring; i++)
	{
		Buffer		buf = ReadBufferExtended(fill, MAIN_FORKNUM, i, RBM_ZERO_AND_LOCK,
											 strategy);

		owed += dirty;
		if (owed >= 1)
		{
			Page		page = BufferGetPage(buf);

			owed -= 1;
			random_page(page, &x);
			MarkBufferDirty(buf);
		}
		UnlockReleaseBuffer(buf);
	}
}

#if PG_VERSION_NUM >= 180000
BlockNumber
pattern_next(ReadStream *stream, void *private_data, void *per_buffer_data)
{
	Pattern    *p = static_cast<Pattern *>(private_data);

	(void) stream;
	(void) per_buffer_data;
	return pattern_more(p) ? pattern_take(p) : InvalidBlockNumber;
}
#endif

// What one pattern took, in the part before `split` and after it, per page
// that must be read: microseconds, and read requests the device completed
// (as asked, before merging; NaN where they are not counted).  With split
// 0 the whole pattern's figures, both.
struct PatternTook
{
	double		first_us;
	double		rest_us;
	double		first_requests;
	double		rest_requests;
	double		cpu_share;		// of the whole pattern's time, on a CPU
};

// The time this backend has spent on a CPU, in microseconds; NaN where
// the clock cannot be read.
double
cpu_us()
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return std::nan("");
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

// Requests between two counts of the device; NaN where either failed.
double
requests_between(const DeviceReads &from, const DeviceReads &to)
{
	return from.valid && to.valid ? to.requests - from.requests : std::nan("");
}

// Time one pattern (*took).  Returns how many of its `count` blocks it read
// before the deadline.
int
time_pattern(Relation rel, BufferAccessStrategy strategy, const uint32 *blocks, int count,
			 BlockNumber split, double deadline_us, const Limits *limits, PatternTook *took)
{
	Pattern		p = {blocks, count, 0, 0, split, 0, {}, deadline_us};
	const double cpu_at_start = cpu_us();
	double		split_us = -1;
	const DeviceReads at_start = device_reads(limits);
	DeviceReads at_split;

	int			first_blocks = 0;
	int			returned = 0;

	for (int i = 0; i < count && (blocks[i] & ~kNeededBit) < split; i++)
	{
		first_blocks++;
		p.first_needed += (blocks[i] & kNeededBit) != 0;
	}
	INSTR_TIME_SET_CURRENT(p.start);
#if PG_VERSION_NUM >= 180000
	ReadStream *stream = read_stream_begin_relation(READ_STREAM_MAINTENANCE, strategy, rel,
													MAIN_FORKNUM, pattern_next, &p, 0);
	Buffer		buf;

	// the first part ends once its last page is in hand (the stream may
	// have the next part's reads in flight by then)
	while ((buf = read_stream_next_buffer(stream, nullptr)) != InvalidBuffer)
	{
		if (blocks[returned] & kNeededBit)
			dirty_page(rel, buf);
		ReleaseBuffer(buf);
		if (++returned == first_blocks)
		{
			split_us = elapsed_us(p.start);
			at_split = device_reads(limits);
		}
		CHECK_FOR_INTERRUPTS();
	}
	read_stream_end(stream);
#else
	while (pattern_more(&p))
	{
		const bool	needed = (p.blocks[p.issued] & kNeededBit) != 0;
		const BlockNumber blk = pattern_take(&p);
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, strategy);

		if (needed)
			dirty_page(rel, buf);
		ReleaseBuffer(buf);
		if (++returned == first_blocks)
		{
			split_us = elapsed_us(p.start);
			at_split = device_reads(limits);
		}
		CHECK_FOR_INTERRUPTS();
	}
#endif
	const double total_us = elapsed_us(p.start);

	const double share = (cpu_us() - cpu_at_start) / total_us;

	// where the clock cannot be read, none (all of the reading waiting)
	took->cpu_share = std::isfinite(share) ? std::clamp(share, 0.0, 1.0) : 0.0;
	const DeviceReads at_end = device_reads(limits);
	const int	rest_needed = p.needed - p.first_needed;

	Assert(p.needed > 0);
	// under a rate limit, no part takes less than its reads at its rates
	if (split == 0 || p.first_needed == 0 || rest_needed == 0 || split_us < 0)
	{
		took->first_us = took->rest_us =
			std::max(total_us, limited_between(limits, at_start, at_end)) / p.needed;
		took->first_requests = took->rest_requests =
			requests_between(at_start, at_end) / p.needed;
		return p.issued;
	}
	took->first_us = std::max(split_us, limited_between(limits, at_start, at_split)) /
		p.first_needed;
	took->rest_us = std::max(total_us - split_us, limited_between(limits, at_split, at_end)) /
		rest_needed;
	took->first_requests = requests_between(at_start, at_split) / p.first_needed;
	took->rest_requests = requests_between(at_split, at_end) / rest_needed;
	return p.issued;
}

// ---------------------------------------------------------------- CPU

// `pages` pages of frozen tuples: `wide` ones (kWideBytes of text, 4 per
// page) or narrow ones (one int, the most a page holds).
void
fill_cpu_pages(Relation rel, bool wide)
{
	TupleDesc	desc = RelationGetDescr(rel);
	const BlockNumber first = RelationGetNumberOfBlocks(rel);
	char	   *pad = static_cast<char *>(palloc(kWideBytes + 1));
	Datum		values[2];
	bool		nulls[2] = {false, !wide};
	const CommandId cid = GetCurrentCommandId(true);

	memset(pad, 'v', kWideBytes);
	pad[kWideBytes] = '\0';
	values[1] = CStringGetTextDatum(pad);
	for (int32 i = 0; RelationGetNumberOfBlocks(rel) < first + kCpuPages; i++)
	{
		values[0] = Int32GetDatum(i);
		HeapTuple	tup = heap_form_tuple(desc, values, nulls);

		heap_insert(rel, tup, cid, HEAP_INSERT_FROZEN, nullptr);
		heap_freetuple(tup);
		if (i % 1024 == 0)
			CHECK_FOR_INTERRUPTS();
	}
}

// What VACUUM's first pass does with one all-frozen page it reads.
void
vacuum_page_work(Relation rel, Buffer buf, GlobalVisState *vistest
#if PG_VERSION_NUM >= 180000
				 , struct VacuumCutoffs *cutoffs
#else
				 , TransactionId oldest_xmin, TransactionId freeze_limit,
				 MultiXactId multi_cutoff
#endif
	)
{
	OffsetNumber off_loc = InvalidOffsetNumber;

#if PG_VERSION_NUM >= 180000
	PruneFreezeResult presult;
	TransactionId new_frozen = cutoffs->OldestXmin;
	MultiXactId new_minmxid = cutoffs->OldestMxact;

	heap_page_prune_and_freeze(rel, buf, vistest, HEAP_PAGE_PRUNE_FREEZE, cutoffs,
							   &presult, PRUNE_VACUUM_SCAN, &off_loc, &new_frozen,
							   &new_minmxid);
#else
	int			nnewlpdead;
	Page		page = BufferGetPage(buf);
	TransactionId new_frozen = oldest_xmin;
	MultiXactId new_minmxid = multi_cutoff;

	(void) heap_page_prune(rel, buf, oldest_xmin, vistest, InvalidTransactionId, 0,
						   &nnewlpdead, &off_loc);
	const OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
	{
		ItemId		itemid = PageGetItemId(page, off);
		HeapTupleData tuple;
		xl_heap_freeze_tuple frz;
		bool		totally_frozen;

		if (!ItemIdIsNormal(itemid))
			continue;
		ItemPointerSet(&tuple.t_self, BufferGetBlockNumber(buf), off);
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, itemid);
		tuple.t_len = ItemIdGetLength(itemid);
		tuple.t_tableOid = RelationGetRelid(rel);
		(void) HeapTupleSatisfiesVacuum(&tuple, oldest_xmin, buf);
		(void) heap_prepare_freeze_tuple(tuple.t_data, rel->rd_rel->relfrozenxid,
										 rel->rd_rel->relminmxid, freeze_limit,
										 multi_cutoff, &frz, &totally_frozen,
										 &new_frozen, &new_minmxid);
	}
#endif
}

// Median microseconds per page of vacuum_page_work() over `count` cached
// pages from `first`.
double
time_cpu_pages(Relation rel, BlockNumber first, BlockNumber count)
{
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	double		per_page[kCpuPasses];

#if PG_VERSION_NUM >= 180000
	VacuumParams params;
	struct VacuumCutoffs cutoffs;

	memset(&params, 0, sizeof(params));
	params.freeze_min_age = params.freeze_table_age = -1;
	params.multixact_freeze_min_age = params.multixact_freeze_table_age = -1;
	(void) vacuum_get_cutoffs(rel, &params, &cutoffs);
#else
	TransactionId oldest_xmin, freeze_limit;
	MultiXactId oldest_mxact, multi_cutoff;

	(void) vacuum_set_xid_limits(rel, -1, -1, -1, -1, &oldest_xmin, &oldest_mxact,
								 &freeze_limit, &multi_cutoff);
#endif
	Buffer		vmbuffer = InvalidBuffer;

	for (int pass = 0; pass < kCpuPasses; pass++)
	{
		instr_time	start;

		INSTR_TIME_SET_CURRENT(start);
		for (BlockNumber blk = first; blk < first + count; blk++)
		{
			Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, nullptr);

			/* what lazy_scan_heap() does around pruning: the map, the FSM */
			visibilitymap_pin(rel, blk, &vmbuffer);
			(void) visibilitymap_get_status(rel, blk, &vmbuffer);
			LockBufferForCleanup(buf);
#if PG_VERSION_NUM >= 180000
			vacuum_page_work(rel, buf, vistest, &cutoffs);
#else
			vacuum_page_work(rel, buf, vistest, oldest_xmin, freeze_limit, multi_cutoff);
#endif
			const Size	freespace = PageGetHeapFreeSpace(BufferGetPage(buf));

			UnlockReleaseBuffer(buf);
			RecordPageWithFreeSpace(rel, blk, freespace);
		}
		per_page[pass] = elapsed_us(start) / count;
		CHECK_FOR_INTERRUPTS();
	}
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	return vacskip::median_in_place(per_page, kCpuPasses);
}

// Tuples per page of the CPU table's pages [first, first + count).
double
tuples_per_page(Relation rel, BlockNumber first, BlockNumber count)
{
	double		tuples = 0;

	for (BlockNumber blk = first; blk < first + count; blk++)
	{
		Buffer		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blk, RBM_NORMAL, nullptr);

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		tuples += PageGetMaxOffsetNumber(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
	}
	return tuples / count;
}

// ---------------------------------------------------------------- the function

void
check_arguments(const char *spcname, Oid *spcoid, double seconds)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to calibrate storage"),
				 errdetail("vacskip.calibrate() reads and writes on the server's disks; "
						   "only superusers may run it.")));
	if (std::isnan(seconds) || seconds <= 0 || seconds > kMaxSeconds)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seconds must be greater than 0 and at most %g, not %g",
						kMaxSeconds, seconds)));
	*spcoid = get_tablespace_oid(spcname, false);
	if (*spcoid == GLOBALTABLESPACE_OID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot calibrate tablespace \"%s\"", spcname),
				 errdetail("It holds only shared catalogs, which VACUUM reads without "
						   "vacskip's thresholds mattering.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot calibrate during recovery"),
				 errdetail("Calibration writes a scratch table.")));
}

void
lock_calibrations()
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, InvalidOid, kLockKey1, kLockKey2, 2);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

// The I/O path VACUUM's reads take now for tables in `spcoid`.
void
current_path(Oid spcoid, vacskip::CalibrationRecord *rec)
{
	vacskip::StorageInputs now;

	vacskip::pg::read_storage_of(spcoid, &now);
	rec->server_major = now.server_major;
	rec->direct_io = now.direct_io;
	rec->io_method = now.io_method;
	rec->io_workers = now.io_workers;
	rec->maintenance_io_concurrency = now.maintenance_io_concurrency;
	rec->io_combine_limit = now.io_combine_limit;
	rec->read_ahead_kb = now.direct_io ? -1 : vacskip::pg::read_ahead_kb_of(spcoid);
	rec->directory = vacskip::pg::place_of_tablespace(spcoid);
}

// The measurement; fills rec->costs and rec->rounds, and returns each
// round's figures (pattern k's of round r at [k * kMaxRounds + r], of its
// first part at [(kPatterns + k) * kMaxRounds + r]).
double *
measure(Relation io, Relation cpu, Relation fill, double seconds, instr_time start,
		vacskip::CalibrationRecord *rec)
{
	// CPU: narrow tuples first, then wide ones, both in shared buffers
	fill_cpu_pages(cpu, false);
	fill_cpu_pages(cpu, true);
	const double narrow_tpp = tuples_per_page(cpu, 0, kCpuPages);
	const double wide_tpp = tuples_per_page(cpu, kCpuPages, kCpuPages);
	const double narrow_us = time_cpu_pages(cpu, 0, kCpuPages);
	const double wide_us = time_cpu_pages(cpu, kCpuPages, kCpuPages);
	const double per_tuple = std::max((narrow_us - wide_us) / (narrow_tpp - wide_tpp), 0.0);

	rec->costs.cpu_tuple_us = per_tuple;
	rec->costs.cpu_page_us = std::max(wide_us - per_tuple * wide_tpp, 0.0);

	// I/O: rounds of every pattern, the order rotating, until time is up
#if PG_VERSION_NUM >= 160000
	BufferAccessStrategy strategy = GetAccessStrategyWithSize(BAS_VACUUM,
															  VacuumBufferUsageLimit);
#else
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_VACUUM);
#endif
	// pattern k's figure of round r at samples[k * kMaxRounds + r], of its
	// first part at samples[(kPatterns + k) * kMaxRounds + r]; the
	// requests of the two parts after them, at [(2 * kPatterns + k) *
	// kMaxRounds + r] and [(3 * kPatterns + k) * kMaxRounds + r]; the
	// share of its time on a CPU at [(4 * kPatterns + k) * kMaxRounds + r]
	double	   *samples =
		static_cast<double *>(palloc(sizeof(double) * kSampleKinds * kPatterns *
									 vacskip::kMaxRounds));
	// the pattern being read, and how many pages to read after the first
	// part each pattern reads in every round (the first round decides)
	uint32	   *blocks = static_cast<uint32 *>(palloc(sizeof(uint32) * kIoPages));
	int			extent[kPatterns];
	const double budget_us = seconds * 1e6;
	int			rounds = 0;
	// buffered: the kernel's readahead settles over the first pages of a
	// file (model.hpp, kStartPages); those are timed apart
	const BlockNumber split = rec->direct_io ? 0 : vacskip::kStartPages;

	for (int k = 0; k < kPatterns; k++)
		extent[k] = kMaxNeeded;
	fill_io_table(io, kIoPages);
	const int	ring = ring_buffers(strategy);

	fill_io_table(fill, ring);
	// written back and out of the page cache before the probes: with fsync
	// = off the table is still dirty there, and a direct read of a dirty
	// range writes it first
	evict(io);
	Limits		limits = {open_device_counts(io), nullptr};

	probe_limits(io, seconds, rec, &limits);
	// The first round always completes, aiming at a kRoundsLeftFor-th of
	// the time left, a share of it for each pattern; later rounds read each
	// pattern, on their own maps, to as many pages to read as the first one
	// did (every round measures as much) while time is left, and count only
	// if complete.  Each round reads its own map of each density, so that
	// what one map's layout favours (where readahead or merging happens to
	// serve a threshold's reads) varies between rounds as it does between a
	// table's VACUUMs, and shows in the noise.  With buffered
	// reads every pattern's first 2 * split pages are read whatever the
	// time, most of a round's reads: there the share is a target, and on
	// slow storage the first round takes longer.  So the first round reads
	// the densities from the densest down: the densest hold the most pages
	// to read in that part, and what they take beyond their shares comes
	// off the shares of the patterns after them, which can stop sooner,
	// rather than adding to the round once its time is spent (and with it
	// to every later round, which reads as much).
	const double setup_us = elapsed_us(start);
	const double first_end_us =
		setup_us + std::max(budget_us - setup_us, 0.0) / kRoundsLeftFor;
	double		first_round_us = 0;
	double		round_start_us = setup_us;

	for (bool more = true; more && rounds < vacskip::kMaxRounds; )
	{
		for (int j = 0; j < kPatterns; j++)
		{
			// a density's patterns one after the other, the densities and
			// the thresholds within each in an order that rotates by round
			// (the first round's densities from the densest down)
			const int	d = rounds == 0 ?
				vacskip::kDensityCount - 1 - j / vacskip::kGapCount :
				(j / vacskip::kGapCount + rounds) % vacskip::kDensityCount;
			const int	k = d * vacskip::kGapCount +
				(j % vacskip::kGapCount + rounds) % vacskip::kGapCount;
			const double now_us = elapsed_us(start);

			if (rounds > 0 && now_us >= budget_us)
			{
				more = false;
				break;
			}
			const int	count = pattern_blocks(k, rounds, split, extent[k], blocks);

			evict(io);
			if (ring > 0)
			{
				int			needed = 0;

				for (int i = 0; i < count; i++)
					needed += (blocks[i] & kNeededBit) != 0;
				fill_ring(fill, strategy, ring, static_cast<double>(needed) / count);
			}
			PatternTook took;
			const int	read = time_pattern(
				io, strategy, blocks, count, split,
				rounds == 0 ? std::max(first_end_us - now_us, 0.0) / (kPatterns - j) : 1e300,
				&limits, &took);

			samples[k * vacskip::kMaxRounds + rounds] = took.rest_us;
			samples[(kPatterns + k) * vacskip::kMaxRounds + rounds] = took.first_us;
			samples[(2 * kPatterns + k) * vacskip::kMaxRounds + rounds] = took.rest_requests;
			samples[(3 * kPatterns + k) * vacskip::kMaxRounds + rounds] = took.first_requests;
			samples[(4 * kPatterns + k) * vacskip::kMaxRounds + rounds] = took.cpu_share;

			// cut short by the first round's time: as many pages to read
			// after the first part, on every later round's map
			if (rounds == 0 && read < count)
			{
				extent[k] = 0;
				for (int i = 0; i < read; i++)
					extent[k] += (blocks[i] & kNeededBit) && (blocks[i] & ~kNeededBit) >= split;
			}
		}
		const double round_end_us = elapsed_us(start);

		if (rounds == 0)
			first_round_us = round_end_us - setup_us;
		// how long each round took against the first's aim, for whoever
		// wants to know why a calibration read fewer rounds than it aimed at
		ereport(DEBUG1,
				(errmsg_internal("vacskip.calibrate(): round %d %s in %.2f s, the first round "
								 "aiming at %.2f s",
								 rounds + 1, more ? "read" : "cut short by the time",
								 (round_end_us - round_start_us) / 1e6,
								 (first_end_us - setup_us) / 1e6)));
		round_start_us = round_end_us;
		if (more)
			rounds++;
		more = more && elapsed_us(start) < budget_us;
	}
	// each density's figures, and its noise from its own patterns: a
	// relation's costs are compared at one density
	for (int d = 0; d < vacskip::kDensityCount; d++)
	{
		const double *rest = &samples[d * vacskip::kGapCount * vacskip::kMaxRounds];
		const double *requests = rest + 2 * kPatterns * vacskip::kMaxRounds;

		// timings a disturbance took set aside: with direct reads, and with
		// buffered ones where the device's requests tell them from the
		// readahead's other way of going
		rec->costs.read_noise[d] =
			vacskip::density_figures(rest, vacskip::kGapCount, rounds,
									 vacskip::kMaxRounds, rec->costs.read_us[d],
									 rec->direct_io, nullptr, requests);
		// buffered: a file's first pages timed apart; direct: one figure
		// (time_pattern() gave both parts alike)
		if (split)
			rec->costs.start_read_noise[d] =
				vacskip::density_figures(rest + kPatterns * vacskip::kMaxRounds,
										 vacskip::kGapCount, rounds, vacskip::kMaxRounds,
										 rec->costs.start_read_us[d], false, nullptr,
										 requests + kPatterns * vacskip::kMaxRounds);
		else
		{
			std::copy(rec->costs.read_us[d], rec->costs.read_us[d] + vacskip::kGapCount,
					  rec->costs.start_read_us[d]);
			rec->costs.start_read_noise[d] = rec->costs.read_noise[d];
		}
	}
	// the share on a CPU: each pattern's median over the rounds (from
	// copies: the samples are returned as measured)
	for (int k = 0; k < kPatterns; k++)
	{
		double		shares[vacskip::kMaxRounds];

		std::copy(&samples[(4 * kPatterns + k) * vacskip::kMaxRounds],
				  &samples[(4 * kPatterns + k) * vacskip::kMaxRounds + std::max(rounds, 1)],
				  shares);
		rec->costs.read_cpu_share[k / vacskip::kGapCount][k % vacskip::kGapCount] =
			vacskip::median_in_place(shares, std::max(rounds, 1));
	}
	rec->costs.noise_dof = (vacskip::kGapCount - 1) * (rounds - 1);
	rec->rounds = rounds;
	FreeAccessStrategy(strategy);
	if (limits.stat_fd >= 0)
		CloseTransientFile(limits.stat_fd);
	evict(io);
	// fewer rounds than the first one left time for: say so, and for how
	// long to calibrate on this storage
	if (rounds < kMinRounds)
		ereport(WARNING,
				(errmsg("vacskip.calibrate() read its patterns only %s in %.1f s",
						rounds < 2 ? "once" : "twice", elapsed_us(start) / 1e6),
				 rounds < 2 ?
				 errdetail("One round cannot show how far its figures may be off: with "
						   "this calibration the autotuner keeps PostgreSQL's threshold "
						   "of 32.") :
				 errdetail("Two rounds leave each density's noise 5 degrees of freedom, "
						   "so that a saving must exceed 2.015 times it (1.812 after three "
						   "rounds), and cannot tell a timing a disturbance took from the "
						   "others (that takes three): with this calibration the "
						   "autotuner keeps PostgreSQL's threshold of 32 more often."),
				 errhint("Calibrate for %.0f seconds or more: a round took %.1f s here.",
						 std::min(std::ceil((setup_us + kRoundsLeftFor * first_round_us) / 1e6),
								  kMaxSeconds),
						 first_round_us / 1e6)));
	return samples;
}

}  // namespace

extern "C" {
PG_FUNCTION_INFO_V1(vacskip_calibrate);
PG_FUNCTION_INFO_V1(vacskip_forget_calibration);

Datum
vacskip_calibrate(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		const char *spcname = NameStr(*PG_GETARG_NAME(0));
		const double seconds = PG_GETARG_FLOAT8(1);
		Oid			spcoid;
		instr_time	start;

		check_arguments(spcname, &spcoid, seconds);
		TupleDesc	tupdesc = vacskip::pg::result_tupdesc(fcinfo, vacskip::pg::kCalibrateColumns,
														 "calibrate");

		lock_calibrations();
		INSTR_TIME_SET_CURRENT(start);
		const char *schema = get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid));
		char		name[NAMEDATALEN];

		snprintf(name, sizeof(name), "calibration_%d_io", MyProcPid);
		Relation	io = create_scratch(schema, name, "pad int", spcname);

		snprintf(name, sizeof(name), "calibration_%d_cpu", MyProcPid);
		Relation	cpu = create_scratch(schema, name, "id int, pad text", spcname);

		snprintf(name, sizeof(name), "calibration_%d_ring", MyProcPid);
		Relation	fill = create_scratch(schema, name, "pad int", spcname, true);

		vacskip::CalibrationRecord rec;

		current_path(spcoid, &rec);
		const double *samples = measure(io, cpu, fill, seconds, start, &rec);

		drop_scratch(io);
		drop_scratch(cpu);
		drop_scratch(fill);
		rec.seconds = elapsed_us(start) / 1e6;
		rec.measured_at = static_cast<int64>(time(nullptr));
		strlcpy(rec.tablespace, spcname, sizeof(rec.tablespace));
		vacskip::pg::save_calibration(spcoid, rec);
		return vacskip::pg::calibration_datum(tupdesc, spcoid, rec, samples,
											  vacskip::kMaxRounds);
	});
}

Datum
vacskip_forget_calibration(PG_FUNCTION_ARGS)
{
	return vacskip::pg::guarded([&] {
		const char *spcname = NameStr(*PG_GETARG_NAME(0));

		if (!superuser())
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to forget a calibration"),
					 errdetail("Only superusers may change what VACUUM's autotuner reads.")));
		const Oid	spcoid = get_tablespace_oid(spcname, false);

		lock_calibrations();
		return BoolGetDatum(vacskip::pg::forget_calibration(spcoid));
	});
}
}

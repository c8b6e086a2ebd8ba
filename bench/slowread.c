/*
 * slowread: an LD_PRELOAD library that emulates storage profiles for the
 * benchmark (bench/vacbench/profiles.py).  It interposes pread, preadv and
 * preadv2 (and their *64 names) of regular files and, while the benchmark
 * has switched it on, counts them and delays them the way the emulated
 * storage would:
 *
 *   count    no delay; only the counters (this disk as it is)
 *   seek     a read whose offset does not continue one of the last RING
 *            reads of the same file sleeps SLOWREAD_PENALTY_US first,
 *            cached or not (a disk whose seeks are slow)
 *   latency  a read that goes to the device sleeps SLOWREAD_LATENCY_US plus
 *            its uncached bytes at SLOWREAD_MBPS (10^6 bytes/s), in the
 *            reading process, so that concurrent requests overlap (a
 *            latency-bound network volume)
 *   iops     a read that goes to the device waits for its turn in a token
 *            bucket shared by every process: SLOWREAD_IOPS requests a
 *            second, a request of up to SLOWREAD_IO_UNIT_KB counting as one
 *            (an IOPS-limited volume); no burst beyond one request
 *
 * "Goes to the device": with direct I/O (O_DIRECT) every read; with
 * buffered I/O a read the kernel's page cache cannot serve in full.  For a
 * buffered read slowread first asks cachestat() (Linux 6.5) how many of its
 * pages the page cache holds, which starts no I/O; the uncached rest pays,
 * then the read is performed for real.  Where the kernel has no cachestat()
 * the read is first tried with preadv2(RWF_NOWAIT) instead, which returns
 * only what the page cache holds -- but on recent kernels it also starts
 * the I/O it turned away, and now and then completes it and returns the
 * data, so that a miss passes for a hit: cachestat() is the exact probe.
 * Pages the kernel's readahead brings in with a read that missed are later
 * served from the page cache, free (counted as cached even while their I/O
 * is in flight): the emulation charges requests that miss, not readahead's
 * extra pages.
 *
 * "The same file" is (st_dev, st_ino), not the descriptor: PostgreSQL 18
 * with io_method = worker reads a relation from several processes (the
 * backend and its I/O workers), each with its own descriptor.  The state is
 * therefore shared between processes through a file that SLOWREAD_STATE
 * names (created by the benchmark: 1 MiB of zeroes): the switch, the
 * counters (uint64 at offset 8 on, see struct state) and the token bucket.
 * A read "continues" a file's stream when its offset equals the end of one
 * of the last RING reads of that file, so that a few reads of one
 * sequential stream that workers happen to start out of order are not all
 * penalised.
 *
 * While the switch (the uint32 at offset 4) is 0 the library passes every
 * read through untouched: the benchmark switches it on for the timed
 * VACUUM and for vacskip.calibrate() only.
 *
 * Environment (read once, at the first interposed call):
 *   SLOWREAD_STATE        path of the shared state file; unset: library inert
 *   SLOWREAD_MODE         count, seek, latency or iops (default count)
 *   SLOWREAD_PENALTY_US   seek: µs before a non-following read
 *   SLOWREAD_LATENCY_US   latency: µs per request that goes to the device
 *   SLOWREAD_MBPS         latency: bandwidth, 10^6 bytes/s (0: unlimited)
 *   SLOWREAD_IOPS         iops: requests per second
 *   SLOWREAD_IO_UNIT_KB   iops: a request's size that counts as one (KiB)
 *
 * Build: cc -O2 -shared -fPIC -o slowread.so slowread.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS 1024
#define RING 8

enum mode
{
	MODE_COUNT, MODE_SEEK, MODE_LATENCY, MODE_IOPS
};

struct slot
{
	uint64_t	dev;
	uint64_t	ino;
	int64_t		ends[RING];
	uint32_t	next;
	uint32_t	used;
};

struct state
{
	uint32_t	lock;
	uint32_t	active;			/* 0: pass everything through */
	uint64_t	reads;			/* read calls */
	uint64_t	penalised;		/* reads the emulation delayed */
	uint64_t	bytes;			/* bytes asked for */
	uint64_t	uncached;		/* reads that went to the device */
	uint64_t	uncached_bytes; /* their bytes not in the page cache */
	uint64_t	delay_us;		/* µs slept, all processes together */
	uint64_t	probe_unsupported; /* reads neither probe could ask about */
	int64_t		bucket_next_ns; /* iops: when the next request may start */
	struct slot slots[NSLOTS];
};

static struct state *st;
static enum mode mode;
static long penalty_us;
static long latency_us;
static double mbps;
static double iops;
static long io_unit;
static int	initialised;

static ssize_t (*real_pread) (int, void *, size_t, off_t);
static ssize_t (*real_preadv) (int, const struct iovec *, int, off_t);
static ssize_t (*real_preadv2) (int, const struct iovec *, int, off_t, int);

static long
env_long(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : dflt;
}

static void
init(void)
{
	const char *path;
	const char *m;
	int			fd;

	if (initialised)
		return;
	real_pread = dlsym(RTLD_NEXT, "pread");
	real_preadv = dlsym(RTLD_NEXT, "preadv");
	real_preadv2 = dlsym(RTLD_NEXT, "preadv2");
	m = getenv("SLOWREAD_MODE");
	mode = !m ? MODE_COUNT : !strcmp(m, "seek") ? MODE_SEEK :
		!strcmp(m, "latency") ? MODE_LATENCY : !strcmp(m, "iops") ? MODE_IOPS : MODE_COUNT;
	penalty_us = env_long("SLOWREAD_PENALTY_US", 0);
	latency_us = env_long("SLOWREAD_LATENCY_US", 0);
	mbps = (double) env_long("SLOWREAD_MBPS", 0);
	iops = (double) env_long("SLOWREAD_IOPS", 0);
	io_unit = env_long("SLOWREAD_IO_UNIT_KB", 256) * 1024;
	if (io_unit <= 0)
		io_unit = 256 * 1024;
	path = getenv("SLOWREAD_STATE");
	if (path && (fd = open(path, O_RDWR)) >= 0)
	{
		void	   *p = mmap(NULL, sizeof(struct state), PROT_READ | PROT_WRITE,
							 MAP_SHARED, fd, 0);

		if (p != MAP_FAILED)
			st = p;
		close(fd);
	}
	/* the default timer slack (50 µs) would lengthen every emulated delay */
	if (st && mode != MODE_COUNT)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	initialised = 1;
}

static void
lock(void)
{
	while (__atomic_exchange_n(&st->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void
unlock(void)
{
	__atomic_store_n(&st->lock, 0, __ATOMIC_RELEASE);
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
sleep_until(int64_t deadline)
{
	struct timespec ts;

	ts.tv_sec = deadline / 1000000000;
	ts.tv_nsec = deadline % 1000000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void
sleep_us(int64_t us)
{
	sleep_until(now_ns() + us * 1000);
}

static void
add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/*
 * Whether the switch is on and fd a regular file; *sb is its fstat.
 */
static int
watched(int fd, struct stat *sb)
{
	init();
	return st != NULL && __atomic_load_n(&st->active, __ATOMIC_RELAXED) &&
		fstat(fd, sb) == 0 && S_ISREG(sb->st_mode);
}

/*
 * seek: record a read of len bytes at off; returns whether it continues
 * none of the file's recent reads.
 */
static int
breaks_stream(const struct stat *sb, off_t off, size_t len)
{
	struct slot *s = NULL;
	uint32_t	h;
	int			follows = 0;
	int			i;

	h = (uint32_t) ((sb->st_ino * 2654435761u) ^ sb->st_dev) % NSLOTS;
	lock();
	for (i = 0; i < NSLOTS; i++)
	{
		struct slot *c = &st->slots[(h + i) % NSLOTS];

		if (!c->used || (c->dev == sb->st_dev && c->ino == sb->st_ino))
		{
			s = c;
			break;
		}
	}
	if (s == NULL)				/* table full: start over */
	{
		memset(st->slots, 0, sizeof(st->slots));
		s = &st->slots[h];
	}
	if (!s->used)
	{
		s->used = 1;
		s->dev = sb->st_dev;
		s->ino = sb->st_ino;
		for (i = 0; i < RING; i++)
			s->ends[i] = -1;
	}
	for (i = 0; i < RING; i++)
		if (s->ends[i] == (int64_t) off)
		{
			follows = 1;
			s->ends[i] = (int64_t) (off + len);
			break;
		}
	if (!follows)
	{
		s->ends[s->next] = (int64_t) (off + len);
		s->next = (s->next + 1) % RING;
	}
	unlock();
	return !follows;
}

/* iops: wait for the bucket to admit `units` requests. */
static void
take_tokens(uint64_t units)
{
	const int64_t interval = (int64_t) (1e9 / iops);
	const int64_t now = now_ns();
	int64_t		start;

	lock();
	start = st->bucket_next_ns > now ? st->bucket_next_ns : now;
	st->bucket_next_ns = start + interval * (int64_t) units;
	unlock();
	if (start > now)
	{
		add(&st->delay_us, (uint64_t) ((start - now) / 1000));
		sleep_until(start);
	}
}

/* What a read that goes to the device with `bytes` uncached bytes pays. */
static void
pay(size_t bytes)
{
	if (mode == MODE_LATENCY)
	{
		int64_t		us = latency_us + (mbps > 0 ? (int64_t) (bytes / mbps) : 0);

		if (us > 0)
		{
			add(&st->penalised, 1);
			add(&st->delay_us, (uint64_t) us);
			sleep_us(us);
		}
	}
	else if (mode == MODE_IOPS && iops > 0)
	{
		add(&st->penalised, 1);
		take_tokens((bytes + io_unit - 1) / io_unit);
	}
}

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

/* cachestat()'s arguments (include/uapi/linux/mman.h) */
struct cachestat_range
{
	uint64_t	off;
	uint64_t	len;
};

struct cachestat
{
	uint64_t	nr_cache;
	uint64_t	nr_dirty;
	uint64_t	nr_writeback;
	uint64_t	nr_evicted;
	uint64_t	nr_recently_evicted;
};

static int	no_cachestat;

/*
 * Bytes of [off, off + len) the page cache does not hold (whole pages,
 * at most len), or -1 when cachestat() cannot tell.
 */
static long
uncached_bytes(int fd, off_t off, size_t len)
{
	struct cachestat_range range = {(uint64_t) off, len};
	struct cachestat cs;
	long		page = sysconf(_SC_PAGESIZE);
	uint64_t	pages;
	uint64_t	missing;

	if (no_cachestat)
		return -1;
	if (syscall(__NR_cachestat, fd, &range, &cs, 0) != 0)
	{
		if (errno == ENOSYS)
			no_cachestat = 1;
		return -1;
	}
	pages = (off + len + page - 1) / page - off / page;
	missing = cs.nr_cache >= pages ? 0 : (pages - cs.nr_cache) * page;
	return (long) (missing < len ? missing : len);
}

static size_t
iov_len(const struct iovec *iov, int n)
{
	size_t		len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

/*
 * A read of the file fd (fstat sb) of len bytes at off into iov: counts
 * it, delays it as the mode says, performs it.
 */
static ssize_t
emulate(int fd, const struct stat *sb, const struct iovec *iov, int n, off_t off,
		int flags)
{
	const size_t len = iov_len(iov, n);
	size_t		want = len;
	int			direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
	ssize_t		got = -1;

	add(&st->reads, 1);
	add(&st->bytes, len);
	if (mode == MODE_SEEK && breaks_stream(sb, off, len) && penalty_us > 0)
	{
		add(&st->penalised, 1);
		add(&st->delay_us, (uint64_t) penalty_us);
		sleep_us(penalty_us);
	}
	/* bytes that exist: a read past the end is short, not uncached */
	if (off >= sb->st_size)
		want = 0;
	else if ((uint64_t) (sb->st_size - off) < want)
		want = (size_t) (sb->st_size - off);
	if (!direct && want > 0)
	{
		long		miss = uncached_bytes(fd, off, want);

		if (miss >= 0)
			want = (size_t) miss;
		else
		{
			got = real_preadv2(fd, iov, n, off, flags | RWF_NOWAIT);
			if (got >= 0 && (size_t) got >= want)
				return got;		/* all of it from the page cache */
			if (got < 0 && errno == EOPNOTSUPP)
				add(&st->probe_unsupported, 1);
			want -= got > 0 ? (size_t) got : 0;
		}
	}
	if (want > 0)
	{
		add(&st->uncached, 1);
		add(&st->uncached_bytes, want);
		pay(want);
	}
	return real_preadv2(fd, iov, n, off, flags);
}

ssize_t
pread(int fd, void *buf, size_t count, off_t off)
{
	struct stat sb;
	struct iovec iov = {buf, count};

	if (!watched(fd, &sb))
		return real_pread(fd, buf, count, off);
	return emulate(fd, &sb, &iov, 1, off, 0);
}

ssize_t
pread64(int fd, void *buf, size_t count, off_t off)
{
	return pread(fd, buf, count, off);
}

ssize_t
preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	struct stat sb;

	if (!watched(fd, &sb))
		return real_preadv(fd, iov, n, off);
	return emulate(fd, &sb, iov, n, off, 0);
}

ssize_t
preadv64(int fd, const struct iovec *iov, int n, off_t off)
{
	return preadv(fd, iov, n, off);
}

ssize_t
preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	struct stat sb;

	/* off -1 reads at the file position: not a positional read to emulate */
	if (off < 0 || (flags & RWF_NOWAIT) || !watched(fd, &sb))
		return real_preadv2(fd, iov, n, off, flags);
	return emulate(fd, &sb, iov, n, off, flags);
}

ssize_t
preadv64v2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	return preadv2(fd, iov, n, off, flags);
}

_Static_assert(sizeof(struct state) <= 1024 * 1024, "state must fit the 1 MiB file");
_Static_assert(offsetof(struct state, active) == 4 && offsetof(struct state, reads) == 8 &&
			   offsetof(struct state, probe_unsupported) == 56,
			   "bench/vacbench/harness.py reads the switch and the counters at these offsets");

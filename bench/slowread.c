/*
 * slowread: an LD_PRELOAD library that emulates a disk whose random reads
 * are slow.  It interposes pread, preadv and preadv2 (and their *64 names);
 * a read whose offset does not continue one of the recent reads of the same
 * file sleeps SLOWREAD_PENALTY_US microseconds before it is performed.
 *
 * "The same file" is (st_dev, st_ino), not the descriptor: PostgreSQL 18
 * with io_method = worker reads a relation from several processes (the
 * backend and its I/O workers), each with its own descriptor.  The state is
 * therefore shared between processes through a file that SLOWREAD_STATE
 * names (created by the benchmark: 1 MiB of zeroes; the counters reads,
 * penalised and bytes are the uint64s at offsets 8, 16 and 24).  A
 * read "continues" a file's stream when its offset equals the end of one of
 * the last RING reads of that file, so that a few reads of one sequential
 * stream that workers happen to start out of order are not all penalised.
 *
 * The state also counts reads, penalised reads and bytes, so that the
 * benchmark can check that the library is active and what it did.
 *
 * Environment (read once, at the first interposed call):
 *   SLOWREAD_PENALTY_US  microseconds added to a non-following read (0: none)
 *   SLOWREAD_STATE       path of the shared state file; unset: library inert
 *
 * Build: cc -O2 -shared -fPIC -o slowread.so slowread.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NSLOTS 1024
#define RING 8

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
	uint32_t	pad;
	uint64_t	reads;
	uint64_t	penalised;
	uint64_t	bytes;
	struct slot slots[NSLOTS];
};

static struct state *st;
static long penalty_us;
static int	initialised;

static ssize_t (*real_pread) (int, void *, size_t, off_t);
static ssize_t (*real_preadv) (int, const struct iovec *, int, off_t);
static ssize_t (*real_preadv2) (int, const struct iovec *, int, off_t, int);

static void
init(void)
{
	const char *path;
	const char *pen;
	int			fd;

	if (initialised)
		return;
	real_pread = dlsym(RTLD_NEXT, "pread");
	real_preadv = dlsym(RTLD_NEXT, "preadv");
	real_preadv2 = dlsym(RTLD_NEXT, "preadv2");
	pen = getenv("SLOWREAD_PENALTY_US");
	penalty_us = pen ? atol(pen) : 0;
	path = getenv("SLOWREAD_STATE");
	if (path && (fd = open(path, O_RDWR)) >= 0)
	{
		void	   *p = mmap(NULL, sizeof(struct state), PROT_READ | PROT_WRITE,
							 MAP_SHARED, fd, 0);

		if (p != MAP_FAILED)
			st = p;
		close(fd);
	}
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

/* Record a read of len bytes at off; returns whether it is penalised. */
static int
account(int fd, off_t off, size_t len)
{
	struct stat sb;
	struct slot *s = NULL;
	uint32_t	h;
	int			follows = 0;
	int			i;

	if (st == NULL || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	h = (uint32_t) ((sb.st_ino * 2654435761u) ^ sb.st_dev) % NSLOTS;
	lock();
	for (i = 0; i < NSLOTS; i++)
	{
		struct slot *c = &st->slots[(h + i) % NSLOTS];

		if (!c->used || (c->dev == sb.st_dev && c->ino == sb.st_ino))
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
		s->dev = sb.st_dev;
		s->ino = sb.st_ino;
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
	st->reads++;
	st->bytes += len;
	if (!follows && penalty_us > 0)
		st->penalised++;
	unlock();
	return !follows && penalty_us > 0;
}

static void
penalise(void)
{
	struct timespec ts;

	ts.tv_sec = penalty_us / 1000000;
	ts.tv_nsec = (penalty_us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0)
		;
}

static size_t
iov_len(const struct iovec *iov, int n)
{
	size_t		len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

ssize_t
pread(int fd, void *buf, size_t count, off_t off)
{
	init();
	if (account(fd, off, count))
		penalise();
	return real_pread(fd, buf, count, off);
}

ssize_t
pread64(int fd, void *buf, size_t count, off_t off)
{
	return pread(fd, buf, count, off);
}

ssize_t
preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	init();
	if (account(fd, off, iov_len(iov, n)))
		penalise();
	return real_preadv(fd, iov, n, off);
}

ssize_t
preadv64(int fd, const struct iovec *iov, int n, off_t off)
{
	return preadv(fd, iov, n, off);
}

ssize_t
preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	init();
	if (off >= 0 && account(fd, off, iov_len(iov, n)))
		penalise();
	return real_preadv2(fd, iov, n, off, flags);
}

ssize_t
preadv64v2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	return preadv2(fd, iov, n, off, flags);
}

_Static_assert(sizeof(struct state) <= 1024 * 1024, "state must fit the 1 MiB file");
_Static_assert(offsetof(struct state, reads) == 8 && offsetof(struct state, bytes) == 24,
			   "bench/vacbench/harness.py reads the counters at these offsets");

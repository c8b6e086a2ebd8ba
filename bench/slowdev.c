/*
 * slowdev: the storage of the benchmark's block-latency profile
 * (bench/vacbench/profiles.py): a file served through FUSE whose reads,
 * while the benchmark has switched the emulation on, each sleep
 * LATENCY_US plus their bytes at MBPS (10^6 bytes/s) before they are
 * served from a backing file.  The benchmark puts a loop device (direct
 * I/O, so that no page cache lies between) on that file and the clusters'
 * file system on the loop device (bench/vacbench/harness.py, SlowDevice).
 *
 * So the delay falls below the kernel's page cache, on each request that
 * reaches the block device: VACUUM's own reads and, with buffered I/O, the
 * kernel's readahead alike, as on a network volume.  bench/slowread.c, by
 * contrast, delays the reads of the reading process, and the pages the
 * kernel reads ahead cost it nothing.  Each request sleeps in a thread of
 * its own, so that concurrent requests overlap (up to the FUSE
 * connection's background requests and the daemon's threads); the kernel
 * splits a large one into requests of up to the connection's largest read.
 * Writes are not delayed.
 *
 * The switch and the counters are slowread's shared state file (the uint32
 * at offset 4; the uint64 counters at offset 8 on): each delayed request
 * adds 1 to "penalised" and its sleep to "delay_us"; slowread, preloaded
 * into the server in its count mode, counts the reads themselves.
 *
 * Usage: slowdev BACKING STATE LATENCY_US MBPS MOUNTPOINT [FUSE options]
 * Build: cc -O2 -o slowdev slowdev.c $(pkg-config --cflags --libs fuse3)
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the file the loop device reads: the mount's only entry */
#define VOLUME "/volume"

/* slowread.c's struct state, as far as slowdev uses it */
#define STATE_ACTIVE 4
#define STATE_PENALISED 16
#define STATE_DELAY_US 48

static int	backing = -1;
static char *state;
static long latency_us;
static double mbps;

static void
sleep_us(long long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static int
sd_getattr(const char *path, struct stat *sb, struct fuse_file_info *fi)
{
	struct stat b;

	(void) fi;
	memset(sb, 0, sizeof *sb);
	if (strcmp(path, "/") == 0)
	{
		sb->st_mode = S_IFDIR | 0755;
		sb->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, VOLUME) != 0)
		return -ENOENT;
	if (fstat(backing, &b) != 0)
		return -errno;
	sb->st_mode = S_IFREG | 0600;
	sb->st_nlink = 1;
	sb->st_size = b.st_size;
	return 0;
}

static int
sd_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, VOLUME) != 0)
		return -ENOENT;
	fi->direct_io = 1;			/* every read reaches slowdev */
	return 0;
}

static int
sd_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t		n;

	(void) path;
	(void) fi;
	if (__atomic_load_n((uint32_t *) (state + STATE_ACTIVE), __ATOMIC_RELAXED))
	{
		long long	us = latency_us + (mbps > 0 ? (long long) (size / mbps) : 0);

		__atomic_fetch_add((uint64_t *) (state + STATE_PENALISED), 1, __ATOMIC_RELAXED);
		__atomic_fetch_add((uint64_t *) (state + STATE_DELAY_US), (uint64_t) us,
						   __ATOMIC_RELAXED);
		sleep_us(us);
	}
	n = pread(backing, buf, size, off);
	return n < 0 ? -errno : (int) n;
}

static int
sd_write(const char *path, const char *buf, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	ssize_t		n;

	(void) path;
	(void) fi;
	n = pwrite(backing, buf, size, off);
	return n < 0 ? -errno : (int) n;
}

static int
sd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void) path;
	(void) datasync;
	(void) fi;
	return fdatasync(backing) != 0 ? -errno : 0;
}

static int
sd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		   struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void) off;
	(void) fi;
	(void) flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, VOLUME + 1, NULL, 0, 0);
	return 0;
}

static void *
sd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->direct_io = 1;
	/* requests in flight at once: more than a VACUUM keeps (io workers) */
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	return NULL;
}

static const struct fuse_operations ops = {
	.getattr = sd_getattr,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.fsync = sd_fsync,
	.readdir = sd_readdir,
	.init = sd_init,
};

int
main(int argc, char **argv)
{
	int			fd;
	char	   *end_l;
	char	   *end_m;

	if (argc < 6)
	{
		fprintf(stderr, "usage: %s BACKING STATE LATENCY_US MBPS MOUNTPOINT [FUSE options]\n",
				argv[0]);
		return 2;
	}
	latency_us = strtol(argv[3], &end_l, 10);
	mbps = strtod(argv[4], &end_m);
	/* at most 10 s a request; a bandwidth of 0 (none) or at least 1 byte/s */
	if (*argv[3] == '\0' || *end_l != '\0' || latency_us < 0 || latency_us > 10000000 ||
		*argv[4] == '\0' || *end_m != '\0' || !(mbps == 0 || (mbps >= 1e-6 && mbps <= 1e6)))
	{
		fprintf(stderr, "%s: LATENCY_US wants 0 to 10000000, MBPS 0 or 1e-6 to 1e6\n",
				argv[0]);
		return 2;
	}
	backing = open(argv[1], O_RDWR);
	fd = open(argv[2], O_RDWR);
	if (backing < 0 || fd < 0)
	{
		perror(backing < 0 ? argv[1] : argv[2]);
		return 1;
	}
	state = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (state == MAP_FAILED)
	{
		perror("mmap");
		return 1;
	}
	close(fd);
	/*
	 * The loop device writes back through slowdev: memory reclaim must not
	 * wait on slowdev's own writes (Linux 5.6; without it, as before).
	 */
#ifdef PR_SET_IO_FLUSHER
	(void) prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0);
#endif
	/* FUSE's arguments: the program's name, the mount point, the options */
	argv[4] = argv[0];
	return fuse_main(argc - 4, argv + 4, &ops, NULL);
}

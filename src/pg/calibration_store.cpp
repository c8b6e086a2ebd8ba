// vacskip/calibration.<tablespace OID> under the data directory.
#include <cerrno>
#include <cstdio>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "../core/calibration.hpp"
#include "calibration_store.hpp"

namespace vacskip::pg {

namespace {

constexpr const char kDir[] = "vacskip";
constexpr int kMaxFileSize = 8192;

// Per backend: the last file read for each tablespace, kept while its
// inode, size and modification time stay the same.
struct CacheEntry
{
	Oid			spcoid;
	bool		present;
	ino_t		ino;
	off_t		size;
	time_t		mtime;
	vacskip::CalibrationRecord rec;
};

constexpr int kCacheSize = 16;
CacheEntry cache[kCacheSize];
int			cache_used = 0;

void
path_of(Oid spcoid, char *out, size_t size)
{
	snprintf(out, size, "%s/calibration.%u", kDir, spcoid);
}

CacheEntry *
cache_slot(Oid spcoid)
{
	for (int i = 0; i < cache_used; i++)
		if (cache[i].spcoid == spcoid)
			return &cache[i];
	CacheEntry *e = &cache[cache_used < kCacheSize ? cache_used++ : spcoid % kCacheSize];

	e->spcoid = spcoid;
	e->present = false;
	e->size = -1;
	return e;
}

bool
same_file(const CacheEntry *e, const struct stat *st)
{
	/* a new file is renamed into place: another inode */
	return e->size == st->st_size && e->ino == st->st_ino && e->mtime == st->st_mtime;
}

}  // namespace

bool
load_calibration(Oid spcoid, vacskip::CalibrationRecord *out)
{
	char		path[MAXPGPATH];
	struct stat st;
	CacheEntry *e = cache_slot(spcoid);

	path_of(spcoid, path, sizeof(path));
	if (stat(path, &st) != 0)
	{
		if (errno != ENOENT)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("vacskip: could not stat file \"%s\": %m", path)));
		e->present = false;
		e->size = -1;
		return false;
	}
	if (!same_file(e, &st))
	{
		char		text[kMaxFileSize];
		ssize_t		n = -1;
		int			fd = st.st_size < kMaxFileSize ? OpenTransientFile(path, O_RDONLY | PG_BINARY) : -1;

		if (fd >= 0)
		{
			n = read(fd, text, sizeof(text));
			CloseTransientFile(fd);
		}
		e->present = n > 0 && vacskip::parse_calibration(text, static_cast<size_t>(n), &e->rec);
		e->ino = st.st_ino;
		e->size = st.st_size;
		e->mtime = st.st_mtime;
		const int	format = n > 0 ? vacskip::calibration_format(text, static_cast<size_t>(n)) : -1;

		if (!e->present && format >= 0 && format != vacskip::kCalibrationFormat)
			ereport(WARNING,
					(errcode(ERRCODE_WARNING),
					 errmsg("vacskip: ignoring calibration file \"%s\" of another format "
							"(version %d; this vacskip reads version %d)",
							path, format, vacskip::kCalibrationFormat),
					 errdetail("It was measured otherwise than calibrate() measures now."),
					 errhint("Run vacskip.calibrate() for that tablespace again, or "
							 "vacskip.forget_calibration().")));
		else if (!e->present)
			ereport(WARNING,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("vacskip: ignoring unreadable calibration file \"%s\"", path),
					 errhint("Run vacskip.calibrate() or vacskip.forget_calibration() "
							 "for that tablespace.")));
	}
	if (e->present)
		*out = e->rec;
	return e->present;
}

void
save_calibration(Oid spcoid, const vacskip::CalibrationRecord &rec)
{
	char		path[MAXPGPATH];
	char		tmp[MAXPGPATH];
	char		text[kMaxFileSize];
	const int	len = vacskip::format_calibration(rec, text, sizeof(text));
	int			fd;

	if (len <= 0 || len >= kMaxFileSize)
		elog(ERROR, "vacskip: calibration record too long");
	if (MakePGDirectory(kDir) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", kDir)));
	path_of(spcoid, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, MyProcPid);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	errno = 0;
	if (write(fd, text, len) != len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	}
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync file \"%s\": %m", tmp)));
	if (CloseTransientFile(fd) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
	(void) durable_rename(tmp, path, ERROR);
}

bool
forget_calibration(Oid spcoid)
{
	char		path[MAXPGPATH];
	struct stat st;

	path_of(spcoid, path, sizeof(path));
	if (stat(path, &st) != 0)
		return false;
	(void) durable_unlink(path, ERROR);
	return true;
}

}  // namespace vacskip::pg

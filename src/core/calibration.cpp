#include "calibration.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace vacskip {

namespace {

// Field by field: the value of `key` on its own line of `text`, copied into
// `value` (at most size - 1 characters); false when absent.
bool field(const char *text, std::size_t len, const char *key, char *value, std::size_t size)
{
	const std::size_t klen = std::strlen(key);
	std::size_t pos = 0;
	while (pos < len) {
		const char *line = text + pos;
		const void *nl = std::memchr(line, '\n', len - pos);
		const std::size_t llen = nl ? static_cast<const char *>(nl) - line : len - pos;
		if (llen > klen && std::strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			const std::size_t vlen = llen - klen - 1;
			if (vlen >= size)
				return false;
			std::memcpy(value, line + klen + 1, vlen);
			value[vlen] = '\0';
			return true;
		}
		pos += llen + 1;
	}
	return false;
}

bool number(const char *text, std::size_t len, const char *key, double *out)
{
	char buf[64];
	char *end;
	if (!field(text, len, key, buf, sizeof(buf)))
		return false;
	*out = std::strtod(buf, &end);
	return end != buf && *end == '\0' && std::isfinite(*out);
}

bool integer(const char *text, std::size_t len, const char *key, long long *out)
{
	char buf[64];
	char *end;
	if (!field(text, len, key, buf, sizeof(buf)))
		return false;
	*out = std::strtoll(buf, &end, 10);
	return end != buf && *end == '\0';
}

// Exactly `n` numbers from 0 to 2^64 - 1, in decimal, separated by one
// space.
bool unsigned_numbers(const char *text, std::uint64_t *out, int n)
{
	const char *p = text;
	for (int i = 0; i < n; i++) {
		char *end;
		if (i > 0 && *p++ != ' ')
			return false;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		errno = 0;
		out[i] = std::strtoull(p, &end, 10);
		if (errno != 0)
			return false;
		p = end;
	}
	return *p == '\0';
}

bool int_field(const char *text, std::size_t len, const char *key, int *out)
{
	long long v;
	if (!integer(text, len, key, &v) || v < -1000000000LL || v > 1000000000LL)
		return false;
	*out = static_cast<int>(v);
	return true;
}

// Exactly `n` numbers separated by spaces.
bool numbers(const char *text, double *out, int n)
{
	const char *p = text;
	for (int i = 0; i < n; i++) {
		char *end;
		out[i] = std::strtod(p, &end);
		if (end == p)
			return false;
		p = end;
	}
	while (*p == ' ')
		p++;
	return *p == '\0';
}

}  // namespace

IoMethod io_method_of(const char *name)
{
	if (name == nullptr)
		return IoMethod::kNone;
	const IoMethod all[] = {IoMethod::kNone, IoMethod::kSync, IoMethod::kWorker,
							IoMethod::kIoUring, IoMethod::kOther};
	for (IoMethod m : all)
		if (std::strcmp(name, io_method_name(m)) == 0)
			return m;
	return IoMethod::kOther;
}

const char *io_method_name(IoMethod m)
{
	switch (m) {
	case IoMethod::kSync:
		return "sync";
	case IoMethod::kWorker:
		return "worker";
	case IoMethod::kIoUring:
		return "io_uring";
	case IoMethod::kOther:
		return "other";
	case IoMethod::kNone:
		break;
	}
	return "none";
}

StorageInputs measured_path(const CalibrationRecord &r)
{
	StorageInputs in = default_storage(r.server_major);
	in.direct_io = r.direct_io;
	in.io_method = r.io_method;
	in.io_workers = r.io_workers;
	in.maintenance_io_concurrency = r.maintenance_io_concurrency;
	in.io_combine_limit = r.io_combine_limit;
	in.read_ahead_kb = r.read_ahead_kb;
	return in;
}

bool same_io_path(const CalibrationRecord &r, const StorageInputs &now)
{
	const StorageInputs then = measured_path(r);
	return then.server_major == now.server_major && then.direct_io == now.direct_io &&
		   then.io_method == now.io_method && then.io_combine_limit == now.io_combine_limit &&
		   vacuum_read_concurrency(then) == vacuum_read_concurrency(now) &&
		   (then.direct_io || then.read_ahead_kb < 0 || now.read_ahead_kb < 0 ||
			then.read_ahead_kb == now.read_ahead_kb);
}

int device_read_ahead_kb(const char *sys_dev_block, unsigned major, unsigned minor)
{
	for (const char *queue : {"queue", "../queue"}) {
		char path[512];
		char text[32];
		char *end;
		if (std::snprintf(path, sizeof(path), "%s/%u:%u/%s/read_ahead_kb", sys_dev_block,
						  major, minor, queue) >= static_cast<int>(sizeof(path)))
			return -1;
		const int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		const ssize_t n = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (n <= 0)
			return -1;
		text[n] = '\0';
		const long kb = std::strtol(text, &end, 10);
		return end != text && (*end == '\n' || *end == '\0') && kb >= 0 && kb <= 1000000000L ?
			static_cast<int>(kb) : -1;
	}
	return -1;
}

bool place_of(const char *path, Place *out)
{
	struct statx st;
	struct statvfs vfs;
	if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_INO | STATX_BTIME, &st) != 0 ||
		!(st.stx_mask & STATX_TYPE) || !S_ISDIR(st.stx_mode) || !(st.stx_mask & STATX_INO) ||
		statvfs(path, &vfs) != 0)
		return false;
	out->inode = st.stx_ino;
	out->born_ns = (st.stx_mask & STATX_BTIME) && st.stx_btime.tv_sec >= 0 ?
		static_cast<std::uint64_t>(st.stx_btime.tv_sec) * 1000000000u + st.stx_btime.tv_nsec :
		0;
	out->file_system = vfs.f_fsid;
	return true;
}

bool same_place(const Place &then, const Place &now)
{
	if (then.inode == 0 || now.inode == 0)
		return true;
	if (then.inode != now.inode)
		return false;
	return then.born_ns != 0 && now.born_ns != 0 ? then.born_ns == now.born_ns :
		then.file_system == now.file_system;
}

namespace {

constexpr int kMaxPatterns = kDensityCount * kGapCount;

// The logarithm of pattern k's figure in round r, of samples[k * stride + r].
double log_figure(const double *samples, int stride, int k, int r)
{
	return std::log(std::max(samples[k * stride + r], 1e-300));
}

// Each round's mean over the patterns of their figures' logarithms, and
// (returned) the mean of those.
double round_means(const double *samples, int patterns, int rounds, int stride,
				   double *means)
{
	double grand = 0.0;
	for (int r = 0; r < rounds; r++) {
		means[r] = 0.0;
		for (int k = 0; k < patterns; k++)
			means[r] += log_figure(samples, stride, k, r) / patterns;
		grand += means[r] / rounds;
	}
	return grand;
}

}  // namespace

double read_noise(const double *samples, int patterns, int rounds, int stride)
{
	constexpr double kPi = 3.14159265358979323846;
	if (patterns < 2 || patterns > kMaxPatterns || rounds < 2 || rounds > kMaxRounds)
		return 0.0;
	double round_mean[kMaxRounds];
	const double grand = round_means(samples, patterns, rounds, stride, round_mean);
	double squares = 0.0;
	for (int k = 0; k < patterns; k++) {
		double pattern_mean = 0.0;
		for (int r = 0; r < rounds; r++)
			pattern_mean += log_figure(samples, stride, k, r) / rounds;
		for (int r = 0; r < rounds; r++) {
			const double e =
				log_figure(samples, stride, k, r) - pattern_mean - round_mean[r] + grand;
			squares += e * e;
		}
	}
	const double variance = squares / ((patterns - 1.0) * (rounds - 1.0));
	return std::sqrt(kPi / 2 * variance / rounds);
}

double median_in_place(double *xs, int n)
{
	std::sort(xs, xs + n);
	return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double incomplete_beta(double x, double a, double b)
{
	if (!(x > 0))
		return 0.0;
	if (!(x < 1))
		return 1.0;
	// the continued fraction converges fast below (a + 1) / (a + b + 2);
	// above, I_x(a, b) = 1 - I_(1 - x)(b, a)
	if (x > (a + 1) / (a + b + 2))
		return 1.0 - incomplete_beta(1 - x, b, a);
	const double front = std::exp(a * std::log(x) + b * std::log1p(-x) + std::lgamma(a + b) -
								  std::lgamma(a) - std::lgamma(b)) / a;
	// 1 / (1 + d1 / (1 + d2 / (1 + ...))), by the modified Lentz method:
	// d(2m + 1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)),
	// d(2m) = m (b - m) x / ((a + 2m - 1)(a + 2m))
	constexpr double kTiny = 1e-300;
	double f = kTiny, c = kTiny, d = 0.0;
	for (int i = 0; i < 400; i++) {
		const int m = i / 2;
		double num;
		if (i == 0)
			num = 1.0;
		else if (i % 2 == 0)
			num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		else
			num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		d = 1 / (std::fabs(d) > kTiny ? d : kTiny);
		c = 1 + num / c;
		if (std::fabs(c) < kTiny)
			c = kTiny;
		f *= c * d;
		if (std::fabs(c * d - 1) < 1e-15)
			break;
	}
	return front * f;
}

double t_upper(double t, double dof)
{
	return 0.5 * incomplete_beta(dof / (dof + t * t), dof / 2, 0.5);
}

double t_quantile(double p, double dof)
{
	double lo = 0.0, hi = 1.0;
	while (t_upper(hi, dof) > p && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200; i++) {
		const double mid = (lo + hi) / 2;
		(t_upper(mid, dof) > p ? lo : hi) = mid;
	}
	return (lo + hi) / 2;
}

namespace {

// A mean square of residuals no larger than rounding leaves where there
// are none (residuals of at most 1e-12, squared).
constexpr double kNoSpread = 1e-24;

// The externally studentized residual of a cell whose residual is `e`, in
// a layout whose residuals' mean square is `s2` over `dof` degrees of
// freedom, at leverage `h`: its residual over the spread of the other
// cells' (Student's t with dof - 1 degrees of freedom); infinite where the
// cell holds all of the spread.
double
studentized(double e, double s2, double h, int dof)
{
	const double t2 = e * e / (s2 * (1 - h));

	return t2 >= dof - 1e-12 ? HUGE_VAL : std::sqrt(t2 * (dof - 1) / (dof - t2));
}

// One density's layout: the logarithms of its patterns' figures by round,
// y[k * rounds + r], with the cells set aside (out[k * rounds + r]) filled
// with what the layout of the others predicts for them.
struct Layout {
	int patterns = 0, rounds = 0;
	double y[kGapCount * kMaxRounds];
	bool out[kGapCount * kMaxRounds] = {};
	// cells that may not be set aside (their requests were unusual)
	bool kept[kGapCount * kMaxRounds] = {};
	int set_aside = 0;

	double &at(int k, int r) { return y[k * rounds + r]; }

	// A cell's leverage in the whole layout.
	double leverage() const
	{
		return 1.0 / patterns + 1.0 / rounds - 1.0 / (patterns * rounds);
	}

	// Each pattern's and each round's mean, and the grand mean.
	double means(double *pm, double *rm) const
	{
		double g = 0.0;
		for (int k = 0; k < patterns; k++) {
			pm[k] = 0.0;
			for (int r = 0; r < rounds; r++)
				pm[k] += y[k * rounds + r] / rounds;
		}
		for (int r = 0; r < rounds; r++) {
			rm[r] = 0.0;
			for (int k = 0; k < patterns; k++)
				rm[r] += y[k * rounds + r] / patterns;
			g += rm[r] / rounds;
		}
		return g;
	}

	// The cells set aside, each the two-way fit's prediction from the
	// others (least squares over the cells kept: the fit redone with the
	// predictions in place until they stand still).
	void fill()
	{
		double pm[kGapCount], rm[kMaxRounds];
		for (int step = 0; step < 1000 && set_aside > 0; step++) {
			const double g = means(pm, rm);
			double moved = 0.0;
			for (int k = 0; k < patterns; k++)
				for (int r = 0; r < rounds; r++)
					if (out[k * rounds + r]) {
						const double v = pm[k] + rm[r] - g;
						moved = std::max(moved, std::fabs(v - at(k, r)));
						at(k, r) = v;
					}
			if (moved < 1e-12)
				break;
		}
	}

	// The residuals once each pattern's and each round's mean are taken
	// out (e[k * rounds + r]), and their sum of squares.
	double residuals(double *e) const
	{
		double pm[kGapCount], rm[kMaxRounds];
		const double g = means(pm, rm);
		double ss = 0.0;
		for (int k = 0; k < patterns; k++)
			for (int r = 0; r < rounds; r++) {
				e[k * rounds + r] = y[k * rounds + r] - pm[k] - rm[r] + g;
				ss += e[k * rounds + r] * e[k * rounds + r];
			}
		return ss;
	}

	// Whether the cell may be set aside: its pattern and its round each
	// keep two cells or more besides it.
	bool may_set_aside(int k, int r) const
	{
		int in_pattern = 0, in_round = 0;
		for (int j = 0; j < rounds; j++)
			in_pattern += !out[k * rounds + j];
		for (int i = 0; i < patterns; i++)
			in_round += !out[i * rounds + r];
		return !out[k * rounds + r] && !kept[k * rounds + r] && in_pattern > 2 && in_round > 2;
	}

	// Marks kept the cells whose counterpart in `requests` (the same
	// patterns and rounds: the device's read requests, as logarithms) the
	// layout of the others' requests cannot account for: an externally
	// studentized residual, with the whole layout's leverage, beyond
	// Student's t quantile at kDisturbedAlpha / 2 (two-sided; each cell
	// tested alone, no Bonferroni, so that more count as unusual and fewer
	// timings are set aside).  A layout whose residuals are all within
	// rounding of 0 (the requests of each pattern and round adding up
	// exactly, in the logarithms) has no spread, and only a residual
	// beyond rounding is unusual there.
	void keep_unusual(const Layout &requests)
	{
		const int dof = (patterns - 1) * (rounds - 1);
		double e[kGapCount * kMaxRounds];
		const double s2 = requests.residuals(e) / dof;
		const double limit = t_quantile(kDisturbedAlpha / 2, dof - 1);

		for (int i = 0; i < patterns * rounds; i++)
			kept[i] = s2 > kNoSpread ? studentized(e[i], s2, leverage(), dof) > limit
				: std::fabs(e[i]) > 1e-12;
	}

	// Sets aside, one at a time, the cell whose externally studentized
	// residual is the largest while it exceeds Student's t at
	// kDisturbedAlpha / 2 over the cells still counted (two-sided,
	// Bonferroni; counting those that may not be set aside too errs
	// towards setting fewer aside).  The leverage is the whole layout's:
	// once cells are set aside the others' is larger (with three rounds,
	// 0.58 instead of 0.44 for the rest of its pattern), and the test errs
	// the same way.
	void set_aside_disturbed()
	{
		if (patterns < 2 || rounds < 3)
			return;
		double e[kGapCount * kMaxRounds];
		for (;;) {
			const int dof = (patterns - 1) * (rounds - 1) - set_aside;
			if (dof < 3)
				return;
			const double s2 = residuals(e) / dof;
			if (!(s2 > 0))
				return;
			double worst = 0.0;
			int at_k = -1, at_r = -1;
			for (int k = 0; k < patterns; k++)
				for (int r = 0; r < rounds; r++) {
					if (!may_set_aside(k, r))
						continue;
					const double te = studentized(e[k * rounds + r], s2, leverage(), dof);
					if (te > worst) {
						worst = te;
						at_k = k;
						at_r = r;
					}
				}
			const int tested = patterns * rounds - set_aside;
			if (at_k < 0 || !(worst > t_quantile(kDisturbedAlpha / 2 / tested, dof - 1)))
				return;
			out[at_k * rounds + at_r] = true;
			set_aside++;
			fill();
		}
	}
};

}  // namespace

double density_figures(const double *samples, int patterns, int rounds, int stride,
					   double *figures, bool disturbances, int *set_aside,
					   const double *requests)
{
	if (set_aside)
		*set_aside = 0;
	const int n = std::min(std::max(rounds, 0), kMaxRounds);
	if (n == 0 || patterns < 1 || patterns > kGapCount) {
		for (int k = 0; k < patterns; k++)
			figures[k] = 0.0;
		return 0.0;
	}
	Layout		l;

	l.patterns = patterns;
	l.rounds = n;
	for (int k = 0; k < patterns; k++)
		for (int r = 0; r < n; r++)
			l.at(k, r) = log_figure(samples, stride, k, r);
	if (disturbances)
		l.set_aside_disturbed();
	else if (requests && n >= 3 && patterns >= 2) {
		// every count of the device's requests taken (one of none: a
		// logarithm of nothing), those whose requests were unusual kept
		Layout		q;
		bool		counted = true;

		q.patterns = patterns;
		q.rounds = n;
		for (int k = 0; k < patterns; k++)
			for (int r = 0; r < n; r++) {
				const double x = requests[k * stride + r];

				counted = counted && std::isfinite(x) && x > 0;
				q.at(k, r) = counted ? std::log(x) : 0.0;
			}
		if (counted) {
			l.keep_unusual(q);
			l.set_aside_disturbed();
		}
	}
	double pm[kGapCount], rm[kMaxRounds];
	const double grand = l.means(pm, rm);
	double xs[kMaxRounds];
	for (int k = 0; k < patterns; k++) {
		for (int r = 0; r < n; r++)
			xs[r] = l.at(k, r) - rm[r] + grand;
		figures[k] = std::exp(median_in_place(xs, n));
	}
	if (set_aside)
		*set_aside = l.set_aside;
	if (patterns < 2 || n < 2)
		return 0.0;
	// the noise over the cells kept, and as far above as Student's t at the
	// degrees of freedom left lies above its quantile at all of them (the
	// noise is compared at those: CalibrationCosts::noise_dof)
	constexpr double kPi = 3.14159265358979323846;
	double e[kGapCount * kMaxRounds];
	const int all = (patterns - 1) * (n - 1);
	const int left = all - l.set_aside;
	const double noise = std::sqrt(kPi / 2 * l.residuals(e) / left / n);
	return l.set_aside ? noise * t_quantile(0.05, left) / t_quantile(0.05, all) : noise;
}

RateLimit find_rate_limit(const double *t_us, const double *amount, int n, double min_ahead)
{
	RateLimit l;
	if (n < 4)
		return l;
	// least squares over the n points and the origin (the series' start)
	double mt = 0, ma = 0;
	for (int i = 0; i < n; i++) {
		mt += t_us[i] / (n + 1);
		ma += amount[i] / (n + 1);
	}
	double stt = mt * mt, sta = mt * ma;   // the origin's terms
	for (int i = 0; i < n; i++) {
		stt += (t_us[i] - mt) * (t_us[i] - mt);
		sta += (t_us[i] - mt) * (amount[i] - ma);
	}
	if (!(stt > 0) || !(sta > 0))
		return l;
	l.per_s = sta / stt * 1e6;
	// the largest gain on that rate over a stretch, the origin a possible
	// start; and the rate of the stretches that served at least twice
	// min_ahead in at least kMinStretchReads reads, taking at each read the
	// shortest such stretch ending there (a lower bound on the fastest
	// stretch of that size: a longer one can be faster).  At twice the
	// series' rate such a stretch gained at least min_ahead on it.
	double low = 0;
	int from = -1;   // the stretch's start: the origin (-1) or a read
	auto t_at = [&](int i) { return i < 0 ? 0.0 : t_us[i]; };
	auto a_at = [&](int i) { return i < 0 ? 0.0 : amount[i]; };
	for (int j = 0; j < n; j++) {
		const double y = amount[j] - l.per_s * t_us[j] / 1e6;
		l.ahead = std::max(l.ahead, y - low);
		low = std::min(low, y);
		while (j - (from + 1) >= kMinStretchReads && amount[j] - a_at(from + 1) >= 2 * min_ahead)
			from++;
		if (j - from >= kMinStretchReads && amount[j] - a_at(from) >= 2 * min_ahead &&
			t_us[j] > t_at(from))
			l.ahead_per_s = std::max(l.ahead_per_s,
									 (amount[j] - a_at(from)) / (t_us[j] - t_at(from)) * 1e6);
	}
	l.found = l.ahead_per_s >= 2 * l.per_s;
	return l;
}

double repeated_limit(const RateLimit &a, const RateLimit &b)
{
	if (!a.found || !b.found || !(a.per_s > 0) || !(b.per_s > 0) ||
		std::max(a.per_s, b.per_s) > 1.25 * std::min(a.per_s, b.per_s))
		return 0;
	return std::sqrt(a.per_s * b.per_s);
}

double limited_us(const CalibrationRecord &r, double requests, double bytes)
{
	const double by_requests = r.limit_requests > 0 ? requests / r.limit_requests * 1e6 : 0;
	const double by_bytes = r.limit_bytes > 0 ? bytes / r.limit_bytes * 1e6 : 0;
	return std::max(by_requests, by_bytes);
}

int calibration_format(const char *text, std::size_t len)
{
	long long version;
	if (!integer(text, len, "version", &version) || version < 0 || version > 1000000)
		return -1;
	return static_cast<int>(version);
}

int format_calibration(const CalibrationRecord &r, char *out, std::size_t size)
{
	const Calibration &c = r.costs;
	int n = std::snprintf(
		out, size,
		"# vacskip.calibrate() of one tablespace; vacskip.forget_calibration() removes it\n"
		"version %d\n"
		"tablespace %s\n"
		"measured_at %lld\n"
		"seconds %.17g\n"
		"rounds %d\n"
		"server_major %d\n"
		"direct_io %d\n"
		"io_method %s\n"
		"io_workers %d\n"
		"maintenance_io_concurrency %d\n"
		"io_combine_limit %d\n"
		"cpu_page_us %.17g\n"
		"cpu_tuple_us %.17g\n"
		"noise_dof %d\n"
		"limit_requests %.17g\n"
		"limit_bytes %.17g\n"
		"read_ahead_kb %d\n"
		"directory %llu %llu %llu\n",
		kCalibrationFormat, r.tablespace, static_cast<long long>(r.measured_at), r.seconds,
		r.rounds, r.server_major, r.direct_io ? 1 : 0, io_method_name(r.io_method),
		r.io_workers, r.maintenance_io_concurrency, r.io_combine_limit, c.cpu_page_us,
		c.cpu_tuple_us, c.noise_dof, r.limit_requests, r.limit_bytes, r.read_ahead_kb,
		static_cast<unsigned long long>(r.directory.inode),
		static_cast<unsigned long long>(r.directory.born_ns),
		static_cast<unsigned long long>(r.directory.file_system));
	// one line per density and part: "read_us_<d> ", "start_read_us_<d> "
	// or "read_cpu_share_<d> " and the thresholds' figures; then the
	// noises, one per density
	for (int part = 0; part < 5; part++)
		for (int d = 0; d < (part != 2 && part != 3 ? kDensityCount : 1) && n > 0 &&
			 static_cast<std::size_t>(n) < size; d++) {
			const double *row = part == 0 ? c.read_us[d] : part == 1 ? c.start_read_us[d] :
				part == 2 ? c.read_noise : part == 3 ? c.start_read_noise : c.read_cpu_share[d];
			const int cols = part == 2 || part == 3 ? kDensityCount : kGapCount;
			int m = part < 2 ?
				std::snprintf(out + n, size - n, "%sread_us_%d", part == 0 ? "" : "start_", d) :
				part == 4 ? std::snprintf(out + n, size - n, "read_cpu_share_%d", d) :
				std::snprintf(out + n, size - n, "%sread_noise", part == 2 ? "" : "start_");
			for (int t = 0; t < cols && m > 0; t++) {
				if (static_cast<std::size_t>(n + m) >= size)
					break;
				m += std::snprintf(out + n + m, size - n - m, " %.17g", row[t]);
			}
			if (static_cast<std::size_t>(n + m) < size)
				m += std::snprintf(out + n + m, size - n - m, "\n");
			n += m;
		}
	return n;
}

bool parse_calibration(const char *text, std::size_t len, CalibrationRecord *out)
{
	CalibrationRecord r;
	long long version, at, direct;
	char method[32], line[512], key[32];
	if (!integer(text, len, "version", &version) || version != kCalibrationFormat)
		return false;
	if (!field(text, len, "tablespace", r.tablespace, sizeof(r.tablespace)) ||
		!integer(text, len, "measured_at", &at) ||
		!number(text, len, "seconds", &r.seconds) ||
		!int_field(text, len, "rounds", &r.rounds) ||
		!int_field(text, len, "server_major", &r.server_major) ||
		!integer(text, len, "direct_io", &direct) ||
		!field(text, len, "io_method", method, sizeof(method)) ||
		!int_field(text, len, "io_workers", &r.io_workers) ||
		!int_field(text, len, "maintenance_io_concurrency", &r.maintenance_io_concurrency) ||
		!int_field(text, len, "io_combine_limit", &r.io_combine_limit) ||
		!number(text, len, "cpu_page_us", &r.costs.cpu_page_us) ||
		!number(text, len, "cpu_tuple_us", &r.costs.cpu_tuple_us) ||
		!int_field(text, len, "noise_dof", &r.costs.noise_dof) ||
		!number(text, len, "limit_requests", &r.limit_requests) ||
		!number(text, len, "limit_bytes", &r.limit_bytes) ||
		!field(text, len, "read_noise", line, sizeof(line)) ||
		!numbers(line, r.costs.read_noise, kDensityCount) ||
		!field(text, len, "start_read_noise", line, sizeof(line)) ||
		!numbers(line, r.costs.start_read_noise, kDensityCount))
		return false;
	// a record without it (written before it was kept, in the same format)
	// says nothing of the readahead it was measured under
	if (field(text, len, "read_ahead_kb", line, sizeof(line)) &&
		!(int_field(text, len, "read_ahead_kb", &r.read_ahead_kb) && r.read_ahead_kb >= -1))
		return false;
	// nor, without it, of where: the directory's inode, birth time and file
	// system
	std::uint64_t place[3];
	if (field(text, len, "directory", line, sizeof(line))) {
		if (!unsigned_numbers(line, place, 3))
			return false;
		r.directory.inode = place[0];
		r.directory.born_ns = place[1];
		r.directory.file_system = place[2];
	}
	r.measured_at = at;
	r.direct_io = direct != 0;
	r.io_method = io_method_of(method);
	for (int d = 0; d < kDensityCount; d++) {
		std::snprintf(key, sizeof(key), "read_us_%d", d);
		if (!field(text, len, key, line, sizeof(line)) ||
			!numbers(line, r.costs.read_us[d], kGapCount))
			return false;
		std::snprintf(key, sizeof(key), "start_read_us_%d", d);
		if (!field(text, len, key, line, sizeof(line)) ||
			!numbers(line, r.costs.start_read_us[d], kGapCount))
			return false;
		std::snprintf(key, sizeof(key), "read_cpu_share_%d", d);
		if (!field(text, len, key, line, sizeof(line)) ||
			!numbers(line, r.costs.read_cpu_share[d], kGapCount))
			return false;
	}
	if (!calibration_valid(r.costs) || !(r.limit_requests >= 0) || !(r.limit_bytes >= 0))
		return false;
	*out = r;
	return true;
}

}  // namespace vacskip

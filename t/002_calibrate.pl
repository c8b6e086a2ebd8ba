# vacskip.calibrate(): its result survives a restart, autovacuum uses it,
# a copy of the data directory does not, two calibrations at once both
# land, a crash in the middle of one loses nothing, and
# forget_calibration() takes it back.  The autovacuum part
# needs the skip threshold hook; the rest runs on every server.
use strict;
use warnings FATAL => 'all';

use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('calib');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'vacskip'
log_autovacuum_min_duration = 0
autovacuum_naptime = 1s
# PostgreSQL's default, not the test clusters' minimal: there the scratch
# tables, created in calibrate()'s own transaction, are not WAL-logged
wal_level = replica
});
$node->append_conf('postgresql.conf',
	'vacuum_max_eager_freeze_failure_rate = 0')
  if $node->pg_version >= 18;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION vacskip');
my $hooked =
  $node->safe_psql('postgres', 'SELECT vacskip.hook_active()') eq 't';

# a second tablespace
my $spcdir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE other LOCATION '$spcdir'");

$node->safe_psql(
	'postgres', q{
CREATE TABLE t (id int, pad text) WITH (autovacuum_enabled = off);
INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
VACUUM t;
CREATE TABLE u (id int) WITH (autovacuum_enabled = off) TABLESPACE other;
INSERT INTO u SELECT generate_series(1, 20000);
VACUUM u;
});

# explain_threshold()'s source, calibration and threshold for $rel, in a
# session with $set (SET commands) first
sub explain_of
{
	my ($rel, $set) = @_;
	return $node->safe_psql('postgres',
		($set // '')
		  . "SELECT cost_source || '|' || calibration || '|' || all_frozen_threshold "
		  . "FROM vacskip.explain_threshold('$rel')");
}

# Replace a file by a new one (another inode: the file is read again
# however soon its size and time repeat).
sub replace_file
{
	my ($path, $text) = @_;
	open my $fh, '>', "$path.new" or die "could not write $path.new: $!";
	print $fh $text;
	close $fh or die "could not write $path.new: $!";
	rename "$path.new", $path or die "could not rename to $path: $!";
}

# Bounded in time: asked for 1 second, it reports (and takes) little more
# than that, writing its scratch table once and the least a round reads
# (with buffered reads most of a round).  A calibration that read its
# patterns only once warns that it cannot show its noise, one that read
# them twice that its noise rests on few degrees of freedom.
my $t0 = time();
my ($ret, $row, $stderr) = $node->psql('postgres',
	'SELECT seconds, rounds FROM vacskip.calibrate(seconds => 1)');
my $wall = time() - $t0;
is($ret, 0, 'calibrate(1 s) succeeded');
my ($seconds, $rounds) = split /\|/, ($row // '');
$rounds //= 0;
cmp_ok($rounds, '>=', 1, "calibrate(1 s) measured $rounds rounds");
cmp_ok($seconds, '>=', 1, "it measured for at least the second asked ($seconds s)");
cmp_ok($wall, '<', 60, "and returned within a minute ($wall s)");
sub warned
{
	my ($stderr, $rounds) = @_;
	my $word = $rounds < 2 ? 'once' : 'twice';
	return $stderr =~ /WARNING:  vacskip\.calibrate\(\) read its patterns only $word in/
	  && ($rounds < 2 ? $stderr =~ /One round cannot show/ : $stderr =~ /Two rounds leave/)
	  && $stderr =~ /HINT:  Calibrate for \d+ seconds or more/ ? 1 : 0;
}
is(warned($stderr, $rounds), $rounds < 3 ? 1 : 0,
	"a warning if and only if fewer than three rounds ($rounds)");
my $warnings = () = $stderr =~ /WARNING:/g;
is($warnings, $rounds < 3 ? 1 : 0, "no other warning ($rounds rounds)");

# Two rounds: the hint's seconds leave room for 3.5 rounds after the
# scratch table is written and the storage probed; from 1.5 rounds fewer,
# a round more each time until a call reads two (a round that cannot
# complete in time does not count), three calls at most.
if ($rounds < 2
	&& $stderr =~ /Calibrate for (\d+) seconds or more: a round took ([\d.]+) s/)
{
	my ($advised, $round) = ($1, $2);
	for my $try (0 .. 2)
	{
		my $secs = $advised + ($try - 1.5) * $round;
		my ($ret2, $row2, $stderr2) = $node->psql('postgres',
			"SELECT rounds FROM vacskip.calibrate(seconds => $secs)");
		is($ret2, 0, "calibrate($secs s) succeeded");
		my ($rounds2) = split /\n/, ($row2 // '');
		$rounds2 //= 0;
		is(warned($stderr2, $rounds2), $rounds2 < 3 ? 1 : 0,
			"calibrate($secs s): a warning if and only if fewer than three rounds ($rounds2)");
		last if $rounds2 >= 2;
	}
}

# longer, for rounds that measure the noise where the storage allows
my $ring_writes = q{SELECT sum(writes) FROM pg_stat_io
  WHERE backend_type = 'client backend' AND object = 'relation' AND context = 'vacuum'};
my $lsn0 = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my $writes0 =
  $node->pg_version >= 16 ? $node->safe_psql('postgres', $ring_writes) : 0;
($ret, $rounds, $stderr) = $node->psql('postgres',
	'SELECT rounds FROM vacskip.calibrate(seconds => 8); '
	  . 'SELECT pg_stat_force_next_flush()');
is($ret, 0, 'calibrate(8 s) succeeded');
($rounds) = split /\n/, ($rounds // '');
$rounds //= 0;
is(warned($stderr, $rounds), $rounds < 3 ? 1 : 0,
	"calibrate(8 s): a warning if and only if fewer than three rounds ($rounds)");

# Each page a pattern must read is dirtied and WAL-logged (a generic
# record), as VACUUM changes every page it must read: every complete round
# reads 8 densities x 6 thresholds = 48 patterns of at least 16 such pages
# (kMinNeeded).  And each pattern starts with its ring holding dirty pages
# in the share its own are, which its reads write back as VACUUM's do: a
# threshold-1 pattern reads only pages it must read, so every buffer of
# its ring is dirty and each of its reads (at least 16; a ring holds 16
# buffers or more) writes one, 8 such patterns a round.  The backend's
# relation writes through its ring are counted in pg_stat_io from 16 on.
# Over every pattern they come to about one per page it must read, that is
# per generic record: a pattern of R reads, N of them pages to read, finds
# the ring's B buffers dirty in its share N / R, spread evenly; its first
# min(R, B) reads write the ring's dirty pages, N / R of them (less one
# for rounding), its later ones the pages it dirtied itself, those among
# its first R - B reads; what its last B reads dirtied stays in the ring
# unwritten, against the ring's dirty share it wrote.  So each pattern
# writes its N less the pages to read among its last B reads plus N / R
# of B, about 0 on average.  Between two pages to read a pattern reads at
# most 31 pages through (a run of 32 or more it skips), so from one to
# the next it takes 1 to 32 reads, and the count of pages to read among B
# reads varies as a renewal count: variance B x var / mean^3 of those
# spacings, which for spacings from 1 to 32 is at most 4.52 B (all at 1
# and 32, 1.6 % at 32).  A call reads P = 48 patterns a round and at most
# a round more that it cuts short, each its own map: the sum's standard
# deviation is at most sqrt(4.6 B P); three of it, and two pages a
# pattern (rounding; a pattern ends on a page to read).
my $lsn1 = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
my ($dump_out, $dump_err) = run_command(
	[
		'pg_waldump', '--stats', '-p', $node->data_dir . '/pg_wal',
		'-s', $lsn0, '-e', $lsn1
	]);
my ($generic) = $dump_out =~ /^Generic\s+(\d+)/m;
$generic //= 0;
cmp_ok($generic, '>=', 48 * 16 * $rounds,
	"calibrate(8 s) logged $generic generic records in $rounds rounds");
if ($node->pg_version >= 16)
{
	my $writes = $node->safe_psql('postgres', $ring_writes) - $writes0;
	cmp_ok($writes, '>=', 8 * 16 * $rounds,
		"and its ring wrote $writes pages back");
	# the ring's buffers: vacuum_buffer_usage_limit, which the ring may
	# hold fewer than (a smaller ring only narrows the spread)
	my $ring = $node->safe_psql('postgres',
		q{SELECT pg_size_bytes(current_setting('vacuum_buffer_usage_limit'))
		   / current_setting('block_size')::int});
	my $patterns = 48 * ($rounds + 1);
	my $slack = 2 * $patterns + 3 * sqrt(4.6 * $ring * $patterns);
	cmp_ok($writes, '>=', $generic - $slack,
		sprintf('about one per page to read: %d writes, %d records, '
			  . 'ring of %d buffers, at most %.0f fewer', $writes, $generic, $ring, $slack));
}

my $before = explain_of('t');
like($before, qr/^calibration\|measured .* with .*\|\d+$/,
	'pg_default is calibrated and used');

# survives a restart, byte for byte
$node->restart;
is(explain_of('t'), $before, 'the same calibration after a restart');

# a file of another format (an older vacskip's) is not used, and the
# warning says why; put back, it is used again
{
	my $file = $node->data_dir . '/vacskip/calibration.1663';
	my $saved = slurp_file($file);
	(my $older = $saved) =~ s/^version \d+$/version 7/m;
	replace_file($file, $older);
	my ($ret, $source, $stderr) = $node->psql('postgres',
		q{SELECT cost_source FROM vacskip.explain_threshold('t')});
	is($source, 'settings', 'a calibration file of another format is not used');
	like($stderr,
		qr/WARNING:  vacskip: ignoring calibration file ".*calibration\.1663" of another format \(version 7; this vacskip reads version \d+\)/,
		'and the warning names its format');
	replace_file($file, $saved);
	is(explain_of('t'), $before, 'put back, it is used again');
}

# With buffered reads the calibration keeps the kernel's readahead of the
# device under the tablespace (its queue's read_ahead_kb; a partition's
# disk's), which decides what a read that misses brings in: a calibration
# measured under another is not used, and explain_threshold() names both;
# one that does not know its own (written before it was kept) is used.
{
	my $file = $node->data_dir . '/vacskip/calibration.1663';
	my $saved = slurp_file($file);
	my ($kept) = $saved =~ /^read_ahead_kb (-?\d+)$/m;
	# the device's, as /sys shows it (Linux's dev_t: 12 bits of the major
	# above 8 of the minor, and their upper bits above); none where no block
	# device shows one (tmpfs, overlayfs, btrfs, a network file system: an
	# anonymous device)
	my $dev = (stat($node->data_dir . '/base'))[0];
	my $maj = (($dev >> 8) & 0xfff) | (($dev >> 32) & 0xfffff000);
	my $min = ($dev & 0xff) | (($dev >> 12) & 0xffffff00);
	my $device = -1;
	for my $queue ('queue', '../queue')
	{
		my $f = "/sys/dev/block/$maj:$min/$queue/read_ahead_kb";
		next unless -r $f;
		($device) = (slurp_file($f) =~ /^(\d+)$/m, -1);
		last;
	}
	is($kept, $device,
		"the calibration keeps the readahead of the device under it ($device kB)");
	SKIP:
	{
		skip "no readahead of a block device under the data directory ($maj:$min)", 1
		  if $device < 0;
		my $other = $device == 128 ? 256 : 128;
		(my $moved = $saved) =~ s/^read_ahead_kb -?\d+$/read_ahead_kb $other/m;
		replace_file($file, $moved);
		like(
			explain_of('t'),
			qr/^settings\|not used: measured .* with buffered reads \(kernel readahead $other kB\), .* but VACUUM reads with buffered reads \(kernel readahead $device kB\), .* now; run vacskip\.calibrate\(\) again\|\d+$/,
			"measured under $other kB of readahead, it is not used under $device kB");
	}
	(my $unknown = $saved) =~ s/^read_ahead_kb -?\d+\n//m;
	replace_file($file, $unknown);
	like(explain_of('t'), qr/^calibration\|measured .* with buffered reads, .*\|\d+$/,
		'a record without its readahead is used');
	replace_file($file, $saved);
	is(explain_of('t'), $before, 'put back, it is used again');
}

# The calibration keeps where the tablespace's files lay: its directory's
# inode, when the directory was made and its file system.  A copy of the
# data directory (here cp -a of the stopped cluster; a base backup, a
# restore and data moved to other storage are copies alike) holds the
# calibration file but not the storage it measured: there it is not used
# until calibrate() runs there.  The original, and a record that does not
# know its place, use it.
{
	my $file = $node->data_dir . '/vacskip/calibration.1663';
	my $saved = slurp_file($file);
	my ($ino) = $saved =~ /^directory (\d+) \d+ \d+$/m;
	is($ino, (stat($node->data_dir . '/base'))[1],
		'the calibration keeps the inode of the tablespace\'s directory');
	my $copy = PostgreSQL::Test::Cluster->new('copy');
	$node->stop;
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $node->data_dir, $copy->data_dir);
	unlink $copy->data_dir . '/postmaster.pid';
	$copy->append_conf('postgresql.conf', 'port = ' . $copy->port);
	$copy->start;
	is(slurp_file($copy->data_dir . '/vacskip/calibration.1663'),
		$saved, 'the copy holds the same calibration file');
	like(
		$copy->safe_psql('postgres',
			"SELECT cost_source || '|' || calibration FROM vacskip.explain_threshold('t')"),
		qr/^settings\|not used: measured .* with .*, but the tablespace's directory is another one now \(a copy of the data: .*\); run vacskip\.calibrate\(\) again$/,
		'a copy of the data directory does not use the calibration it holds');
	$copy->safe_psql('postgres',
		'SET client_min_messages = error; SELECT vacskip.calibrate(seconds => 1)');
	like(
		$copy->safe_psql('postgres',
			"SELECT cost_source || '|' || calibration FROM vacskip.explain_threshold('t')"),
		qr/^calibration\|measured /, 'calibrated there, the copy uses its own');
	$copy->stop;
	$node->start;
	is(explain_of('t'), $before, 'the original still uses its own');
	(my $unknown = $saved) =~ s/^directory \d+ \d+ \d+\n//m;
	replace_file($file, $unknown);
	is(explain_of('t'), $before, 'a record without its place is used');
	replace_file($file, $saved);
	is(explain_of('t'), $before, 'put back, it is used again');
}

# Makes $table, 1,000 pages with every tenth page changed, and returns a
# sub that lets autovacuum process it and returns autovacuum's report: its
# first line and the indented ones after it (other tables' autovacuums, of
# catalogs in other databases too, log theirs).  Its cost-based delay is
# its own (reloptions: autovacuum does not balance it with other
# workers'): $delay ms for every 200 points of cost.
sub autovacuum_report
{
	my ($table, $delay) = @_;
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $table (id int, pad text) WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO $table SELECT g, repeat('x', 900) FROM generate_series(1, 4000) g;
VACUUM (FREEZE) $table;
UPDATE $table SET id = -id WHERE ctid = ANY (ARRAY(
  SELECT format('(%s,1)', p)::tid FROM generate_series(0, 999, 10) p));
});
	return sub {
		my $offset = -s $node->logfile;
		$node->safe_psql(
			'postgres', qq{
ALTER TABLE $table SET (autovacuum_enabled = on, autovacuum_vacuum_threshold = 0,
  autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_insert_threshold = -1,
  autovacuum_vacuum_cost_delay = $delay, autovacuum_vacuum_cost_limit = 200)});
		$node->wait_for_log(
			qr/automatic vacuum of table "postgres\.public\.$table"/, $offset);
		my ($log) = slurp_file($node->logfile, $offset) =~
		  /(automatic vacuum of table "postgres\.public\.$table"[^\n]*(?:\n[ \t][^\n]*)*)/
		  or die "no report of $table";
		return $log;
	};
}

# Whether autovacuum's report shows threshold $threshold (stock's 32: none).
sub reports_threshold
{
	my ($log, $threshold, $what) = @_;
	if ($threshold < 32)
	{
		like($log,
			qr/skip thresholds: $threshold all-frozen, $threshold all-visible;/,
			"$what: autovacuum used threshold $threshold");
	}
	else
	{
		unlike($log, qr/skip thresholds/,
			"$what: the threshold is stock's, autovacuum reports none");
	}
}

# autovacuum uses it (the hook's answer is explain_threshold()'s for a
# manual VACUUM with the same cost-based delay: autovacuum's default, 2 ms)
if ($hooked)
{
	my $run = autovacuum_report('av', 2);
	# its own threshold: VACUUM's work per page depends on the tuples on it
	my ($threshold) = explain_of('av', 'SET vacuum_cost_delay = 2;') =~
	  /^calibration\|.*\|(\d+)$/
	  or die 'av is not calibrated';
	reports_threshold($run->(), $threshold, 'calibrated');
}

# two calibrations at once, of two tablespaces: both land
my $a = $node->background_psql('postgres');
my $b = $node->background_psql('postgres');
$a->query_until(qr/started/, q{
\echo started
SET client_min_messages = error;
SELECT rounds >= 1 FROM vacskip.calibrate('pg_default', 1);
});
$b->query_until(qr/started/, q{
\echo started
SET client_min_messages = error;
SELECT rounds >= 1 FROM vacskip.calibrate('other', 1);
});
# (what each printed, then the 1 of the query that waits for it)
is($a->query_safe('SELECT 1'), "t\n1", 'first concurrent calibration finished');
is($b->query_safe('SELECT 1'), "t\n1", 'second concurrent calibration finished');
$a->quit;
$b->quit;
my $default_now = explain_of('t');
like($default_now, qr/^calibration\|measured/, 'pg_default calibrated');
isnt($default_now, $before, 'by the new calibration');
like(explain_of('u'), qr/^calibration\|measured/, 'the other tablespace too');
{
	# its directory: the version directory in the tablespace's location
	my ($dir) = glob("$spcdir/PG_*");
	my $spcoid = $node->safe_psql('postgres',
		"SELECT oid FROM pg_tablespace WHERE spcname = 'other'");
	my ($ino) = slurp_file($node->data_dir . "/vacskip/calibration.$spcoid") =~
	  /^directory (\d+) \d+ \d+$/m;
	is($ino, (stat($dir))[1],
		'the other tablespace\'s calibration keeps the inode of its directory');
}

# a crash in the middle of a calibration loses nothing: the one before it
# stays, the scratch tables are gone
my $c = $node->background_psql('postgres', on_error_stop => 0);
$c->query_until(qr/started/, q{
\echo started
SELECT vacskip.calibrate('pg_default', 60);
});
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE query LIKE 'SELECT vacskip.calibrate(%'"
) or die 'calibration did not start';
sleep(2);
$node->stop('immediate');
eval { $c->quit; };
$node->start;
is(explain_of('t'), $default_now, 'after a crash during calibration: the previous one');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relname LIKE 'calibration\\_%'"),
	'0', 'no scratch table left');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_dir('vacskip') f WHERE f LIKE '%.tmp.%'"),
	'0', 'no temporary file left');

# The cost-based delay decides where the figures leave it to: a
# calibration (written here) in which every page to read costs 200 µs at
# thresholds 1 to 8 and 20 at 16 and 32, alike at every density, with
# noises of 1 %, no work on a page and none of the reading on a CPU.  On
# a table with every tenth page changed 8 and below skip the nine pages
# between two changed ones, 16 and 32 read them through.  Its map has 101
# runs of one page to read (the last page too) and 899 pages that need not
# be read, density d = 101 / 899:
# each run costs 200 / (1 - d) at 8, 8 costs 22,757 µs in all; 32 costs
# 2,276 and its 899 pages read through their sleep.  With no delay 32 is
# cheapest.  At 1.8 ms for 200 points a page read through sleeps 9 µs a
# point: with PostgreSQL's vacuum_cost_page_miss (2) and vacuum_cost_page_hit
# (1, the free space map's page) 27 µs, 32 costs 26,549 and 8 is cheapest
# (1, 2 and 4 read the same pages and cost the same); without the hit's
# point 18 µs, 18,458, and 32 is.  Where the reads go on while VACUUM
# sleeps (18 with io_method worker or io_uring), a threshold costs its
# reading and its sleeping less what its naps hide, and every page to read
# sleeps too, with vacuum_cost_page_dirty's 20 points more (the page
# dirtied): 23 points, 207 µs, 20,907 for the 101.  Naps of 1.8 ms, 11.6
# of them at 8 and 25.1 at 32, each hiding up to 16 reads (the server's
# maintenance_io_concurrency), outnumber 8's 101 runs + 101 / 16 and 32's
# 1 + 1,000 / 16 reads: the naps hide all the sleep or the reading covers,
# and a threshold costs the longer of the two.  8 costs 22,757 (its
# reading is the longer), 32 20,907 + 899 * 27 = 45,180; without the hit's
# point 8 still costs 22,757 (101 * 198 = 19,998 of sleep), 32 19,998 +
# 899 * 18 = 36,180, and 8 is cheapest.
if ($hooked)
{
	my $file = $node->data_dir . '/vacskip/calibration.1663';
	my $made = slurp_file($file);
	$made =~ s/^((?:start_)?read_us_\d+) .*$/$1 200 200 200 200 20 20/mg;
	$made =~ s/^((?:start_)?read_noise) .*$/$1 . ' 0.01' x 8/mge;
	$made =~ s/^noise_dof .*$/noise_dof 10/m;
	$made =~ s/^cpu_(page|tuple)_us .*$/cpu_$1_us 0/mg;
	$made =~ s/^(read_cpu_share_\d+) .*$/$1 0 0 0 0 0 0/mg;
	$made =~ s/^limit_(requests|bytes) .*$/limit_$1 0/mg;
	replace_file($file, $made);
	my $run = autovacuum_report('dl', 1.8);
	my $overlaps = $node->safe_psql('postgres',
		q{SELECT coalesce(io_method IN ('worker', 'io_uring'), false)
FROM vacskip.explain_threshold('dl')}) eq 't';
	like(explain_of('dl'), qr/^calibration\|measured .*\|32$/,
		'written calibration, no delay: 32');
	like(explain_of('dl', 'SET vacuum_cost_delay = 1.8;'),
		qr/^calibration\|measured .*\|8$/, 'a delay of 1.8 ms: 8');
	is( $node->safe_psql(
			'postgres', q{SET vacuum_cost_delay = 1.8;
SELECT round(costs[4]) || '|' || round(costs[6]) FROM vacskip.explain_threshold('dl')}),
		$overlaps ? '22757|45180' : '22757|26549',
		'a delay of 1.8 ms: the costs of 8 and 32');
	my $nohit = 'SET vacuum_cost_delay = 1.8; SET vacuum_cost_page_hit = 0;';
	if ($overlaps)
	{
		is( $node->safe_psql(
				'postgres', qq{$nohit
SELECT round(costs[4]) || '|' || round(costs[6]) || '|' || all_frozen_threshold
FROM vacskip.explain_threshold('dl')}),
			'22757|36180|8',
			'a delay of 1.8 ms without the free space map\'s point: 8, at 36,180 for 32');
	}
	else
	{
		like(explain_of('dl', $nohit),
			qr/^calibration\|measured .*\|32$/,
			'a delay of 1.8 ms without the free space map\'s point: 32');
	}
	reports_threshold($run->(), 8, 'with its delay of 1.8 ms');
	$node->safe_psql('postgres', 'DROP TABLE dl');
}

# forget: back to the settings, and still after a restart
is($node->safe_psql('postgres', 'SELECT vacskip.forget_calibration()'),
	't', 'forgotten');
like(explain_of('t'), qr/^settings\|none: /, 'the settings again');
$node->restart;
like(explain_of('t'), qr/^settings\|none: /, 'and after a restart');
like(explain_of('u'), qr/^calibration\|measured/, 'the other tablespace keeps its own');

$node->stop;
done_testing();

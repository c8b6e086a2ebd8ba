# Autovacuum uses vacskip.threshold from postgresql.conf when vacskip is in
# shared_preload_libraries, fixed or autotuned from the tablespace's
# settings, and reports the thresholds in its log line.  On a
# server without the skip threshold hook, the same configuration loads and
# autovacuum behaves as stock.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pages = 1000;
my $every = 10;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'vacskip'
vacskip.threshold = 4
log_autovacuum_min_duration = 0
autovacuum_naptime = 1s
});
# eager scanning of all-visible pages (18+) would blur the skip rule
$node->append_conf('postgresql.conf',
	'vacuum_max_eager_freeze_failure_rate = 0')
  if $node->pg_version >= 18;
$node->start;

is($node->safe_psql('postgres', 'SHOW vacskip.threshold'),
	'4', 'threshold set in postgresql.conf');
$node->safe_psql('postgres', 'CREATE EXTENSION vacskip');
my $hooked =
  $node->safe_psql('postgres', 'SELECT vacskip.hook_active()') eq 't';
note('server ' . ($hooked ? 'has' : 'does not have') . ' the hook');

# Pages read by a non-aggressive VACUUM with threshold $t, given the
# visibility map as a list of "visible|frozen" strings (t/f): a skippable run
# is skipped iff it is at least $t pages long; the last page is always read.
sub predict
{
	my ($vm, $t) = @_;
	my ($scanned, $short, $b) = (0, 0, 0);
	my $n = scalar @$vm;
	while ($b < $n)
	{
		my $end = $b;
		$end++ while ($vm->[$end] =~ /^t/ && $end != $n - 1);
		my $run = $end - $b;
		if ($run < $t) { $scanned += $run; $short += $run; }
		$scanned++;
		$b = $end + 1;
	}
	return ($scanned, $short);
}

# Build the pattern table, let autovacuum process it, return its log line.
sub autovacuum_pattern
{
	my ($table) = @_;
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE $table (id int, pad text)
  WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO $table SELECT g, repeat('x', 900) FROM generate_series(1, $pages * 4) g;
VACUUM (FREEZE) $table;
UPDATE $table SET id = -id
  WHERE ctid = ANY (ARRAY(SELECT format('(%s,1)', p)::tid
                          FROM generate_series(0, $pages - 1, $every) p));
});
	is($node->safe_psql('postgres', "SELECT pg_relation_size('$table') / 8192"),
		$pages, "$table has $pages pages");
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS pg_visibility');
	my @vm = split /\n/,
	  $node->safe_psql('postgres',
		"SELECT all_visible || '|' || all_frozen FROM pg_visibility_map('$table') ORDER BY blkno"
	  );

	my $offset = -s $node->logfile;
	$node->safe_psql(
		'postgres', qq{
ALTER TABLE $table SET (autovacuum_enabled = on,
  autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = -1)});
	$node->wait_for_log(qr/automatic vacuum of table "postgres\.public\.$table"/,
		$offset);
	my $log = slurp_file($node->logfile, $offset);
	$log =~ /(automatic vacuum of table "postgres\.public\.$table".*?)(?=\n\S+ \S+ \S+ \[|\z)/s
	  or die "no log entry";
	return (\@vm, $1);
}

# Let autovacuum process a new pattern table; it must scan what the model
# predicts for threshold $t, and report the thresholds iff they are not 32.
sub check_autovacuum
{
	my ($table, $t, $what) = @_;
	my ($vm, $entry) = autovacuum_pattern($table);
	my ($want, $want_short) = predict($vm, $t);
	is($want, $t <= $every - 1 ? $pages / $every + 1 : $pages,
		"model: threshold $t reads "
		  . ($t <= $every - 1 ? 'the modified pages and the last page' : 'every page'));
	like($entry, qr/pages: 0 removed, $pages remain, $want scanned/,
		"$what scanned $want pages");
	if ($t != 32)
	{
		like($entry,
			qr/skip thresholds: $t all-frozen, $t all-visible; $want_short skippable pages scanned in shorter runs/,
			"$what: the log reports the thresholds");
	}
	else
	{
		unlike($entry, qr/skip thresholds/, "$what: stock thresholds are not reported");
	}
}

check_autovacuum('t4', $hooked ? 4 : 32, 'autovacuum with threshold 4');

# Back to stock behaviour through a reload.
$node->append_conf('postgresql.conf', 'vacskip.threshold = 32');
$node->reload;
check_autovacuum('t32', 32, 'autovacuum with threshold 32');

# Autotuned (-1, the default) with the database's tablespace described as
# fast: autovacuum uses the threshold the model derives from the
# tablespace's random_page_cost, the one explain_threshold() reports (below
# 32; the model's arithmetic is t/unit's), stock 32 without the hook.
$node->append_conf('postgresql.conf', 'vacskip.threshold = -1');
$node->reload;
$node->safe_psql('postgres',
	'ALTER TABLESPACE pg_default SET (random_page_cost = 1.1)');
my $auto = $node->safe_psql('postgres',
	'SELECT t.all_frozen_threshold FROM pg_class c, '
	  . "vacskip.explain_threshold(c.oid) t WHERE c.relname = 'pg_class'");
if ($hooked)
{
	cmp_ok($auto, '<', 32, "storage described as fast: threshold $auto");
}
else
{
	is($auto, 32, 'no hook: stock threshold');
}
check_autovacuum('tauto', $auto, 'autotuned autovacuum');
is($node->safe_psql('postgres', "SELECT vacskip.effective_threshold('tauto')"),
	$auto, "effective_threshold says $auto");

$node->stop;
done_testing();

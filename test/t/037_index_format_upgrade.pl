# test/t/037_index_format_upgrade.pl: indexes built by the 1.0 library (on-disk
# format 1) are read and written by the current library without a REINDEX
# (src/index/format1.c).
#
# The real 1.0 library is built from the release commit (8ec87ac: test/lib.sh
# puts `git archive 8ec87ac` in $SIMHASH_V10_SRC; on PostgreSQL 18 its one
# call of vacuum_delay_point() gets 18's argument) against this server and
# loaded by pointing the extension's functions at it (pg_proc.probin).  Under
# 1.0: two tables with simhash indexes (default geometry, and blocks 5 /
# max_distance 2), a run with inner pages, entries in the pending list, NULLs,
# entries VACUUM marked dead and dead rows not vacuumed yet.  Then the
# functions point at the current library again and the server restarts, as
# after `make install` or a package upgrade.  Checked with the current library:
#   - before any write: index, bitmap and ordered scans give the rows of a
#     sequential scan, simhash_index_check(..., true) passes, and the
#     metapage is still format 1 (reads do not write);
#   - INSERTs work and are found (the metapage is now format 2 in place,
#     the 1.0 runs are still read), more INSERTs flush new runs beside them;
#   - VACUUM (marking the 1.0 runs' entries dead), then VACUUM after many
#     deletes (rewriting the 1.0 runs), each followed by the same checks;
#   - crash recovery: inserts, an immediate stop, a restart, the checks;
#   - a streaming standby (from a backup taken right after the swap, of the
#     format-1 index) gives the same rows at every step;
#   - ALTER EXTENSION UPDATE, then REINDEX gives a format-2 index with the
#     same answers.
use strict;
use warnings;
use Cwd qw(abs_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $ENV{SIMHASH_V10_SRC};
plan skip_all => 'SIMHASH_V10_SRC (the 1.0 sources, git archive 8ec87ac) is not set'
  unless $src && -f "$src/Makefile" && -f "$src/src/am.h";

# build the 1.0 library in a scratch copy, with the server's pg_config
my $build = abs_path(PostgreSQL::Test::Utils::tempdir('simhash_v10'));	# probin is absolute
system("cp -R '$src/.' '$build/'") == 0 or die "copy $src: $!";
# PostgreSQL 18 gave vacuum_delay_point() an argument: the one call 1.0
# makes is adapted to it (nothing of the index's pages changes)
if (`pg_config --version` =~ /PostgreSQL (\d+)/ && $1 >= 18)
{
	my $file = "$build/src/am_vacuum.c";
	my $code = slurp_file($file);
	$code =~ s/vacuum_delay_point\(\);/vacuum_delay_point(false);/g;
	open my $out, '>', $file or die "write $file: $!";
	print $out $code;
	close $out;
}
my $make = system("make -s -C '$build' with_llvm=no >'$build/build.log' 2>&1");
if ($make != 0)
{
	diag(slurp_file("$build/build.log"));
	plan skip_all => 'the 1.0 library does not build against this server';
}
ok(-f "$build/simhash.so", 'the 1.0 library is built');

my $node = PostgreSQL::Test::Cluster->new('format_upgrade');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "autovacuum = off\n");
$node->start;

# the extension's C functions run the library named by their probin
sub use_library
{
	my ($from, $to) = @_;
	$node->safe_psql('postgres', qq{
		UPDATE pg_proc SET probin = '$to' WHERE probin = '$from'
	});
}

$node->safe_psql('postgres', "CREATE EXTENSION simhash VERSION '1.0'");
use_library('$libdir/simhash', "$build/simhash");
$node->restart;

# under 1.0: a run (with inner pages), the pending list, NULLs, dead entries
$node->safe_psql('postgres', q{
	CREATE TABLE t (id int, h simhash64);
	INSERT INTO t SELECT g, CASE WHEN g % 997 = 0 THEN NULL
		ELSE simhash_hash((g % 6000)::text)::simhash64 END FROM generate_series(1, 30000) g;
	CREATE INDEX t_h ON t USING simhash (h);
	CREATE TABLE u (id int, h simhash64);
	INSERT INTO u SELECT g, simhash_hash('u' || (g % 2000))::simhash64 FROM generate_series(1, 8000) g;
	CREATE INDEX u_h ON u USING simhash (h) WITH (blocks = 5, max_distance = 2);
	DELETE FROM t WHERE id % 50 = 0;
	DELETE FROM u WHERE id % 50 = 0;
	VACUUM t, u;
	INSERT INTO t SELECT g, simhash_hash((g % 6000)::text)::simhash64 FROM generate_series(30001, 30300) g;
	INSERT INTO u SELECT g, simhash_hash('u' || g)::simhash64 FROM generate_series(8001, 8100) g;
	DELETE FROM t WHERE id % 50 = 1;
	DELETE FROM u WHERE id % 50 = 1;
});
my $probin = $node->safe_psql('postgres',
	"SELECT probin FROM pg_proc WHERE proname = 'simhash_handler'");
is($probin, "$build/simhash", 'the index was built by the 1.0 library');
is(meta_version('t_h'), 1, 't_h has format 1');
is(meta_version('u_h'), 1, 'u_h has format 1');
my (undef, undef, $pending) = meta_page('t_h');
ok($pending, 't_h has a pending list under 1.0');

# the 1.0 library reads the version from the metapage: after the swap, the
# current library (as after make install or a package upgrade)
use_library("$build/simhash", '$libdir/simhash');
$node->restart;

# a streaming standby of the upgraded server: it reads the format-1 index
# without writing, and replays the metapage's rewrite and every change
$node->backup('upgraded');
my $standby = PostgreSQL::Test::Cluster->new('format_upgrade_standby');
$standby->init_from_backup($node, 'upgraded', has_streaming => 1);
$standby->start;

# queries whose rows must equal a sequential scan's
my @centers = map { hash_of($_) } ('17', '4242', '123', 'u17', 'u1999', 'x');
sub queries
{
	my @q;
	for my $c (@centers)
	{
		for my $tab ('t', 'u')
		{
			for my $r (0, 3, 6, 12)
			{
				push @q, "SELECT string_agg(id::text, ',' ORDER BY id) FROM $tab WHERE h <~> '$c' <= $r";
			}
			push @q, "SELECT string_agg(d::text, ',') FROM (SELECT h <~> '$c' AS d FROM $tab ORDER BY h <~> '$c' LIMIT 9) s";
		}
	}
	return @q;
}

# every query through the index (index and bitmap scans) against a
# sequential scan, on a server
sub check_scans
{
	my ($server, $when) = @_;
	my ($bad, $n) = (0, 0);
	for my $q (queries())
	{
		my $seq = $server->safe_psql('postgres',
			"SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
		for my $mode ('SET enable_seqscan = off; SET enable_bitmapscan = off;',
			'SET enable_seqscan = off; SET enable_indexscan = off;')
		{
			next if $q =~ /ORDER BY h/ && $mode =~ /enable_indexscan = off/;
			my $got = $server->safe_psql('postgres', "$mode $q");
			$n++;
			if ($got ne $seq)
			{
				$bad++;
				diag("$when: $mode $q\n  index: $got\n  seq:   $seq");
			}
		}
	}
	is($bad, 0, "$when: $n index scans give the rows of a sequential scan");
}

# the scans on the primary and on the standby (caught up), and
# simhash_index_check on both indexes
sub check_all
{
	my ($when) = @_;
	check_scans($node, $when);
	$node->wait_for_catchup($standby, 'replay');
	check_scans($standby, "$when, on the standby");
	for my $index ('t_h', 'u_h')
	{
		my ($rc, $out, $err) = $node->psql('postgres',
			"SELECT simhash_index_check('$index', true)");
		is($rc, 0, "$when: simhash_index_check('$index', true) passes") or diag($err);
	}
}

my $plan = $node->safe_psql('postgres',
	"SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM t WHERE h <~> '$centers[0]' <= 3");
like($plan, qr/Index Scan using t_h|Bitmap Index Scan on t_h/, 'the query uses the index');

check_all('1.0 index, no write yet');
is(meta_version('t_h'), 1, 'reads leave the metapage in format 1');

# writes: the first one upgrades the metapage in place
$node->safe_psql('postgres', q{
	INSERT INTO t VALUES (-1, simhash_hash('17')::simhash64), (-2, NULL);
	INSERT INTO u VALUES (-1, simhash_hash('u17')::simhash64);
});
is($node->safe_psql('postgres',
	"SET enable_seqscan = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM t WHERE h <~> '$centers[0]' <= 0 AND id < 0"),
	'-1', 'a row inserted after the upgrade is found through the index');
is(meta_version('t_h'), 2, 'the first write upgraded the metapage to format 2');
is((run_formats('t_h'))[0], 1, 'the 1.0 run of t_h is kept as it was');
diag('t_h runs (format 1, format 2): ' . join(', ', run_formats('t_h')));
check_all('after the first inserts');

# VACUUM: a few deletes (the 1.0 runs' entries marked dead in every tree)
$node->safe_psql('postgres', q{
	DELETE FROM t WHERE id % 50 = 2;
	DELETE FROM u WHERE id % 50 = 2;
	VACUUM t, u;
});
check_all('after VACUUM');
ok((run_formats('t_h'))[0] >= 1, 'VACUUM marked the 1.0 run of t_h in place');
diag('t_h runs after VACUUM (format 1, format 2): ' . join(', ', run_formats('t_h')));

# enough inserts to flush runs of format 2 beside the 1.0 runs
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT -g, simhash_hash((g % 6000)::text)::simhash64 FROM generate_series(3, 6000) g;
	INSERT INTO u SELECT -g, simhash_hash('u' || g)::simhash64 FROM generate_series(2, 3000) g;
});
check_all('after many inserts');
my ($old, $new) = run_formats('t_h');
ok($old >= 1 && $new >= 1, "t_h has runs of both formats ($old of format 1, $new of format 2)");


# crash recovery: inserts and deletes, then an immediate stop
$node->safe_psql('postgres', q{
	CHECKPOINT;
	INSERT INTO t SELECT -g, simhash_hash((g % 700)::text)::simhash64 FROM generate_series(6001, 9000) g;
	INSERT INTO u SELECT -g, simhash_hash('u' || (g % 700))::simhash64 FROM generate_series(3001, 4000) g;
	DELETE FROM t WHERE id % 50 = 3;
	VACUUM t;
});
$node->stop('immediate');
$node->start;
check_all('after crash recovery');

# VACUUM after many deletes: the runs are rewritten
$node->safe_psql('postgres', q{
	DELETE FROM t WHERE id % 3 = 0;
	DELETE FROM u WHERE id % 3 = 0;
	VACUUM t, u;
});
check_all('after VACUUM of many deletes');
is((run_formats('t_h'))[0] + (run_formats('u_h'))[0], 0, 'VACUUM rewrote the 1.0 runs');

# the extension's SQL updated, then REINDEX: format 2, the same answers
my %before = map { $_ => $node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $_") } queries();
$node->safe_psql('postgres', 'ALTER EXTENSION simhash UPDATE; REINDEX INDEX t_h; REINDEX INDEX u_h');
is(meta_version('t_h'), 2, 'after REINDEX t_h has format 2');
is(meta_version('u_h'), 2, 'after REINDEX u_h has format 2');
my $same = grep {
	$node->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $_") eq $before{$_}
} queries();
is($same, scalar(queries()), 'after REINDEX the index gives the same answers');
check_all('after REINDEX');

$standby->stop;
$node->stop;
done_testing();

# A fingerprint as text.
sub hash_of
{
	my ($s) = @_;
	return $node->safe_psql('postgres', "SELECT simhash_hash('$s')::simhash64");
}

# An index's metapage (block 0; its contents start at 24), read after a
# checkpoint: (version, the runs' formats, the pending entries before the
# tail pages of lane 0 or format 1's list).  The layouts: src/index/am.h
# (format 2) and src/core/index_pages.h SvMeta1 (format 1).
sub meta_page
{
	my ($index) = @_;
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $path = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$index')");
	open my $fh, '<', $path or die "open $path: $!";
	binmode $fh;
	my $page = '';
	sysread($fh, $page, 8192) == 8192 or die;
	close $fh;
	my ($magic, $version, $nblocks, $maxd, $ntables, $nruns) = unpack('VVVVVV', substr($page, 24, 24));
	die "not a simhash metapage" unless $magic == 0x53485831;
	my $lists = $version == 1 ? 3 : 17;		# pending, flushing (lanes), nulls
	my $runs = 24 + 32 + $lists * 24;
	my @formats = map { unpack('V', substr($page, $runs + 24 * $_ + 4, 4)) } 0 .. $nruns - 1;
	my ($head) = unpack('V', substr($page, 24 + 32, 4));
	return ($version, \@formats, $head != 0xFFFFFFFF);
}

# The format version in an index's metapage.
sub meta_version
{
	my ($version) = meta_page(@_);
	return $version;
}

# How many runs of format 1 (1) and of format 2 (0 or 2) the index has.
sub run_formats
{
	my (undef, $formats) = meta_page(@_);
	my $old = grep { $_ == 1 } @$formats;
	return ($old, scalar(@$formats) - $old);
}

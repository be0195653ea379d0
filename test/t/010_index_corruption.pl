# test/t/010_index_corruption.pl: a corrupted simhash index never takes the
# server down, never hangs, and never reports persistent corruption as a
# serialization failure (40001).
#
# 1. The four findings of issue #10, exactly as reported: a run header's
#    ntables overwritten (00000004, and 1), a leaf whose next pointer is
#    itself, an inner pointer to block 0, a tree height of 0xffff, a
#    metapage nruns of 100.  Each query must fail with XX002 naming the index.
# 2. Seeded random corruptions: indexes of several geometries (blocks,
#    max_distance) hold runs with inner levels, a pending list, a nulls
#    list, retired items (some on pages of their own) and free pages.  Each
#    round stops the server, restores every index from a pristine copy,
#    corrupts 1-4 bytes of one page of each index (page kinds in turn:
#    metapage, run header, inner, leaf, pending/nulls list, free, retired
#    page, key leaf (format 2: tables 1 .. n-1); at structural fields or
#    anywhere), starts the server and runs,
#    under statement_timeout, range scans (bitmap and index scan, probing
#    and whole-tree radii), ORDER BY h <~> q LIMIT, a key-less ordered scan,
#    simhash_index_check(heapallindexed), an insert that flushes (rolled
#    back) and VACUUM.  Each must return the rows of a sequential-scan
#    reference or fail cleanly: not 40001, not a timeout, not an internal
#    error (XX000).  Wrong rows are accepted only where the corruption
#    changed an entry's payload (hash, TID, flags: no check can tell those
#    without data checksums), and then simhash_index_check must report it.
#    The server log must never show a backend terminated by a signal.
#
# Environment: SIMHASH_CORRUPT_SEED (default 1), SIMHASH_CORRUPT_ROUNDS
# (default 10: ~160 corruptions for CI).  test/corruption.sh SEED COUNT runs
# this file for COUNT corruptions.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use SimhashIndexTest;

my $seed = $ENV{SIMHASH_CORRUPT_SEED} // 1;
my $rounds = $ENV{SIMHASH_CORRUPT_ROUNDS} // 10;
my $t0 = time;
my $BLCKSZ = 8192;

my $node = PostgreSQL::Test::Cluster->new('corrupt');
# pages are damaged on purpose: without data checksums (18's initdb enables
# them), so that the index's own checks, not the buffer manager's, see them
$node->init(no_data_checksums => 1);
$node->append_conf('postgresql.conf', q{
autovacuum = off
max_wal_size = 1GB
checkpoint_timeout = 1h
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', index_setup_sql());

# ---- reading and patching index files (server stopped) ----

sub relpath
{
	my ($rel) = @_;
	return $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$rel')");
}

sub read_page
{
	my ($path, $blkno) = @_;
	open my $fh, '<', $path or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $blkno * $BLCKSZ, 0) or die "seek: $!";
	my $page = '';
	sysread($fh, $page, $BLCKSZ) == $BLCKSZ or die "short read of block $blkno of $path";
	close $fh;
	return $page;
}

sub patch
{
	my ($path, $blkno, $off, $bytes) = @_;
	open my $fh, '+<', $path or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $blkno * $BLCKSZ + $off, 0) or die "seek: $!";
	syswrite($fh, $bytes) == length($bytes) or die "write: $!";
	close $fh;
}

# the pages of an index file: [blkno, kind, generation, next, pd_lower]
sub pages_of
{
	my ($path) = @_;
	my @pages;
	my $n = (-s $path) / $BLCKSZ;
	for my $b (0 .. $n - 1)
	{
		my $p = read_page($path, $b);
		my ($gen, $next, $kind, $id) = unpack('Q< V v v', substr($p, $BLCKSZ - 16, 16));
		my $lower = unpack('v', substr($p, 12, 2));
		$kind = 0 if $id != 0xFF8A;
		push @pages, { blkno => $b, kind => $kind, gen => $gen, next => $next, lower => $lower };
	}
	return @pages;
}

# run header r of the metapage: (block, ntables, [root, height] per tree)
sub run_header
{
	my ($path, $r) = @_;
	my $meta = read_page($path, 0);
	# runs[] after 32 bytes of fields, 8 pending and 8 flushing lanes, nulls
	my $hdr = unpack('V', substr($meta, 24 + 440 + 24 * $r, 4));
	my $p = read_page($path, $hdr);
	my $ntables = unpack('V', substr($p, 24 + 16, 4));
	my @trees = map { [ unpack('V v', substr($p, 48 + 8 * $_, 6)) ] } 0 .. $ntables - 1;
	return ($hdr, $ntables, \@trees);
}

# an error's SQLSTATE (psql with VERBOSITY verbose) or 00000
sub run_sql
{
	my ($sql) = @_;
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET statement_timeout = '60s';\n\\set VERBOSITY verbose\n$sql", on_error_stop => 0);
	my ($state) = $err =~ /ERROR:\s+([0-9A-Z]{5}):/;
	return ($state // '00000', $out, $err);
}

# ---- 1. the findings of issue #10, as reported ----

$node->safe_psql('postgres', q{
	CREATE TABLE ct (id int, h simhash64);
	INSERT INTO ct SELECT g, near(g % 400 + 1, g / 400) FROM generate_series(1, 6000) g;
	CREATE INDEX ct_h ON ct USING simhash (h) WITH (blocks = 4, max_distance = 3);
	CHECKPOINT;
});
my $ct = relpath('ct_h');
my $signals = 0;

# one finding: patch the stopped server's file, run the queries, restore
sub finding
{
	my ($label, $patches, @queries) = @_;
	$node->stop('fast');
	copy($ct, "$ct.orig") or die;
	patch($ct, @$_) for @$patches;
	$node->start;
	for my $q (@queries)
	{
		my ($state, $out, $err) = run_sql($q);
		is($state, 'XX002', "$label: \"$q\" fails with XX002")
		  or diag("stdout: $out\nstderr: $err");
		like($err, qr/index "ct_h"/, "$label: the error names the index");
	}
	$node->stop('fast');
	copy("$ct.orig", $ct) or die;
	$node->start;
}

my $probe = q{SET enable_seqscan = off; SELECT count(*) FROM ct WHERE h <~> '0123456789abcdef' <= 5};
my ($hdr, $ntables, $trees) = run_header($ct, 0);
is($ntables, 4, 'the index of the findings has 4 tables');
cmp_ok($trees->[0][1], '>=', 1, 'its trees have inner pages');
finding('finding 1: ntables 00000004', [ [ $hdr, 40, pack('H8', '00000004') ] ],
	$probe, "SELECT simhash_index_check('ct_h')");
finding('finding 1: ntables 1', [ [ $hdr, 40, pack('V', 1) ] ], $probe);

# finding 2: the first leaf of tree 0 points at itself
my $root = read_page($ct, $trees->[0][0]);
my $leaf = unpack('V', substr($root, 24 + 8, 4));
finding('finding 2: a leaf chain cycle', [ [ $leaf, $BLCKSZ - 8, pack('V', $leaf) ] ],
	q{SET enable_seqscan = off; SET statement_timeout = '20s'; SELECT count(*) FROM ct WHERE h <~> '0123456789abcdef' <= 20},
	q{SET enable_seqscan = off; SET statement_timeout = '20s'; SELECT id FROM ct ORDER BY h <~> '0123456789abcdef' LIMIT 5});

# finding 3: an inner pointer to block 0 (every item of the root of
# tree 0), a tree height of 0xffff, nruns = 100
my $nitems = (unpack('v', substr($root, 12, 2)) - 24) / 16;
finding('finding 3: inner pointers to block 0',
	[ map { [ $trees->[0][0], 24 + 16 * $_ + 8, pack('V', 0) ] } 0 .. $nitems - 1 ], $probe);
finding('finding 3: height 0xffff', [ [ $hdr, 48 + 4, pack('v', 0xffff) ] ], $probe);
finding('finding 3: nruns 100', [ [ 0, 24 + 20, pack('V', 100) ] ], $probe);

# ---- finding 4: simhash_index_check checks before it locks ----

# a user granted EXECUTE who does not own the index, and the owner on a
# btree index, while another session holds the table: both fail at once,
# without waiting for the lock
$node->safe_psql('postgres', q{
	CREATE ROLE regress_nobody LOGIN;
	GRANT EXECUTE ON FUNCTION simhash_index_check(regclass, boolean) TO regress_nobody;
	CREATE INDEX ct_id ON ct (id);
});
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE ct IN ACCESS EXCLUSIVE MODE');
my ($rc4, $out4, $err4) = $node->psql('postgres',
	"SET lock_timeout = '3s'; SELECT simhash_index_check('ct_h', true)",
	extra_params => [ '-U', 'regress_nobody' ]);
like($err4, qr/must be owner of index ct_h/, 'finding 4: a user who does not own the index is refused before any lock');
($rc4, $out4, $err4) = $node->psql('postgres',
	"SET lock_timeout = '3s'; SELECT simhash_index_check('ct_id')");
like($err4, qr/"ct_id" is not a simhash index/, 'finding 4: the access method is checked before the table is locked');
$locker->query_safe('COMMIT');
$locker->quit;

# ---- 2. seeded random corruptions ----

sub binomial
{
	my ($n, $k) = @_;
	my $c = 1;
	$c = $c * ($n - $_ + 1) / $_ for 1 .. $k;
	return $c;
}

# geometries (blocks, max_distance); the indexes of at most 4 tables also
# get more than SIMHASH_MAX_RETIRED retired items (a page of them)
my @geometries = ([ 4, 3 ], [ 6, 2 ], [ 7, 2 ], [ 3, 1 ], [ 5, 2 ], [ 1, 0 ], [ 12, 1 ], [ 4, 0 ]);
my $nindexes = $ENV{SIMHASH_CORRUPT_INDEXES} // 12;
my @tables = map { "c$_" } 1 .. $nindexes;

$node->safe_psql('postgres', q{
	-- how = ref (sequential scan), bitmap or index; what = range (ids
	-- within r of q), order (distances of the 10 nearest), keyless (count
	-- and sum of ids of every row, NULL keys included, by an ordered scan)
	CREATE FUNCTION run_test(tbl text, what text, how text, q simhash64, r int)
		RETURNS bigint[] LANGUAGE plpgsql AS $$
	DECLARE res bigint[];
	BEGIN
		PERFORM set_config('enable_seqscan', (how = 'ref')::text, true);
		PERFORM set_config('enable_bitmapscan', (how = 'bitmap')::text, true);
		PERFORM set_config('enable_indexscan', (how = 'index')::text, true);
		PERFORM set_config('enable_sort', (how = 'ref')::text, true);
		IF what = 'range' THEN
			EXECUTE format('SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM %I WHERE h <~> %L <= %s',
			               tbl, q, r) INTO res;
		ELSIF what = 'order' THEN
			EXECUTE format('SELECT array_agg(d) FROM (SELECT hamming_distance(h, %L)::bigint AS d FROM %I ORDER BY h <~> %L LIMIT 10) x',
			               q, tbl, q) INTO res;
		ELSE
			EXECUTE format('SELECT ARRAY[count(*), sum(id)] FROM (SELECT id FROM %I ORDER BY h <~> %L) x',
			               tbl, q) INTO res;
		END IF;
		RETURN res;
	END $$;

	CREATE TABLE refs (tbl text, what text, q simhash64, r int, ids bigint[]);

	-- every test on one index: (test, SQLSTATE, rows correct)
	CREATE FUNCTION probe(tbl text, with_insert boolean DEFAULT true)
		RETURNS TABLE (test text, state text, ok boolean)
		LANGUAGE plpgsql AS $$
	DECLARE
		x record;
		how text;
		got bigint[];
	BEGIN
		FOR x IN SELECT * FROM refs WHERE refs.tbl = probe.tbl LOOP
			FOREACH how IN ARRAY CASE WHEN x.what = 'range' THEN ARRAY['bitmap', 'index'] ELSE ARRAY['index'] END LOOP
				test := x.what || '/' || how || '/' || x.r;
				BEGIN
					got := run_test(tbl, x.what, how, x.q, x.r);
					state := '00000';
					ok := (got IS NOT DISTINCT FROM x.ids);
				EXCEPTION WHEN OTHERS THEN
					state := SQLSTATE;
					ok := NULL;
				END;
				RETURN NEXT;
			END LOOP;
		END LOOP;
		test := 'check';
		ok := NULL;
		BEGIN
			PERFORM simhash_index_check((tbl || '_h')::regclass, true);
			state := '00000';
		EXCEPTION WHEN OTHERS THEN
			state := SQLSTATE;
		END;
		RETURN NEXT;
		-- an insert that flushes the pending list (and merges), rolled back
		IF NOT with_insert THEN
			RETURN;
		END IF;
		test := 'insert';
		BEGIN
			EXECUTE format('INSERT INTO %I SELECT -g, near(g %% 50 + 1, 77) FROM generate_series(1, 2100) g', tbl);
			RAISE EXCEPTION 'rolled back' USING ERRCODE = 'P0099';
		EXCEPTION WHEN OTHERS THEN
			state := CASE WHEN SQLSTATE = 'P0099' THEN '00000' ELSE SQLSTATE END;
		END;
		RETURN NEXT;
	END $$;
});

# build the indexes: CREATE INDEX over 4,000 rows (runs with inner pages),
# inserts that flush and merge, deletes and VACUUM, then either retired
# items (a snapshot held during flushes keeps them) or more inserts and a
# VACUUM that recycles, and flushes that recycle (free pages); last a
# pending list and NULLs.  The
# heap is never truncated: the restored indexes hold entries of rolled-back
# inserts, whose TIDs must stay inside the heap.
my (@small, @large);
for my $i (1 .. $nindexes)
{
	my $tbl = $tables[ $i - 1 ];
	my ($m, $k) = @{ $geometries[ ($i - 1) % @geometries ] };
	$node->safe_psql('postgres', qq{
		CREATE TABLE $tbl (id int, h simhash64) WITH (vacuum_truncate = false);
		INSERT INTO $tbl SELECT g, CASE WHEN g % 500 = 0 THEN NULL ELSE near(g % 400 + 1, g / 400 + $i) END
			FROM generate_series(1, 4000) g;
		CREATE INDEX ${tbl}_h ON $tbl USING simhash (h) WITH (blocks = $m, max_distance = $k);
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(4001, 6200) g;
		DELETE FROM $tbl WHERE id % 17 = 3;
		VACUUM $tbl;
	});
	if (binomial($m, $k) <= 4)
	{
		push @small, $tbl;
		next;
	}
	push @large, $tbl;
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(10001, 12100) g;
		DELETE FROM $tbl WHERE id % 19 = 5 AND id > 10000;
		VACUUM $tbl;
		SELECT txid_current();
		VACUUM $tbl;
	});
	# VACUUM compacts the index and truncates its free pages (issue #13):
	# flushes after it retire runs and lists, and recycle them inside the file
	# (three: the merge policy merges the large run only at the second, and
	# the third recycles it)
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(12101, 14200) g;
		SELECT txid_current();
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(14201, 16300) g;
		SELECT txid_current();
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(16301, 18400) g;
	});
}

# the small indexes: 70 flushes of one row each while a snapshot is held
# (until the pristine copies): retired items overflow the metapage onto
# pages of their own
my $hold = $node->background_psql('postgres');
$hold->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1');
for my $tbl (@small)
{
	$node->safe_psql('postgres', join '',
		map { "INSERT INTO $tbl VALUES (-$_, near($_, 99)); VACUUM $tbl;\n" } 1 .. 70);
}

for my $i (1 .. $nindexes)
{
	my $tbl = $tables[ $i - 1 ];
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT g, near(g % 400 + 1, g / 400 + $i) FROM generate_series(6201, 6500) g;
		INSERT INTO $tbl VALUES (6501, NULL), (6502, NULL);
	});
	# references: two centers (a cluster base and a value near nothing),
	# radii probing (3) and reading whole trees (12)
	$node->safe_psql('postgres', qq{
		INSERT INTO refs (tbl, what, q, r)
			SELECT '$tbl', 'range', q, r FROM (VALUES (base(7 + $i)), (simhash_hash('lonely$i')::simhash64)) v(q),
				(VALUES (3), (12)) w(r)
			UNION ALL SELECT '$tbl', 'order', base(11 + $i), 0
			UNION ALL SELECT '$tbl', 'keyless', base(13), 0;
		UPDATE refs SET ids = run_test(tbl, what, 'ref', q, r) WHERE tbl = '$tbl';
	});
	my $plan = $node->safe_psql('postgres', qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		EXPLAIN SELECT id FROM $tbl WHERE h <~> base(1) <= 3});
	like($plan, qr/Index Scan using ${tbl}_h/, "$tbl: the tests reach the index");
}
my $bad = $node->safe_psql('postgres',
	q{SELECT string_agg(tbl || ':' || test || ':' || state, ' ') FROM refs, probe(tbl, false) WHERE state <> '00000' OR ok = false});
is($bad, '', 'before any corruption, every test passes on every index');
note sprintf('set-up: %.0f s', time - $t0);

# pristine copies of every index file (all forks), and their pages
my (%path, %pages, %counts);
$path{$_} = relpath("$_\_h") for @tables;
$node->stop('fast');
eval { $hold->quit };
for my $tbl (@tables)
{
	my $p = $path{$tbl};
	for my $f (glob("$p $p\_*"))
	{
		copy($f, "$f.pristine") or die "copy $f: $!";
	}
	$pages{$tbl} = [ pages_of($p) ];
	$counts{$_->{kind}}++ for @{ $pages{$tbl} };
}
note 'page kinds over all indexes (1 meta, 2 run header, 3 inner, 4 leaf, 5 list, 6 free, 7 retired, 8 key leaf): '
  . join(', ', map { "$_: $counts{$_}" } sort keys %counts);
for my $kind (1 .. 8)
{
	ok($counts{$kind}, "the indexes have pages of kind $kind");
}

# A corruption of one page of an index: [blkno, offset, bytes, description]
sub corruption
{
	my ($tbl, $n) = @_;
	my @all = @{ $pages{$tbl} };
	my %bykind;
	push @{ $bykind{ $_->{kind} } }, $_ for @all;
	my @kinds = sort keys %bykind;
	my $kind = $kinds[ $n % @kinds ];
	my $pg = $bykind{$kind}[ int(rand(@{ $bykind{$kind} })) ];
	my $b = $pg->{blkno};
	my $mode = rand();
	my ($off, $len);
	if ($mode < 0.45)
	{
		# a structural field: page header, special space, the run header's
		# or metapage's fields, an inner item's child, a leaf's header
		my @fields = ([ 12, 6 ], [ $BLCKSZ - 16, 16 ]);
		push @fields, [ 24, 24 + 8 * 10 ] if $kind == 2;
		push @fields, [ 24, 440 + 24 * 48 + 8 + 24 * 4 ] if $kind == 1;
		push @fields, map { [ 24 + 16 * $_ + 8, 4 ] } 0 .. 3 if $kind == 3;
		push @fields, [ 24, 24 * 20 ] if $kind == 7;
		push @fields, [ 24, 16 ] if $kind == 4 || $kind == 8;    # a leaf's header (format 2)
		my $f = $fields[ int(rand(@fields)) ];
		$off = $f->[0] + int(rand($f->[1]));
		$len = 1 + int(rand(4));
	}
	elsif ($mode < 0.7 && $pg->{lower} > 24 && $pg->{lower} < $BLCKSZ)
	{
		$off = 24 + int(rand($pg->{lower} - 24));    # the page's contents
		$len = 1 + int(rand(4));
	}
	else
	{
		$off = int(rand($BLCKSZ));
		$len = 1 + int(rand(4));
	}
	$len = $BLCKSZ - $off if $off + $len > $BLCKSZ;
	my $r = rand();
	my $bytes;
	if ($r < 0.15)
	{
		$bytes = "\0" x $len;
	}
	elsif ($r < 0.3)
	{
		$bytes = "\xff" x $len;
	}
	elsif ($r < 0.5 && $len == 4)
	{
		# a block number: itself, a neighbour, another page of the index
		my @cands = ($b, $b + 1, $b - 1, int(rand(scalar @all)), 0);
		$bytes = pack('V', $cands[ int(rand(@cands)) ]);
	}
	else
	{
		$bytes = join '', map { chr(int(rand(256))) } 1 .. $len;
	}
	return [ $b, $off, $bytes,
		sprintf('%s block %u (kind %d) +%u = %s', $tbl, $b, $kind, $off, unpack('H*', $bytes)) ];
}

srand($seed);
my $logpos = -s $node->logfile;
my ($ncorrupt, $failures, %outcomes) = (0, 0);
for my $round (1 .. $rounds)
{
	# restore every index, corrupt one page of each
	my %done;
	for my $tbl (@tables)
	{
		my $p = $path{$tbl};
		unlink grep { !/\.pristine$/ } glob("$p $p\_*");
		for my $f (glob("$p.pristine $p\_*.pristine"))
		{
			(my $to = $f) =~ s/\.pristine$//;
			copy($f, $to) or die "restore $to: $!";
		}
		my $c = corruption($tbl, $round * $nindexes + length($tbl) + $round);
		patch($path{$tbl}, $c->[0], $c->[1], $c->[2]);
		$done{$tbl} = $c->[3];
		$ncorrupt++;
	}
	$node->start;
	my $script = "SET statement_timeout = '60s';\n";
	for my $tbl (@tables)
	{
		$script .= "SELECT 'R|$tbl|' || test || '|' || state || '|' || coalesce(ok::text, '') FROM probe('$tbl');\n"
		  . "\\echo 'P|$tbl|' :SQLSTATE\n"
		  . "VACUUM $tbl;\n"
		  . "\\echo 'V|$tbl|' :SQLSTATE\n";
	}
	my ($rc, $out, $err) = $node->psql('postgres', $script, on_error_stop => 0);
	my (%wrong, %checkstate, %seen, @bad);
	for my $line (split /\n/, $out)
	{
		my ($tag, $tbl, @f) = split /\|/, $line;
		next unless defined $tbl;
		$tbl =~ s/\s+//g;
		my ($test, $state, $okrows);
		if ($tag eq 'R') { ($test, $state, $okrows) = @f; }
		elsif ($tag eq 'P') { ($test, $state) = ('probe', $f[0]); }
		elsif ($tag eq 'V') { ($test, $state) = ('vacuum', $f[0]); }
		else { next; }
		$state =~ s/\s+//g;
		$seen{"$tag$tbl"} = 1;
		$outcomes{"$test:$state"}++;
		$checkstate{$tbl} = $state if $test eq 'check';
		$wrong{$tbl} .= "$test " if defined $okrows && $okrows eq 'false';
		push @bad, "$test: $state ($done{$tbl})"
		  if $state =~ /^(40001|57014|XX000)$/ || ($tag eq 'P' && $state ne '00000');
	}
	for my $tbl (@tables)
	{
		push @bad, "no result of probe or VACUUM ($done{$tbl})"
		  unless $seen{"P$tbl"} && $seen{"V$tbl"};
		push @bad, "wrong rows ($wrong{$tbl}) and simhash_index_check passed ($done{$tbl})"
		  if $wrong{$tbl} && ($checkstate{$tbl} // '') eq '00000';
		$outcomes{'wrong rows, detected by the check'}++
		  if $wrong{$tbl} && ($checkstate{$tbl} // '00000') ne '00000';
	}
	my $log = slurp_file($node->logfile, $logpos);
	$logpos = -s $node->logfile;
	push @bad, "server log: $1" if $log =~ /(.*(terminated by signal|PANIC).*)/;
	if (@bad)
	{
		$failures++;
		diag("round $round: $_") for @bad;
	}
	$node->stop('fast');
}
is($failures, 0, "$ncorrupt corruptions (seed $seed, $rounds rounds): every test returned correct rows or failed cleanly");
note 'outcomes: ' . join(', ', map { "$_ $outcomes{$_}" } sort keys %outcomes);
note sprintf('%.0f s', time - $t0);

# the pristine indexes are fine again
for my $tbl (@tables)
{
	my $p = $path{$tbl};
	unlink grep { !/\.pristine$/ } glob("$p $p\_*");
	for my $f (glob("$p.pristine $p\_*.pristine"))
	{
		(my $to = $f) =~ s/\.pristine$//;
		copy($f, $to) or die;
	}
}
$node->start;
is($node->safe_psql('postgres', "SELECT count(*) FROM refs, probe(tbl) WHERE test <> 'insert' AND (state <> '00000' OR ok = false)"),
	'0', 'restored indexes pass every test');
done_testing();

# test/t/041_exclusion.pl: near-duplicate exclusion constraints,
# EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&), under concurrency, after
# a crash, on a promoted standby and through pg_dump.  Sessions are held at
# known points: one inserts (or deletes) in an open transaction, another's
# insert must then wait for that transaction, which the test sees in
# pg_locks (polling until it shows, which it does because the insert is
# blocked: nothing depends on timing); then the first commits or aborts
# and the test checks the outcome.
#  - an insert near an uncommitted one waits for it (the index returns the
#    in-progress entry to the dirty-snapshot check), from the pending lanes
#    and from a run; commit: 23P01, abort: stored
#  - N sessions inserting mutual near-duplicates at once (released together
#    by the abort of a holder): exactly one commits, the others fail with
#    23P01 or 40P01; the same with ON CONFLICT DO NOTHING: exactly one row,
#    no error
#  - an insert racing a DELETE of the conflicting row: stored if the
#    DELETE commits, 23P01 if it aborts
#  - two transactions each inserting near the other's row: a deadlock,
#    reported (40P01) as for a GiST exclusion constraint, never a hang
#  - pgbench clients inserting near-duplicates of a few fingerprints: no
#    stored pair within the radius afterwards
#  - crash (immediate stop) with rows in the pending lanes and an open
#    transaction: the constraint holds after recovery
#  - a promoted streaming standby enforces the constraint
#  - pg_dump and restore: the constraint is back, \d shows it, it holds
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SimhashIndexTest;

my $node = PostgreSQL::Test::Cluster->new('exclusion');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
max_connections = 40
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', index_setup_sql());
$node->safe_psql('postgres', q{
	CREATE TABLE docs (id int, h simhash64,
		CONSTRAINT docs_near EXCLUDE USING simhash (simhash_ball(h, 3) WITH &&));
	-- 3,000 rows: a run and pending entries
	INSERT INTO docs SELECT -g, simhash_hash('doc ' || g)::simhash64 FROM generate_series(1, 3000) g;
	-- fp(c): a fingerprint near no other (cluster bases of index_setup_sql);
	-- fp1(c, b): fp(c) with bit b flipped (two of them are 2 bits apart)
	CREATE FUNCTION fp(c int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS $$ SELECT base(c + 10000) $$;
	CREATE FUNCTION fp1(c int, b int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS $$ SELECT (fp(c)::bigint # (1::bigint << b))::simhash64 $$;
});

# a background session and its backend's pid
sub session
{
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	chomp $pid;
	return ($s, $pid);
}

# start $sql in session $s without waiting for it
sub start
{
	my ($s, $sql) = @_;
	$s->{stderr} = '';
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
}

# wait until backend $pid waits for a transaction (or a speculative
# insertion's token), and return the xid it waits for
sub wait_for_xact
{
	my ($pid, $what) = @_;
	$node->poll_query_until('postgres', qq{
		SELECT count(*) > 0 FROM pg_locks
		WHERE pid = $pid AND NOT granted AND locktype IN ('transactionid', 'speculative token')
	}) or die "$what: the session never waited for a transaction";
	return $node->safe_psql('postgres', qq{
		SELECT transactionid FROM pg_locks
		WHERE pid = $pid AND NOT granted AND locktype IN ('transactionid', 'speculative token')
	});
}

# the output (stdout, stderr) of the statement started in $s, once done
sub finish
{
	my ($s) = @_;
	my $out = $s->query('SELECT 0 AS finished');
	my $err = $s->{stderr};
	$s->{stderr} = '';
	$out =~ s/\n?0$//;
	return ($out, $err);
}

sub rows
{
	my ($where) = @_;
	return $node->safe_psql('postgres', "SELECT count(*) FROM docs WHERE $where");
}

# 1. an insert near an uncommitted one waits for its transaction; commit
# makes it a violation, abort lets it in.  $flush: before the second
# insert, enough other rows go in to flush the pending lanes, so the
# uncommitted entry is found in a run.
my $case = 0;
for my $flush (0, 1)
{
	for my $end ('COMMIT', 'ROLLBACK')
	{
		my $c = ++$case;
		my $label = "uncommitted near-duplicate" . ($flush ? ' (in a run)' : '') . ", $end";
		my ($s1) = session();
		my $xid1 = $s1->query_safe("BEGIN; INSERT INTO docs VALUES ($c, fp($c)); SELECT txid_current();");
		chomp $xid1;
		if ($flush)
		{
			my $gen = $node->safe_psql('postgres', 'SELECT generation FROM index_meta($$docs_near$$)');
			$node->safe_psql('postgres', "INSERT INTO docs SELECT -10000 * $c - g, simhash_hash('flush $c ' || g)::simhash64 FROM generate_series(1, 2500) g");
			cmp_ok($node->safe_psql('postgres', 'SELECT generation FROM index_meta($$docs_near$$)'),
				'>', $gen, "$label: the pending lanes were flushed");
		}
		my ($s2, $pid2) = session();
		start($s2, "INSERT INTO docs VALUES ($c + 1000, fp1($c, 5)) RETURNING id");
		is(wait_for_xact($pid2, $label), $xid1 % (2**32), "$label: the second insert waits for the first transaction");
		$s1->query_safe("$end;");
		my ($out, $err) = finish($s2);
		if ($end eq 'COMMIT')
		{
			like($err, qr/conflicting key value violates exclusion constraint "docs_near"/, "$label: 23P01");
			like($err, qr/Key \(simhash_ball\(h, 3::bigint\)\)=\(\(\w+,3\)\) conflicts with existing key/,
				"$label: the message names the keys");
			is(rows("id IN ($c, $c + 1000)"), 1, "$label: only the first row");
		}
		else
		{
			is($err, '', "$label: no error");
			is($out, $c + 1000, "$label: the second row is stored");
		}
		$s1->quit;
		$s2->quit;
	}
}

# 2. N sessions insert mutual near-duplicates (fp1(c, b): 2 bits apart, 1
# from fp(c)), all waiting for a holder's uncommitted fp(c); the holder
# aborts and they go on together.  Exactly one stores its row.  With
# COMMIT instead, none does.
sub race
{
	my ($c, $n, $end, $conflict) = @_;
	my $label = "$n sessions, " . ($conflict ? 'ON CONFLICT DO NOTHING, ' : '') . "holder $end";
	my ($h) = session();
	$h->query_safe("BEGIN; INSERT INTO docs VALUES ($c, fp($c));");
	my @s;
	for my $i (1 .. $n)
	{
		my ($s, $pid) = session();
		start($s, "INSERT INTO docs VALUES ($c * 100 + $i, fp1($c, $i * 7))"
			  . ($conflict ? ' ON CONFLICT DO NOTHING' : '') . ' RETURNING id');
		wait_for_xact($pid, $label);
		push @s, $s;
	}
	$h->query_safe("$end;");
	my ($stored, $violations, $deadlocks, $other) = (0, 0, 0, '');
	for my $s (@s)
	{
		my ($out, $err) = finish($s);
		$stored++ if $out =~ /^\d+$/;
		if ($err =~ /conflicting key value violates exclusion constraint "docs_near"/) { $violations++ }
		elsif ($err =~ /deadlock detected/) { $deadlocks++ }
		elsif ($err ne '') { $other .= $err }
		$s->quit;
	}
	$h->quit;
	my $want = $end eq 'COMMIT' ? 0 : 1;
	is($stored, $want, "$label: $want of them stored");
	is(rows("id BETWEEN $c * 100 + 1 AND $c * 100 + $n"), $want, "$label: $want row in the table");
	is($other, '', "$label: no other error");
	if ($conflict)
	{
		is($violations + $deadlocks, 0, "$label: no error at all");
	}
	else
	{
		is($violations + $deadlocks, $n - $want, "$label: the others fail with 23P01 or 40P01")
		  and note "$label: $violations violations, $deadlocks deadlocks";
	}
}
race(21, 4, 'ROLLBACK', 0);
race(22, 4, 'COMMIT', 0);
race(23, 4, 'ROLLBACK', 1);
race(24, 4, 'COMMIT', 1);

# 3. an insert racing a DELETE of the row it is near: it waits for the
# deleting transaction; stored if the DELETE commits, 23P01 if it aborts
for my $end ('COMMIT', 'ROLLBACK')
{
	my $c = $end eq 'COMMIT' ? 31 : 32;
	my $label = "insert racing a DELETE, $end";
	$node->safe_psql('postgres', "INSERT INTO docs VALUES ($c, fp($c))");
	my ($d) = session();
	my $xid = $d->query_safe("BEGIN; DELETE FROM docs WHERE id = $c; SELECT txid_current();");
	chomp $xid;
	my ($s, $pid) = session();
	start($s, "INSERT INTO docs VALUES ($c + 1000, fp1($c, 9)) RETURNING id");
	is(wait_for_xact($pid, $label), $xid % (2**32), "$label: the insert waits for the DELETE's transaction");
	$d->query_safe("$end;");
	my ($out, $err) = finish($s);
	if ($end eq 'COMMIT')
	{
		is($err, '', "$label: no error");
		is(rows("id IN ($c, $c + 1000)"), 1, "$label: only the new row");
		is($out, $c + 1000, "$label: the new row is stored");
	}
	else
	{
		like($err, qr/conflicting key value violates exclusion constraint "docs_near"/, "$label: 23P01");
		is(rows("id IN ($c, $c + 1000)"), 1, "$label: only the old row");
	}
	$d->quit;
	$s->quit;
}

# 4. two transactions, each inserting near the other's uncommitted row: a
# deadlock, detected and reported as for a GiST exclusion constraint (one
# transaction fails with 40P01, the other goes on), never a hang
$node->safe_psql('postgres', q{
	CREATE TABLE boxes (id int, b box, CONSTRAINT boxes_overlap EXCLUDE USING gist (b WITH &&));
});
sub deadlock
{
	my ($label, $first_a, $first_b, $second_a, $second_b, $check) = @_;
	my ($a, $pa) = session();
	my ($b, $pb) = session();
	$a->query_safe("BEGIN; $first_a;");
	$b->query_safe("BEGIN; $first_b;");
	start($a, $second_a);
	wait_for_xact($pa, $label);
	start($b, $second_b);
	my ($out_b, $err_b) = finish($b);
	my ($out_a, $err_a) = finish($a);
	my @failed = grep { /deadlock detected/ } ($err_a, $err_b);
	is(scalar @failed, 1, "$label: one transaction fails with a deadlock");
	like($failed[0] // '', qr/Process \d+ waits for ShareLock on transaction \d+; blocked by process \d+/,
		"$label: the deadlock's detail");
	is(join('', grep { !/deadlock detected/ } ($err_a, $err_b)), '', "$label: the other has no error");
	$a->query_safe('COMMIT;');
	$b->query_safe('COMMIT;');
	is($node->safe_psql('postgres', $check), 2, "$label: the survivor's two rows are stored");
	$a->quit;
	$b->quit;
}
deadlock('simhash deadlock',
	"INSERT INTO docs VALUES (41, fp(41))", "INSERT INTO docs VALUES (42, fp(42))",
	"INSERT INTO docs VALUES (4201, fp1(42, 3))", "INSERT INTO docs VALUES (4101, fp1(41, 3))",
	'SELECT count(*) FROM docs WHERE id IN (41, 42, 4101, 4201)');
deadlock('GiST deadlock (reference)',
	"INSERT INTO boxes VALUES (1, box '((0,0),(1,1))')", "INSERT INTO boxes VALUES (2, box '((5,5),(6,6))')",
	"INSERT INTO boxes VALUES (3, box '((5.5,5.5),(7,7))')", "INSERT INTO boxes VALUES (4, box '((0.5,0.5),(2,2))')",
	'SELECT count(*) FROM boxes');

# 5. pgbench clients insert near-duplicates of 30 fingerprints (fp1(c, b),
# all of one c within 2 bits of each other) by ON CONFLICT DO NOTHING:
# afterwards no pair of stored rows is within the radius and each c has one
# row, whatever the interleaving
my $pairs_before = $node->safe_psql('postgres', q{SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)});
is($pairs_before, 0, 'no pair within the radius before pgbench');
$node->pgbench(
	'--no-vacuum --client=6 --transactions=150 --random-seed=41',
	0, [qr/processed: 900\/900/], [qr/^(?:pgbench: setting random seed to 41\n)?$/],
	'pgbench: near-duplicates inserted concurrently',
	{
		'041_insert' => q{
\set c random(501, 530)
\set b random(0, 63)
INSERT INTO docs VALUES (:c * 1000 + :b, fp1(:c, :b)) ON CONFLICT DO NOTHING;
},
	});
is($node->safe_psql('postgres', q{SELECT count(*) FROM simhash_pairs('docs', 'id', 'h', 3)}), 0,
	'after pgbench: no pair within the radius');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT id / 1000) || \' \' || count(*) FROM docs WHERE id BETWEEN 501000 AND 530999'),
	'30 30', 'after pgbench: one row for each of the 30 fingerprints');
index_check_ok($node, 'postgres', 'docs_near', 'after pgbench');

# 6. crash: committed rows in the pending lanes and a transaction left open;
# after recovery the committed rows still refuse their near-duplicates,
# the open transaction's row is gone and no longer refuses anything
$node->safe_psql('postgres', 'CHECKPOINT');
$node->safe_psql('postgres', 'INSERT INTO docs SELECT 600 + g, fp(600 + g) FROM generate_series(1, 20) g');
note 'before the crash: ' . index_meta($node, 'postgres', 'docs_near');
my ($open) = session();
$open->query_safe('BEGIN; INSERT INTO docs VALUES (700, fp(700));');
$node->stop('immediate');
$open->{run}->kill_kill;
$node->start;
my ($rc, $out, $err) = $node->psql('postgres', 'INSERT INTO docs VALUES (6101, fp1(610, 1))');
like($err, qr/conflicting key value violates exclusion constraint "docs_near"/,
	'after the crash: a near-duplicate of a row committed before it is refused');
($rc, $out, $err) = $node->psql('postgres', 'INSERT INTO docs VALUES (7001, fp1(700, 1))');
is($err, '', 'after the crash: the near-duplicate of an uncommitted row is stored');
is($node->safe_psql('postgres',
		'INSERT INTO docs VALUES (6102, fp1(610, 2)) ON CONFLICT DO NOTHING RETURNING id'),
	'', 'after the crash: ON CONFLICT DO NOTHING skips a near-duplicate');
index_check_ok($node, 'postgres', 'docs_near', 'after the crash');

# 7. a streaming standby, promoted: it refuses what the primary refused
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('exclusion_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
$node->safe_psql('postgres', 'INSERT INTO docs SELECT 800 + g, fp(800 + g) FROM generate_series(1, 20) g');
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres', q{
	SET enable_seqscan = off;
	SELECT id FROM docs WHERE simhash_ball(h, 3) && simhash_ball(fp1(805, 4), 3)}),
	805, 'the standby answers a lookup through the constraint\'s index');
$standby->promote;
($rc, $out, $err) = $standby->psql('postgres', 'INSERT INTO docs VALUES (8051, fp1(805, 1))');
like($err, qr/conflicting key value violates exclusion constraint "docs_near"/,
	'promoted standby: a near-duplicate of a row streamed to it is refused');
($rc, $out, $err) = $standby->psql('postgres', 'INSERT INTO docs VALUES (6103, fp1(610, 3))');
like($err, qr/conflicting key value violates exclusion constraint "docs_near"/,
	'promoted standby: a near-duplicate of a row from before the backup is refused');
is($standby->safe_psql('postgres', 'INSERT INTO docs VALUES (900, fp(900)) RETURNING id'), 900,
	'promoted standby: a new fingerprint is stored');
($rc, $out, $err) = $standby->psql('postgres', 'INSERT INTO docs VALUES (9001, fp1(900, 1))');
like($err, qr/conflicting key value violates exclusion constraint "docs_near"/,
	'promoted standby: a near-duplicate of its own new row is refused');
index_check_ok($standby, 'postgres', 'docs_near', 'promoted standby');
$standby->stop;

# 8. pg_dump and restore into a new database: the constraint is back (\d),
# it refuses near-duplicates, the data are the same
my $dump = $node->basedir . '/exclusion.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ], 'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), $dump ], 'pg_restore');
like($node->safe_psql('restored', "\\pset tuples_only off\n\\d docs"),
	qr/"docs_near" EXCLUDE USING simhash \(simhash_ball\(h, 3::bigint\) WITH &&\)/,
	'restored: \d shows the constraint');
is($node->safe_psql('restored', 'SELECT count(*), sum(hamming_distance(h, 0::bigint::simhash64)) FROM docs'),
	$node->safe_psql('postgres', 'SELECT count(*), sum(hamming_distance(h, 0::bigint::simhash64)) FROM docs'),
	'restored: the same rows');
($rc, $out, $err) = $node->psql('restored', 'INSERT INTO docs VALUES (6104, fp1(610, 4))');
like($err, qr/conflicting key value violates exclusion constraint "docs_near"/,
	'restored: a near-duplicate is refused');

$node->stop;
done_testing();

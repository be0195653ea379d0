# test/citus/t/001_citus.pl: simhash on a Citus cluster.
#
# Three local PostgreSQL 15 clusters (a coordinator and two workers, each on
# its own port, Unix sockets only) with shared_preload_libraries = 'citus'
# ('citus,simhash' on the coordinator).
# The same rows are kept in a distributed table `docs` (8 shards) and a plain
# local table `docs_local` on the coordinator, and every check compares the
# distributed answer with the local one: CREATE EXTENSION reaching the
# workers, COPY, UPDATE with simhash()/minhash() on the workers, the index on
# every shard, radius queries in every spelling (literal, prepared, generic
# plan, PL/pgSQL), ORDER BY distance LIMIT n, joins of a batch of new rows
# (local, reference and colocated distributed tables) and "insert only the
# rows without a near-duplicate", the joins between distributed tables that
# simhash's planner hook rewrites (the self-join on the id, a distributed
# batch; a look-alike of its pairs job refused; what it leaves to Citus;
# without simhash preloaded), the dedup jobs (the plain names run on the
# workers, with progress NOTICEs; they read the rows on the coordinator, with
# a NOTICE saying why, when simhash.citus_jobs is off, in a read-only
# transaction, for text ids or without CREATE on the schema; every job on
# the workers must give the single-node pairs, groups, NOTICEs and errors,
# also on a table not distributed by its id, also as an ordinary role with
# look-alikes planted on its path; no internal helper of these jobs is an
# SQL function; four
# sessions running jobs at once with Citus's max_prepared_transactions),
# groups written on the workers into co-located tables (simhash_groups_into)
# and the delete of all but the leaders through them,
# and a worker restarted in the middle of a job or down before it (an
# error, no rows, the work tables rolled back).
#
# Run by test/citus/run.sh (needs citus.so in the server's pkglibdir).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $SHARDS = 8;

# ---- the cluster ----
my @nodes;
for my $name ('coord', 'worker1', 'worker2')
{
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	# simhash after citus on the coordinator: its planner hook (the radius
	# joins between distributed tables) in every session from the start
	my $preload = $name eq 'coord' ? 'citus,simhash' : 'citus';
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = '$preload'
citus.node_conninfo = 'sslmode=disable'
citus.enable_statistics_collection = off
fsync = off
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	push @nodes, $node;
}
my ($coord, $w1, $w2) = @nodes;
$coord->safe_psql('postgres', sprintf(q{
	SELECT citus_set_coordinator_host('%s', %d);
	SELECT citus_add_node('%s', %d);
	SELECT citus_add_node('%s', %d);
}, $coord->host, $coord->port, $w1->host, $w1->port, $w2->host, $w2->port));
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2', 'two active workers');

# psql on the coordinator; returns stdout (dies on error)
sub cq { return $coord->safe_psql('postgres', $_[0]); }

# run $sql against docs and against docs_local (every "docs" and "new_*"
# replaced by the local table) and compare the outputs
sub same_as_local
{
	my ($sql, $name, %opt) = @_;
	(my $local = $sql) =~ s/\bdocs\b/docs_local/g;
	$local =~ s/\bnew_(ref|dist)\b/new_local/g;
	my $pre = $opt{pre} // '';
	my $got = cq($pre . $sql);
	my $want = cq($pre . $local);
	if ($got eq $want)
	{
		pass($name);
	}
	else
	{
		# first differing line, for the log
		my @g = split /\n/, $got;
		my @w = split /\n/, $want;
		my $i = 0;
		$i++ while $i < @g && $i < @w && $g[$i] eq $w[$i];
		fail($name);
		diag("line $i: distributed '" . ($g[$i] // '<none>') . "' local '" . ($w[$i] // '<none>') . "'");
	}
	return $got;
}

# ---- 1. the extension reaches the workers; a distributed table; COPY; UPDATE ----
cq('CREATE EXTENSION simhash');
is(cq(q{SELECT string_agg(result, ',') FROM run_command_on_workers(
		$$SELECT extversion FROM pg_extension WHERE extname = 'simhash'$$)}),
	'1.1,1.1', 'CREATE EXTENSION simhash reached both workers');

# rows: fingerprints in clusters (base(c) and variants 0..6 bits away, so
# near-duplicate chains cross shards), bodies, keys; a few NULL
# fingerprints and exact duplicates
cq(q{
	CREATE FUNCTION base(c int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS $$ SELECT simhash_hash('base' || c)::simhash64 $$;
	CREATE FUNCTION flip(h simhash64, seed int, d int) RETURNS simhash64 LANGUAGE sql IMMUTABLE AS $$
		SELECT (h::bigint # coalesce((SELECT bit_or(1::bigint << ((seed * 7 + i * 13) % 64))
		                              FROM generate_series(1, d) i), 0))::simhash64 $$;
	CREATE FUNCTION near(c int, n int) RETURNS simhash64 LANGUAGE sql IMMUTABLE
		AS $$ SELECT flip(base(c), c * 31 + n, n % 7) $$;
	CREATE TABLE docs_local (id bigint PRIMARY KEY, c int, body text, h simhash64,
	                         hb simhash64, sig minhash_signature, keys bigint[]);
	INSERT INTO docs_local (id, c, body, h, keys)
		SELECT g, g % 300,
		       'document ' || (g % 300) || ' ' || repeat('word' || (g % 13) || ' ', 1 + g % 17)
		         || CASE WHEN g % 5 = 0 THEN 'same tail' ELSE md5(g::text) END,
		       CASE WHEN g % 97 = 0 THEN NULL WHEN g % 89 = 0 THEN base(1) ELSE near(g % 300, g / 300) END,
		       CASE WHEN g % 11 = 0 THEN NULL ELSE ARRAY[g % 300, 100000 + g % 1500, 200000 + g / 7]::bigint[] END
		FROM generate_series(1, 6000) g;
	CREATE TABLE docs (LIKE docs_local INCLUDING ALL);
	SET citus.shard_count = 8;
	SELECT create_distributed_table('docs', 'id');
});
my $copy = cq('COPY docs_local (id, c, body, h, keys) TO STDOUT');
my $copyfile = PostgreSQL::Test::Utils::tempdir() . '/docs.copy';
PostgreSQL::Test::Utils::append_to_file($copyfile, "$copy\n");
chmod 0644, $copyfile;
cq("\\copy docs (id, c, body, h, keys) FROM '$copyfile'");
is(cq(q{SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'docs'::regclass}),
	$SHARDS, "docs has $SHARDS shards");
is(cq(q{SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'docs'::regclass}),
	'2', 'the shards are on both workers');
same_as_local('SELECT count(*), count(h), md5(string_agg(id || body || coalesce(h::text, \'-\'), \',\' ORDER BY id)) FROM docs',
	'COPY: the same rows');

# UPDATE with fingerprint functions runs on the workers, once per shard
like(cq('EXPLAIN (COSTS OFF) UPDATE docs SET hb = simhash(body), sig = minhash(body)'),
	qr/Task Count: $SHARDS/, 'UPDATE SET hb = simhash(body) is one task per shard');
cq('UPDATE docs SET hb = simhash(body), sig = minhash(body)');
cq('UPDATE docs_local SET hb = simhash(body), sig = minhash(body)');
same_as_local('SELECT md5(string_agg(id || \':\' || hb || \':\' || sig::text, \',\' ORDER BY id)) FROM docs',
	'UPDATE SET hb = simhash(body), sig = minhash(body): the same fingerprints as on one node');

# ---- 2. the index on every shard; radius queries fan out and use it ----
cq(q{
	CREATE INDEX docs_h ON docs USING simhash (h) WITH (blocks = 5, max_distance = 3);
	CREATE INDEX docs_local_h ON docs_local USING simhash (h) WITH (blocks = 5, max_distance = 3);
	ANALYZE docs; ANALYZE docs_local;
});
is(cq(q{SELECT count(*) FROM run_command_on_shards('docs', $$
		SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'
		  AND c.reloptions @> '{blocks=5,max_distance=3}'$$) WHERE success AND result = '1'}),
	$SHARDS, 'CREATE INDEX USING simhash WITH (...) created the index on every shard');
is(cq(q{SELECT count(*) FROM run_command_on_shards('docs', $$
		SELECT count(simhash_index_check(i.indexrelid::regclass, true)) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = '%s'::regclass AND a.amname = 'simhash'$$) WHERE success AND result = '1'}),
	$SHARDS, 'simhash_index_check passes on every shard index');

# query centers: cluster bases, variants, a value near nothing
my @centers = split /\n/, cq(q{
	SELECT DISTINCT q FROM (
		SELECT base(c)::text AS q FROM generate_series(0, 299, 37) c
		UNION ALL SELECT near(c, 9)::text FROM generate_series(5, 299, 71) c
		UNION ALL SELECT flip(base(c), 99, 2)::text FROM generate_series(3, 299, 101) c
		UNION ALL SELECT '0123456789abcdef') x ORDER BY 1});
cmp_ok(scalar @centers, '>=', 12, 'query centers');

# every spelling the planner support rewrites (and the rewritten forms)
my @spellings = (
	'h <~> \'%1$s\' <= %2$d',
	'%2$d >= h <~> \'%1$s\'',
	'h <~> \'%1$s\' < %2$d + 1',
	'%2$d + 1 > h <~> \'%1$s\'',
	'\'%1$s\' <~> h <= %2$d',
	'h <~> \'%1$s\' <= %2$d::bigint',
	'h <~> \'%1$s\' <= %2$d::smallint',
	'simhash_within(h, \'%1$s\', %2$d)',
	'h <@ simhash_ball(\'%1$s\', %2$d)',
	'simhash_ball(\'%1$s\', %2$d) @> h');
my $sql = '';
my $matches = 0;
for my $c (@centers)
{
	for my $r (0 .. 5)
	{
		for my $s (@spellings)
		{
			$sql .= "SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs WHERE "
			  . sprintf($s, $c, $r) . ";\n";
		}
	}
	$sql .= "SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs WHERE h <~> '$c' = 0;\n";
}
my $got = same_as_local($sql, 'radius queries, literal, ' . scalar(@spellings) . ' spellings, radius 0..5: the same rows as on one node');
$matches += () = $got =~ /\d+/g;
cmp_ok($matches, '>', 500, "the radius queries found rows ($matches)");

# the plan: one task per shard, each an index scan of the shard's index
sub index_tasks
{
	my ($explain, $name) = @_;
	my $plan = cq("SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) $explain");
	my $n = () = $plan =~ /Index Scan (?:using|on) docs_h_\d+/g;
	my $seq = () = $plan =~ /Seq Scan on docs_\d+/g;
	ok($n == $SHARDS && $seq == 0 && $plan =~ /Task Count: $SHARDS/, $name)
	  or diag($plan);
}
index_tasks("SELECT id FROM docs WHERE h <~> '$centers[0]' <= 3",
	'EXPLAIN: WHERE h <~> literal <= 3 uses the simhash index of every shard');
index_tasks("SELECT id FROM docs WHERE 2 >= h <~> '$centers[1]'",
	'EXPLAIN: WHERE 2 >= h <~> literal uses the simhash index of every shard');

# prepared statements: custom plans (first executions) and generic plans
my $prep = "PREPARE p(simhash64, int) AS SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs WHERE h <~> \$1 <= \$2;\n"
  . "PREPARE pb(simhash64, bigint) AS SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs WHERE h <~> \$1 < \$2;\n";
my $exec = '';
for my $c (@centers)
{
	$exec .= "EXECUTE p('$c', $_);\nEXECUTE pb('$c', $_);\n" for (0, 1, 3, 4);
}
same_as_local($exec, 'prepared statements (plan_cache_mode auto): the same rows as on one node', pre => $prep);
# plan_cache_mode = force_generic_plan: Citus cannot plan a multi-shard
# query with unbound parameters (it replans with the values otherwise)
my ($rc_g, $out_g, $err_g) = $coord->psql('postgres',
	"SET plan_cache_mode = force_generic_plan;\n$prep EXECUTE p('$centers[0]', 3);");
like($err_g, qr/could not create distributed plan/,
	'force_generic_plan: refused by Citus (documented; the default plan_cache_mode works)');
{
	# after more than 5 executions (when a generic plan would be tried)
	# EXPLAIN EXECUTE of a statement with a simhash64 parameter shows
	# "Error: Could not get remote plan" for each task (Citus sends the
	# values of parameters of non-built-in types without a type); a text
	# parameter cast in the query explains fine and plans the same
	my $plan = cq("PREPARE pe(text, int) AS SELECT id FROM docs WHERE h <~> \$1::simhash64 <= \$2;\n"
		  . join('', map { "EXECUTE pe('$centers[$_]', 3);\n" } 0 .. 6)
		  . "SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) EXECUTE pe('$centers[2]', 3)");
	my $n = () = $plan =~ /Index Scan (?:using|on) docs_h_\d+/g;
	ok($n == $SHARDS && $plan !~ /Seq Scan on docs_\d+/,
		'EXPLAIN EXECUTE after 7 executions: the simhash index of every shard')
	  or diag($plan);
}
# PL/pgSQL: parameters in a function body
cq(q{CREATE FUNCTION near_ids(t regclass, q simhash64, k int) RETURNS bigint[] LANGUAGE plpgsql AS $$
	DECLARE r bigint[];
	BEGIN
		EXECUTE format('SELECT coalesce(array_agg(id ORDER BY id), ''{}'') FROM %s WHERE h <~> $1 <= $2', t)
			INTO r USING q, k;
		RETURN r;
	END $$;
	CREATE FUNCTION near_ids_static(q simhash64, k int) RETURNS bigint[] LANGUAGE plpgsql AS $$
	BEGIN
		RETURN (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs WHERE h <~> q <= k);
	END $$;
	CREATE FUNCTION near_ids_static_local(q simhash64, k int) RETURNS bigint[] LANGUAGE plpgsql AS $$
	BEGIN
		RETURN (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM docs_local WHERE h <~> q <= k);
	END $$;
});
my $pl = join '', map { my $c = $_; map { "SELECT near_ids('docs', '$c', $_), near_ids_static('$c', $_);\n" } (0, 2, 3, 5) } @centers;
same_as_local($pl, 'PL/pgSQL (EXECUTE USING, and static SQL with plan caching): the same rows as on one node');

# ---- 3. ORDER BY h <~> q LIMIT n: the exact global top n ----
my $top = '';
for my $c (@centers)
{
	for my $n (1, 5, 40)
	{
		# the distances in order (ties may come in any order), and the ids
		# with a tie-breaker
		$top .= "SELECT string_agg(d::text, ',') FROM (SELECT h <~> '$c' AS d FROM docs ORDER BY h <~> '$c' LIMIT $n) x;\n";
		$top .= "SELECT id, h <~> '$c' FROM docs ORDER BY h <~> '$c', id LIMIT $n;\n";
	}
	$top .= "SELECT id FROM docs WHERE h <~> '$c' <= 4 ORDER BY h <~> '$c', id LIMIT 7;\n";
}
same_as_local($top, 'ORDER BY h <~> q [, id] LIMIT n: the exact global top n');
{
	my $plan = cq("SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY h <~> '$centers[3]' LIMIT 5");
	my $n = () = $plan =~ /Index Scan using docs_h_\d+/g;
	ok($n == $SHARDS && $plan =~ /Limit/, 'ORDER BY h <~> q LIMIT n: an ordered index scan with a limit on every shard')
	  or diag($plan);
}
{
	# with a tie-breaker the index's order is not the query's: every shard
	# sorts (an incremental sort over the index scan, or a full sort of a
	# sequential scan, as its costs decide); the documentation leaves id out
	my $plan = cq("SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) SELECT id FROM docs ORDER BY h <~> '$centers[3]', id LIMIT 5");
	my $sorts = () = $plan =~ /Sort Key: \(\(h <~> '[0-9a-f]+'::simhash64\)\), id/g;
	ok($sorts == $SHARDS, 'ORDER BY h <~> q, id LIMIT n: every shard sorts its rows (the index order alone does not serve it)')
	  or diag($plan);
}
{
	# the documented spelling that orders ties: the top n by the index,
	# sorted again outside
	my $plan = cq("SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) SELECT * FROM (SELECT id, h <~> '$centers[3]' AS d FROM docs ORDER BY h <~> '$centers[3]' LIMIT 10) t ORDER BY d, id");
	my $n = () = $plan =~ /Index Scan using docs_h_\d+/g;
	ok($n == $SHARDS && $plan !~ /Seq Scan on docs_\d+/, 'the top n sorted again outside: an ordered index scan on every shard')
	  or diag($plan);
	same_as_local("SELECT string_agg(d::text, ',') FROM (SELECT * FROM (SELECT id, h <~> '$centers[3]' AS d FROM docs ORDER BY h <~> '$centers[3]' LIMIT 10) t ORDER BY d, id) x",
		'the top n sorted again outside: the single-node distances');
}
like(cq("SELECT string_agg(coalesce(h::text, 'NULL'), ',') FROM (SELECT h FROM docs ORDER BY h <~> '$centers[0]' DESC NULLS LAST LIMIT 3) x"),
	qr/^[0-9a-f]{16},[0-9a-f]{16},[0-9a-f]{16}$/, 'ORDER BY distance DESC works too');

# ---- 4. joins of a batch of new rows against the corpus ----
cq(q{
	CREATE TABLE new_local (id bigint PRIMARY KEY, body text, h simhash64);
	INSERT INTO new_local
		SELECT 100000 + g, 'new ' || g,
		       CASE WHEN g % 3 = 0 THEN simhash_hash('fresh' || g)::simhash64
		            ELSE flip(base(g * 7 % 300), g, g % 5) END
		FROM generate_series(1, 120) g;
	CREATE TABLE new_ref (LIKE new_local INCLUDING ALL);
	SELECT create_reference_table('new_ref');
	INSERT INTO new_ref SELECT * FROM new_local;
	CREATE TABLE new_dist (LIKE new_local INCLUDING ALL);
	SELECT create_distributed_table('new_dist', 'id', colocate_with => 'docs');
	INSERT INTO new_dist SELECT * FROM new_local;
	ANALYZE new_local; ANALYZE new_ref; ANALYZE new_dist;
});
my $join = 'SELECT n.id, c.id, c.h <~> n.h FROM %s n JOIN docs c ON c.h <~> n.h <= 3 ORDER BY 1, 2';
$got = same_as_local(sprintf($join, 'new_local'), 'join: a local table of new rows against the corpus');
my $pairs = () = $got =~ /\n/g;
cmp_ok($pairs, '>', 50, "the join found pairs ($pairs)");
same_as_local(sprintf($join, 'new_ref'), 'join: a reference table of new rows against the corpus');
# a distributed batch (co-located, but not joined on the distribution
# column), joined directly: simhash's planner hook sends the batch to the
# workers (Citus alone refuses the join)
my ($rc, $out, $err);
same_as_local(sprintf($join, 'new_dist'), 'join: a distributed batch against the corpus: the single-node rows');
same_as_local('SELECT n.id, c.id, c.body FROM new_dist n, docs c WHERE simhash_within(n.h, c.h, 2) AND c.c > 10 ORDER BY 1, 2',
	'join: a distributed batch, simhash_within and another condition: the single-node rows');
{
	my $plan = cq('EXPLAIN (COSTS OFF) ' . sprintf($join, 'new_dist'));
	like($plan, qr/Distributed Subplan.*Seq Scan on new_dist_\d+.*Task Count: $SHARDS/s,
		'join: the distributed batch is read into a subplan, then joined on every shard of the corpus') or diag($plan);
}

# the self-join of a distributed table on its id: planned by the hook as
# the pairs job on the workers, joined back to the rows on the shards
my $self = 'SELECT a.id, b.id, a.h <~> b.h, a.body, b.c FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3 ORDER BY 1, 2';
$got = same_as_local($self, 'self-join a.id < b.id AND a.h <~> b.h <= 3: the single-node rows');
cmp_ok(scalar(() = $got =~ /\n/g), '>', 1000, 'the self-join found pairs');
same_as_local('SELECT count(*), sum(a.id * b.id) FROM docs a, docs b WHERE b.id > a.id AND simhash_within(b.h, a.h, 2) AND a.c < 100',
	'self-join b.id > a.id AND simhash_within(b.h, a.h, 2) AND a.c < 100, aggregated: the single-node answer');
same_as_local('SELECT a.c, count(*), max(b.h <~> a.h) FROM docs b JOIN docs a ON b.id > a.id AND b.h <~> a.h < 2 GROUP BY a.c ORDER BY 2 DESC, 1 LIMIT 5',
	'self-join written b, a with h <~> h < 2, GROUP BY, ORDER BY, LIMIT: the single-node answer');
same_as_local('SELECT a.id, b.id FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h = 0 ORDER BY 1, 2',
	'self-join at distance 0 (exact duplicates): the single-node rows');
same_as_local('PREPARE sj(int) AS SELECT count(*), sum(a.id + 2 * b.id) FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= $1;'
	  . join('', map { "EXECUTE sj($_);" } (3, 1, 4, 3, 0, 2, 3, 5)),
	'self-join prepared, the radius a parameter, 8 executions: the single-node answers');
{
	my $plan = cq("EXPLAIN (COSTS OFF) $self");
	like($plan, qr/Function Scan on simhash_pairs/, 'EXPLAIN of the self-join: the pairs job') or diag($plan);
	is(cq(q{SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash_part_%'}), '0',
		'EXPLAIN of the self-join does not run the job (no work table)');
	($rc, $out, $err) = $coord->psql('postgres', "SET simhash.progress_interval = 0; $self");
	like($err, qr/NOTICE:  simhash_pairs: searching the parts on the workers/,
		'the self-join runs the pairs job on the workers (its progress NOTICE)');
}
# INSERT ... SELECT of the self-join, into a distributed and a local table
cq(q{CREATE TABLE docs_pairs (a bigint, b bigint, d int);
	SELECT create_distributed_table('docs_pairs', 'a', colocate_with => 'docs');
	CREATE TABLE docs_local_pairs (a bigint, b bigint, d int);
	INSERT INTO docs_pairs SELECT a.id, b.id, a.h <~> b.h FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 2;
	INSERT INTO docs_local_pairs SELECT a.id, b.id, a.h <~> b.h FROM docs_local a JOIN docs_local b ON a.id < b.id AND a.h <~> b.h <= 2;
	INSERT INTO docs_local_pairs SELECT n.id, c.id, n.h <~> c.h FROM new_dist n JOIN docs c ON n.h <~> c.h <= 2;
	INSERT INTO docs_pairs SELECT n.id, c.id, n.h <~> c.h FROM new_local n JOIN docs_local c ON n.h <~> c.h <= 2});
# (docs_pairs: the distributed self-join and the local batch join;
# docs_local_pairs: the local self-join and the distributed batch join)
cmp_ok(cq('SELECT count(*) FROM docs_pairs'), '>', 1000, 'INSERT ... SELECT of the joins: rows inserted');
is(cq('SELECT count(*), md5(string_agg(a || \',\' || b || \',\' || d, \';\' ORDER BY a, b)) FROM docs_local_pairs'),
	cq('SELECT count(*), md5(string_agg(a || \',\' || b || \',\' || d, \';\' ORDER BY a, b)) FROM docs_pairs'),
	'INSERT ... SELECT of the self-join (into a distributed table) and of the batch join (into a local one): the single-node rows');
# in a read-only transaction the job reads the rows here, saying so
($rc, $out, $err) = $coord->psql('postgres', "BEGIN READ ONLY; $self; COMMIT");
(my $self_local = $self) =~ s/\bdocs\b/docs_local/g;
ok($rc == 0 && $out eq cq($self_local), 'self-join in a read-only transaction: the single-node rows');
like($err, qr/DETAIL:  The job runs here, not on the workers: the transaction is read-only/,
	'... with the NOTICE that the job reads the rows here');
# a table with an integer id and a dropped column: the columns keep their places
cq(q{CREATE TABLE dd_local (id integer PRIMARY KEY, gone text, body text, h simhash64);
	INSERT INTO dd_local SELECT id, 'x', body, h FROM docs_local WHERE id <= 3000;
	ALTER TABLE dd_local DROP COLUMN gone;
	CREATE TABLE dd (id integer PRIMARY KEY, gone text, body text, h simhash64);
	ALTER TABLE dd DROP COLUMN gone;
	SELECT create_distributed_table('dd', 'id', shard_count => 4);
	INSERT INTO dd SELECT * FROM dd_local});
is(cq('SELECT a.id, b.id, a.body, b.body, a.h, pg_typeof(a.id) FROM dd a JOIN dd b ON a.id < b.id AND a.h <~> b.h <= 3 ORDER BY 1, 2'),
	cq('SELECT a.id, b.id, a.body, b.body, a.h, pg_typeof(a.id) FROM dd_local a JOIN dd_local b ON a.id < b.id AND a.h <~> b.h <= 3 ORDER BY 1, 2'),
	'self-join of a table with integer ids and a dropped column: the single-node rows');
# what is left to Citus: refused as before, or planned by Citus itself
cq(q{CREATE TABLE dc (id bigint, c int, h simhash64);
	SELECT create_distributed_table('dc', 'c', shard_count => 4);
	INSERT INTO dc SELECT id, c, h FROM docs_local});
for my $case (
	[ 'a.id <> b.id (both orders)', 'SELECT count(*) FROM docs a JOIN docs b ON a.id <> b.id AND a.h <~> b.h <= 3' ],
	[ 'simhash.citus_joins = off', 'SET simhash.citus_joins = off; SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3' ],
	[ 'a table not distributed by its id', 'SELECT count(*) FROM dc a JOIN dc b ON a.id < b.id AND a.h <~> b.h <= 3' ])
{
	my ($name, $sql) = @$case;
	($rc, $out, $err) = $coord->psql('postgres', $sql);
	like($err, qr/complex joins are only supported/, "self-join, $name: left to Citus, which refuses it");
}
same_as_local('SELECT count(*) FROM docs a JOIN docs b ON a.id = b.id AND a.h <~> b.h <= 3',
	'a join on the distribution column and a radius: left to Citus, the single-node answer');
# without simhash in shared_preload_libraries the hook comes with the
# library, when the session first loads it
{
	my $count = 'SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND a.h <~> b.h <= 3';
	(my $count_local = $count) =~ s/\bdocs\b/docs_local/g;
	my $want = cq($count_local);
	$coord->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'citus'");
	$coord->restart;
	($rc, $out, $err) = $coord->psql('postgres', $count);
	like($err, qr/complex joins are only supported/,
		'simhash not preloaded: the self-join as the first statement of a session is refused by Citus');
	is(cq("SELECT '0123456789abcdef'::simhash64; $count"), "0123456789abcdef\n$want",
		'simhash not preloaded: after a simhash value in the session, the self-join is planned');
	$coord->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'citus,simhash'");
	$coord->restart;
}
same_as_local('WITH n AS MATERIALIZED (SELECT * FROM new_dist) SELECT n.id, c.id, c.h <~> n.h FROM n JOIN docs c ON c.h <~> n.h <= 3 ORDER BY 1, 2',
	'join: a distributed batch through a MATERIALIZED CTE');
for my $t ('new_local', 'new_ref')
{
	# small shards: a seq scan of the shard may cost less, so the planner is
	# told (on the workers too) to avoid it; the question is whether the
	# parameterised index path exists on every shard
	my $plan = cq("BEGIN; SET citus.propagate_set_commands = 'local'; SET LOCAL enable_seqscan = off;"
		  . " SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) " . sprintf($join, $t) . '; COMMIT');
	my $n = () = $plan =~ /Index Scan using docs_h_\d+/g;
	ok($n == $SHARDS && $plan !~ /Seq Scan on docs_\d+/,
		"join with $t: each shard's simhash index is the inner side") or diag($plan);
}

# insert only the new rows without a near-duplicate in the corpus.
# NOT EXISTS (SELECT 1 FROM docs c WHERE c.h <~> n.h <= 3) is refused by
# Citus (a correlated subquery); an anti-join or a CTE of the
# near-duplicated ids works
my $before = cq('SELECT count(*) FROM docs');
($rc, $out, $err) = $coord->psql('postgres',
	'INSERT INTO docs (id, body, h) SELECT n.id, n.body, n.h FROM new_ref n WHERE NOT EXISTS (SELECT 1 FROM docs c WHERE c.h <~> n.h <= 3)');
like($err, qr/correlated subqueries are not supported/, 'insert-only-new with NOT EXISTS: refused by Citus (documented)');
my %insert = (
	'anti-join, reference batch' => 'INSERT INTO docs (id, body, h) SELECT n.id, n.body, n.h FROM new_ref n '
	  . 'LEFT JOIN docs c ON c.h <~> n.h <= 3 WHERE c.id IS NULL',
	'anti-join, local batch' => 'INSERT INTO docs (id, body, h) SELECT n.id + 1000, n.body, n.h FROM new_local n '
	  . 'LEFT JOIN docs c ON c.h <~> n.h <= 3 WHERE c.id IS NULL',
	'CTE of near-duplicated ids, distributed batch' => 'WITH n AS MATERIALIZED (SELECT * FROM new_dist), '
	  . 'dup AS MATERIALIZED (SELECT DISTINCT n.id FROM n JOIN docs c ON c.h <~> n.h <= 3) '
	  . 'INSERT INTO docs (id, body, h) SELECT n.id + 2000, n.body, n.h FROM n WHERE n.id NOT IN (SELECT id FROM dup)');
for my $name (sort keys %insert)
{
	(my $l = $insert{$name}) =~ s/\bdocs\b/docs_local/g;
	$l =~ s/\bnew_(ref|dist)\b/new_local/g;
	cq($insert{$name});
	cq($l);
	same_as_local('SELECT count(*), md5(string_agg(id || \':\' || coalesce(h::text, \'-\'), \',\' ORDER BY id)) FROM docs',
		"insert only rows without a near-duplicate ($name): the same table as on one node");
}
my $added = cq('SELECT count(*) FROM docs') - $before;
cmp_ok($added, '>', 40, "new rows were inserted ($added)");
cmp_ok($added, '<', 3 * 120, 'not all of them');
cq('DELETE FROM docs WHERE id > 100000; DELETE FROM docs_local WHERE id > 100000');

# ---- 5. dedup jobs on a distributed table ----
my @jobs = (
	[ 'simhash_pairs', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h') ORDER BY id_a, id_b} ],
	[ 'simhash_pairs (2, blocks 6)', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h', 2, 6) ORDER BY id_a, id_b} ],
	[ 'simhash_groups connected', q{SELECT id || ',' || group_id FROM simhash_groups('docs', 'id', 'h') ORDER BY id} ],
	[ 'simhash_groups leader', q{SELECT id || ',' || group_id FROM simhash_groups('docs', 'id', 'h', 3, 'leader') ORDER BY id} ],
	[ 'minhash_pairs', q{SELECT id_a || ',' || id_b || ',' || round(jaccard::numeric, 6) FROM minhash_pairs('docs', 'id', 'sig', 0.5) ORDER BY id_a, id_b} ],
	[ 'minhash_groups', q{SELECT id || ',' || group_id FROM minhash_groups('docs', 'id', 'sig', 0.5) ORDER BY id} ],
	[ 'shared_key_pairs', q{SELECT id_a || ',' || id_b || ',' || shared FROM shared_key_pairs('docs', 'id', 'keys', 2) ORDER BY id_a, id_b} ],
	[ 'shared_key_groups', q{SELECT id || ',' || group_id FROM shared_key_groups('docs', 'id', 'keys', 2) ORDER BY id} ],
);
# the same names as on one node run on the workers (no NOTICE that the
# rows are pulled), and give the single-node result, NOTICEs included
my $quiet = 'SET simhash.progress_interval = -1; ';
for my $job (@jobs)
{
	my ($name, $sql) = @$job;
	(my $local = $sql) =~ s/'docs'/'docs_local'/;
	my ($rc_d, $out_d, $err_d) = $coord->psql('postgres', $quiet . $sql);
	my ($rc_l, $want, $err_l) = $coord->psql('postgres', $quiet . $local);
	ok($rc_d == 0 && $out_d eq $want && $want ne '', "$name on the distributed table, on the workers: the single-node result")
	  or diag("rc $rc_d, " . length($out_d) . ' vs ' . length($want) . " bytes; $err_d");
	is($err_d, $err_l, "$name on the workers: the single-node job's NOTICEs (and no pull NOTICE)");
	# forced to the coordinator: every row read here, with a NOTICE saying why
	my ($rc_o, $out_o, $err_o) = $coord->psql('postgres', $quiet . 'SET simhash.citus_jobs = off; ' . $sql);
	my ($job) = $sql =~ /FROM (\w+)\(/;
	ok($rc_o == 0 && $out_o eq $want, "$name with simhash.citus_jobs = off: the single-node result");
	like($err_o, qr/NOTICE:  $job: public\.docs is a Citus distributed table: reading all its rows from its $SHARDS shards on this node\nDETAIL:  The job runs here, not on the workers: simhash.citus_jobs is off\.\nHINT:  SET simhash.citus_jobs = on/,
		"$name with simhash.citus_jobs = off: a NOTICE says the rows are read on the coordinator, and why");
}
# the job really runs on the workers: its progress NOTICEs (every step with
# progress_interval 0) name the plain job and its repartitioning steps
{
	my ($rc_p, $out_p, $err_p) = $coord->psql('postgres',
		q{SET simhash.progress_interval = 0; SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 2)});
	like($err_p, qr/NOTICE:  simhash_groups: repartitioned \d+ rows for table group 1 of 3\n.*NOTICE:  simhash_groups: repartitioned \d+ rows for table group 3 of 3\n.*NOTICE:  simhash_groups: searching the parts on the workers\n.*NOTICE:  simhash_groups: labelling round 1 on the workers: \d+ rows relabelled/s,
		'simhash_groups on the workers: progress NOTICEs under the plain name') or diag($err_p);
	# the groups computed on the workers: no id copied to the coordinator,
	# no grouping there (for the leader linkage neither)
	my ($rc_l, $out_l, $err_l) = $coord->psql('postgres',
		q{SET simhash.progress_interval = 0; SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3, 'leader')});
	like($err_l, qr/NOTICE:  simhash_groups: labelling round 1 on the workers: \d+ rows relabelled\n.*NOTICE:  simhash_groups: choosing the leaders on the workers/s,
		'simhash_groups leader on the workers: groups labelled and leaders chosen on the workers') or diag($err_l);
	unlike($err_p . $err_l, qr/on this node/, 'simhash_groups on the workers: nothing grouped on the coordinator');
	my ($rc_k, $out_k, $err_k) = $coord->psql('postgres',
		q{SET simhash.progress_interval = 0; SELECT count(*) FROM minhash_pairs('docs', 'id', 'sig', 0.5)});
	like($err_k, qr/NOTICE:  minhash_pairs: repartitioned \d+ \(key, row\) pairs by key\n.*NOTICE:  minhash_pairs: repartitioned \d+ candidate pairs by their first id\n.*NOTICE:  minhash_pairs: estimating the candidate pairs on the workers/s,
		'minhash_pairs on the workers: progress NOTICEs under the plain name') or diag($err_k);
}
# every parameter: id_type (integer ids travel as bigint and come back as
# the id type; text ids are read on the coordinator, saying so)
for my $case (
	[ 'simhash_pairs, id_type integer', q{SELECT pg_typeof(id_a)::text || ',' || id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h', NULL::integer, 3, 5) ORDER BY id_a, id_b}, 0 ],
	[ 'simhash_groups leader, id_type smallint', q{SELECT pg_typeof(id)::text || ',' || id || ',' || group_id FROM simhash_groups('docs', 'id', 'h', NULL::smallint, 2, 'leader') ORDER BY id}, 0 ],
	[ 'shared_key_groups, id_type bigint', q{SELECT id || ',' || group_id FROM shared_key_groups('docs', 'id', 'keys', 0::bigint, 2, 50) ORDER BY id}, 0 ],
	[ 'minhash_pairs, id_type integer', q{SELECT id_a || ',' || id_b || ',' || round(jaccard::numeric, 6) FROM minhash_pairs('docs', 'id', 'sig', 0::integer, 0.5, 16) ORDER BY id_a, id_b}, 0 ],
	[ 'simhash_pairs, text ids', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'body', 'h', NULL::text, 1) ORDER BY id_a, id_b, distance}, 1 ])
{
	my ($name, $sql, $pulled) = @$case;
	(my $local = $sql) =~ s/'docs'/'docs_local'/;
	my ($rc_d, $out_d, $err_d) = $coord->psql('postgres', $quiet . $sql);
	my $want = cq($quiet . $local);
	ok($rc_d == 0 && $out_d eq $want && $want ne '', "$name: the single-node result")
	  or diag("rc $rc_d; $err_d");
	if ($pulled)
	{
		like($err_d, qr/DETAIL:  The job runs here, not on the workers: ids of type text are read here/,
			"$name: read on the coordinator, with a NOTICE saying why");
	}
	else
	{
		unlike($err_d, qr/reading all its rows/, "$name: on the workers");
	}
}
# read-only transactions (and standbys) read the rows on the coordinator
{
	my $sql = q{SELECT id || ',' || group_id FROM simhash_groups('docs', 'id', 'h') ORDER BY id};
	my ($rc_r, $out_r, $err_r) = $coord->psql('postgres', "BEGIN READ ONLY; $quiet $sql; COMMIT");
	ok($rc_r == 0 && $out_r eq cq($quiet . q{SELECT id || ',' || group_id FROM simhash_groups('docs_local', 'id', 'h') ORDER BY id}),
		'simhash_groups in a read-only transaction: the single-node result');
	like($err_r, qr/DETAIL:  The job runs here, not on the workers: the transaction is read-only\./,
		'simhash_groups in a read-only transaction: read on the coordinator, with a NOTICE saying why');
}
# a user who may read the table but not create tables in its schema
cq(q{CREATE ROLE reader LOGIN; GRANT SELECT ON docs, docs_local TO reader; REVOKE CREATE ON SCHEMA public FROM PUBLIC});
{
	my ($rc_u, $out_u, $err_u) = $coord->psql('postgres',
		"SET ROLE reader; $quiet SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')");
	ok($rc_u == 0 && $out_u eq cq($quiet . q{SELECT count(*) FROM simhash_pairs('docs_local', 'id', 'h')}),
		'simhash_pairs by a user without CREATE on the schema: the single-node result') or diag($err_u);
	like($err_u, qr/DETAIL:  The job runs here, not on the workers: the job's work tables need CREATE on schema public\./,
		'... read on the coordinator, with a NOTICE saying why');
}
# four sessions running jobs on the workers at once, with the
# max_prepared_transactions Citus sets (2 x max_connections): all succeed
{
	is(cq('SHOW max_prepared_transactions'), 2 * cq('SHOW max_connections'),
		'Citus sets max_prepared_transactions to 2 x max_connections');
	my @sessions = map { $coord->background_psql('postgres', on_error_stop => 0) } 1 .. 4;
	$_->query_until(qr/started/, "\\echo started\n$quiet SELECT count(*) FROM simhash_pairs('docs', 'id', 'h'); SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3, 'leader');\n")
	  for @sessions;
	my $ok = 0;
	for my $s (@sessions)
	{
		$s->query("SELECT 'done'");
		if ($s->{stderr} =~ /ERROR/) { diag($s->{stderr}); } else { $ok++; }
		$s->quit;
	}
	is($ok, 4, 'four sessions running jobs on the workers at once: no error');
}
# the distributed jobs: the pair search on the workers (rows repartitioned by
# table group and block into a work table), the same result as one node
my @citus_jobs = (
	[ 'simhash_pairs (workers)', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h') ORDER BY id_a, id_b},
	  q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs_local', 'id', 'h') ORDER BY id_a, id_b} ],
	[ 'simhash_pairs (workers, 2, blocks 6)', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h', 2, 6) ORDER BY id_a, id_b},
	  q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs_local', 'id', 'h', 2, 6) ORDER BY id_a, id_b} ],
	[ 'simhash_pairs (workers, 5)', q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs', 'id', 'h', 5) ORDER BY id_a, id_b},
	  q{SELECT id_a || ',' || id_b || ',' || distance FROM simhash_pairs('docs_local', 'id', 'h', 5) ORDER BY id_a, id_b} ],
	[ 'simhash_groups (workers) connected', q{SELECT id || ',' || group_id FROM simhash_groups('docs', 'id', 'h') ORDER BY id},
	  q{SELECT id || ',' || group_id FROM simhash_groups('docs_local', 'id', 'h') ORDER BY id} ],
	[ 'simhash_groups (workers) leader', q{SELECT id || ',' || group_id FROM simhash_groups('docs', 'id', 'h', 3, 'leader') ORDER BY id},
	  q{SELECT id || ',' || group_id FROM simhash_groups('docs_local', 'id', 'h', 3, 'leader') ORDER BY id} ],
);
# the keys and MinHash jobs: keys repartitioned by key (the max_key_rows cap
# counts a key's rows over all shards), pairs by their first id; on docs
# (distributed by the id) and docs_byc (distributed by another column, so
# that minhash_* copies the signatures into a work table)
cq(q{
	CREATE TABLE docs_byc (LIKE docs_local INCLUDING ALL EXCLUDING INDEXES);
	SELECT create_distributed_table('docs_byc', 'c', shard_count => 6);
	INSERT INTO docs_byc SELECT * FROM docs_local;
});
# simhash_groups on a table not distributed by the id: its ids copied
# into a work table (by id, on the workers) that the groups co-locate with
push @citus_jobs,
	[ 'simhash_groups (workers, docs_byc) connected', q{SELECT id || ',' || group_id FROM simhash_groups('docs_byc', 'id', 'h', 2) ORDER BY id},
	  q{SELECT id || ',' || group_id FROM simhash_groups('docs_local', 'id', 'h', 2) ORDER BY id} ],
	[ 'simhash_groups (workers, docs_byc) leader', q{SELECT id || ',' || group_id FROM simhash_groups('docs_byc', 'id', 'h', 3, 'leader') ORDER BY id},
	  q{SELECT id || ',' || group_id FROM simhash_groups('docs_local', 'id', 'h', 3, 'leader') ORDER BY id} ];
my %key_args = (docs => [ '', ', 2', ', 1, 10' ], docs_byc => [ ', 2, 25' ]);
my %minhash_args = (docs => [ ', 0.5', ', 0.5, 32, 20' ], docs_byc => [ ', 0.3, 16' ]);
# the pairs and groups versions of a job ($kind: shared_key or minhash) on
# table $t, each against the single-node job on the local table
sub pairs_and_groups
{
	my ($kind, $t, $column, $third, $args) = @_;
	return (
		[ "${kind}_pairs($t$args)",
		  qq{SELECT id_a || ',' || id_b || ',' || $third FROM ${kind}_pairs('$t', 'id', '$column'$args) ORDER BY id_a, id_b},
		  qq{SELECT id_a || ',' || id_b || ',' || $third FROM ${kind}_pairs('docs_local', 'id', '$column'$args) ORDER BY id_a, id_b} ],
		[ "${kind}_groups($t$args)",
		  qq{SELECT id || ',' || group_id FROM ${kind}_groups('$t', 'id', '$column'$args) ORDER BY id},
		  qq{SELECT id || ',' || group_id FROM ${kind}_groups('docs_local', 'id', '$column'$args) ORDER BY id} ]);
}
for my $t ('docs', 'docs_byc')
{
	push @citus_jobs, pairs_and_groups('shared_key', $t, 'keys', 'shared', $_) for @{ $key_args{$t} };
	push @citus_jobs, pairs_and_groups('minhash', $t, 'sig', 'jaccard', $_) for @{ $minhash_args{$t} };
}
for my $job (@citus_jobs)
{
	my ($name, $sql, $local) = @$job;
	my ($rc_d, $out_d, $err_d) = $coord->psql('postgres', $sql);
	my ($rc_l, $want, $err_l) = $coord->psql('postgres', $local);
	push @$job, $want;
	ok($rc_d == 0 && $rc_l == 0 && $out_d eq $want && $want ne '', "$name: the single-node result")
	  or diag("rc $rc_d, " . length($out_d) . ' vs ' . length($want) . " bytes; $err_d");
	# the same NOTICEs (keys skipped by max_key_rows)
	my $notes_d = join "\n", $err_d =~ /^NOTICE:  (.*)$/mg;
	my $notes_l = join "\n", $err_l =~ /^NOTICE:  (.*)$/mg;
	is($notes_d, $notes_l, "$name: the same NOTICEs") if $notes_l ne '' || $notes_d ne '';
}
# Look-alikes of every function of the extension, planted where another role
# with CREATE on public could put them: in a schema early on the path with
# the same signature, in public (the extension's schema) with text
# arguments that untyped literals would prefer; create_distributed_table in
# that schema; tables named as the jobs' temporary tables in both.  An
# ordinary role (CREATE on public, SELECT on the tables) runs every job on
# the workers with that path and pg_temp last: the single-node result, nothing
# planted runs or is read.
cq(q{
	CREATE SCHEMA sp_early;
	DO $plant$
	DECLARE
		f record;
		body constant text := $b$BEGIN RAISE EXCEPTION 'planted %s ran'; END$b$;
	BEGIN
		FOR f IN SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
		                pg_get_function_result(p.oid) AS result, p.pronargs
		         FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
		              AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		         JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simhash'
		         WHERE p.prokind = 'f' LOOP
			BEGIN
				EXECUTE format('CREATE FUNCTION sp_early.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
				               f.proname, f.args, f.result, format(body, 'sp_early.' || f.proname));
			EXCEPTION WHEN OTHERS THEN NULL;
			END;
			CONTINUE WHEN f.pronargs = 0;
			BEGIN
				EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
				               f.proname, array_to_string(array_fill('text'::text, ARRAY[f.pronargs]), ', '),
				               f.result, format(body, 'public.' || f.proname));
			EXCEPTION WHEN OTHERS THEN NULL;
			END;
		END LOOP;
		CREATE FUNCTION sp_early.create_distributed_table(regclass, text) RETURNS void
			LANGUAGE plpgsql AS $f$BEGIN RAISE EXCEPTION 'planted sp_early.create_distributed_table ran'; END$f$;
		FOR f IN SELECT s.nsp, t.tab FROM unnest(ARRAY['sp_early', 'public']) s(nsp),
		         unnest(ARRAY['simhash_citus_pairs', 'simhash_citus_edges', 'simhash_citus_keys',
		                      'simhash_citus_linked', 'simhash_citus_rows']) t(tab) LOOP
			EXECUTE format('CREATE TABLE %I.%I (id bigint, group_id bigint, a bigint, b bigint, n bigint, keys bigint[], distance integer)',
			               f.nsp, f.tab);
			EXECUTE format('INSERT INTO %I.%I VALUES (-1, -1, -1, -1, -1, ''{-1}'', 0)', f.nsp, f.tab);
		END LOOP;
	END
	$plant$;
	CREATE ROLE regress_citus_user LOGIN;
	GRANT USAGE, CREATE ON SCHEMA public, sp_early TO regress_citus_user;
	GRANT SELECT ON docs, docs_byc TO regress_citus_user;
});
cmp_ok(cq(q{SELECT count(*) FROM pg_proc WHERE prosrc LIKE 'BEGIN RAISE EXCEPTION ''planted %'}), '>', 300,
	'look-alikes planted');
for my $job (@citus_jobs)
{
	my ($name, $sql, undef, $want) = @$job;
	# the call typed, as an application calls through a driver: untyped
	# literals in the caller's own query would pick the caller's look-alike
	(my $typed = $sql) =~ s{\b(\w+_(?:pairs|groups))\('(\w+)', 'id', '(\w+)'((?:, [0-9.]+)*)(, '(\w+)')?\)}{
		"public.$1('$2'::regclass, 'id'::name, '$3'::name"
		. join('', map { m{\.} ? ", $_\::float8" : ", $_" } grep { $_ ne '' } split(m{, }, $4 // ''))
		. (defined $6 ? ", '$6'::text" : '') . ')'}e;
	my ($rc, $out, $err) = $coord->psql('postgres',
		"SET ROLE regress_citus_user; SET search_path = sp_early, public, pg_catalog, pg_temp; $typed");
	ok($rc == 0 && $out eq $want && $err !~ /planted/, "$name, ordinary role, look-alikes on the path: the single-node result")
	  or diag("rc $rc; $typed; $err");
}
# the same role and path: the radius self-join the planner hook rewrites
# (its simhash_pairs named through the extension's schema), and the groups
# written on the workers by simhash_groups_into
{
	my $join = 'SELECT count(*), sum(a.id * b.id) FROM %s a JOIN %s b ON a.id < b.id AND a.h <~> b.h <= 2';
	my ($rc, $out, $err) = $coord->psql('postgres',
		"SET ROLE regress_citus_user; SET search_path = sp_early, public, pg_catalog, pg_temp; "
		. sprintf($join, 'public.docs', 'public.docs'));
	ok($rc == 0 && $out eq cq(sprintf($join, 'docs_local', 'docs_local')) && $err !~ /planted/,
		'self-join rewritten by the hook, ordinary role, look-alikes on the path: the single-node answer')
	  or diag("rc $rc; $err");
	# a look-alike with the exact argument types of the hook's call (a
	# concrete id_type wins over the polymorphic original), planted by that
	# role in the extension's schema: the self-join of a user who runs into
	# it is refused, and the look-alike does not run
	cq(q{SET ROLE regress_citus_user;
		CREATE FUNCTION public.simhash_pairs(relation regclass, id_column name, hash_column name,
				id_type bigint, max_distance integer, blocks integer DEFAULT NULL)
			RETURNS TABLE (id_a bigint, id_b bigint, distance integer)
			LANGUAGE plpgsql AS $f$BEGIN RAISE EXCEPTION 'planted exact public.simhash_pairs ran as %', current_user; END$f$});
	($rc, $out, $err) = $coord->psql('postgres', "\\set VERBOSITY verbose\n" . sprintf($join, 'docs', 'docs'));
	like($err, qr/ERROR:  42725: function simhash_pairs\(regclass,name,name,bigint,integer,integer\) is not a member of extension simhash but shares the name of its simhash_pairs/,
		'self-join beside a look-alike simhash_pairs its rewritten call would resolve to: refused (42725)') or diag($err);
	unlike($err, qr/planted/, '... the look-alike does not run');
	cq(q{DROP FUNCTION public.simhash_pairs(regclass, name, name, bigint, integer, integer)});
	($rc, $out, $err) = $coord->psql('postgres',
		"SET ROLE regress_citus_user; SET search_path = sp_early, public, pg_catalog, pg_temp; SET simhash.progress_interval = -1; "
		. q{SELECT public.simhash_groups_into('public.docs'::regclass, 'id'::name, 'h'::name, 'public.docs_role_leaders'::text, 3, 'leader'::text)});
	ok($rc == 0 && $err !~ /planted/, 'simhash_groups_into, ordinary role, look-alikes on the path: runs') or diag("rc $rc; $err");
	is(cq(q{SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM docs_role_leaders}),
		cq(q{SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM simhash_groups('docs_local', 'id', 'h', 3, 'leader') g
			WHERE g.group_id IN (SELECT x.group_id FROM simhash_groups('docs_local', 'id', 'h', 3, 'leader') x GROUP BY 1 HAVING count(*) > 1)}),
		'simhash_groups_into, ordinary role, look-alikes on the path: the single-node groups of more than one row');
	cq(q{DROP TABLE docs_role_leaders});
}
cq(q{
	DROP SCHEMA sp_early CASCADE;
	DO $unplant$
	DECLARE
		f record;
	BEGIN
		FOR f IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
		         WHERE p.pronamespace = 'public'::regnamespace AND p.prosrc LIKE 'BEGIN RAISE EXCEPTION ''planted %' LOOP
			EXECUTE format('DROP FUNCTION %s', f.fn);
		END LOOP;
	END
	$unplant$;
	DROP TABLE public.simhash_citus_pairs, public.simhash_citus_edges, public.simhash_citus_keys,
		public.simhash_citus_linked, public.simhash_citus_rows;
	REVOKE ALL ON docs, docs_byc FROM regress_citus_user;
	REVOKE ALL ON SCHEMA public FROM regress_citus_user;
	DROP ROLE regress_citus_user;
});
like(($coord->psql('postgres', q{SELECT count(*) FROM shared_key_pairs('docs', 'id', 'keys', 1, 10)}))[2],
	qr/NOTICE:  shared_key_pairs: skipped 300 keys shared by more than 10 rows/,
	'max_key_rows: the keys shared by more rows (over all shards) are skipped, with a NOTICE');
# groups of the keys and MinHash jobs chain across shards too
for my $g (q{shared_key_groups('docs', 'id', 'keys', 2)}, q{minhash_groups('docs', 'id', 'sig', 0.5)})
{
	cmp_ok(cq(qq{SELECT max(n) FROM (SELECT count(DISTINCT get_shard_id_for_distribution_column('docs', id)) AS n
			FROM $g GROUP BY group_id) x}), '>', 1, "$g: some groups span several shards");
}
# errors as on one node: signatures of different parameters, bands above
# the permutations, a NULL id, a column of the wrong type
cq(q{
	CREATE TABLE docs_bad (LIKE docs_local INCLUDING ALL);
	ALTER TABLE docs_bad DROP CONSTRAINT docs_bad_pkey, ALTER COLUMN id DROP NOT NULL;
	SELECT create_distributed_table('docs_bad', 'c', shard_count => 4);
	INSERT INTO docs_bad SELECT * FROM docs_local WHERE id <= 50;
	CREATE TABLE docs_bad_local AS SELECT * FROM docs_bad;
});
for my $case (
	[ 'signatures of different parameters', q{UPDATE %s SET sig = minhash(body, permutations => 64) WHERE id = 7}, q{minhash_pairs%s('%s', 'id', 'sig')} ],
	[ 'bands above the permutations', q{UPDATE %s SET sig = minhash(body, permutations => 64)}, q{minhash_groups%s('%s', 'id', 'sig', 0.5, 65)} ],
	[ 'a NULL id', q{INSERT INTO %s (id, c, keys) VALUES (NULL, 1, '{1}')}, q{shared_key_groups%s('%s', 'id', 'keys')} ],
	[ 'a column of the wrong type', q{SELECT 1 FROM %s LIMIT 0}, q{shared_key_pairs%s('%s', 'id', 'sig')} ])
{
	my ($name, $change, $job) = @$case;
	cq(sprintf($change, 'docs_bad') . '; ' . sprintf($change, 'docs_bad_local'));
	my ($rc_d, $out_d, $err_d) = $coord->psql('postgres', 'SELECT count(*) FROM ' . sprintf($job, '', 'docs_bad'));
	my ($rc_l, $out_l, $err_l) = $coord->psql('postgres', 'SELECT count(*) FROM ' . sprintf($job, '', 'docs_bad_local'));
	my ($msg_d) = $err_d =~ /ERROR:  (.*)/;
	my ($msg_l) = $err_l =~ /ERROR:  (.*)/;
	# the jobs on the workers run with search_path = pg_catalog, pg_temp:
	# their messages name the extension's types with its schema
	s/docs_bad_local/docs_bad/g, s/\bpublic\.(simhash64|minhash_signature)\b/$1/g
		for grep { defined } ($msg_d, $msg_l);
	ok($rc_d != 0 && $rc_l != 0 && defined $msg_l && $msg_d eq $msg_l && $out_d eq '',
		"jobs on the workers, $name: the single-node job's error ($msg_l)")
	  or diag("distributed: $err_d\nlocal: $err_l");
}
is(cq(q{SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash_part_%'}), '0',
	'the work table is dropped');
like(($coord->psql('postgres', q{SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3, 'nearest')}))[2],
	qr/unknown linkage/, 'simhash_groups on a distributed table: an unknown linkage is an error');

# groups chain across shards: some group has members on several shards
cmp_ok(cq(q{SELECT max(n) FROM (SELECT count(DISTINCT get_shard_id_for_distribution_column('docs', id)) AS n
		FROM simhash_groups('docs', 'id', 'h') GROUP BY group_id) x}), '>', 1,
	'some groups span several shards');
my ($rc_l, undef, $err_l) = $coord->psql('postgres', q{SELECT count(*) FROM simhash_pairs('docs_local', 'id', 'h')});
unlike($err_l, qr/Citus/, 'no NOTICE for a local table');
my ($rc_r, undef, $err_r) = $coord->psql('postgres', q{SELECT count(*) FROM simhash_pairs('new_ref', 'id', 'h')});
ok($rc_r == 0 && $err_r !~ /Citus/, 'no NOTICE for a reference table');

# ---- 6. a worker restarted in the middle of a job ----
# Hold the job: lock one of worker 2's shards, start the job (its read
# waits for the lock), restart worker 2 (immediate), expect a clear error.
# (Citus hides shards from pg_class on the workers: ask the coordinator)
my $shard = cq(sprintf(q{SELECT shard_name FROM citus_shards
	WHERE table_name = 'docs'::regclass AND nodeport = %d ORDER BY 1 LIMIT 1}, $w2->port));
ok($shard ne '', "worker 2 holds shard $shard");
sub restart_mid_job
{
	my ($job_sql, $name) = @_;
	my $locker = $w2->background_psql('postgres', on_error_stop => 0);
	$locker->query_safe("SET citus.enable_manual_changes_to_shards = on; BEGIN; LOCK TABLE $shard IN ACCESS EXCLUSIVE MODE;");
	my $job = $coord->background_psql('postgres', on_error_stop => 0);
	$job->query_until(qr/jobstarted/, "\\echo jobstarted\n$job_sql;\n");
	$w2->poll_query_until('postgres', "SELECT count(*) > 0 FROM pg_locks WHERE relation = '$shard'::regclass AND NOT granted")
	  or die "$name did not reach the locked shard";
	$w2->stop('immediate');
	eval { $locker->quit };
	$w2->start;
	# the next query of the job's session runs once the job has ended
	my ($jobout) = $job->query("SELECT 'after'");
	my $joberr = $job->{stderr};
	eval { $job->quit };
	like($joberr, qr/ERROR:.*(connection|terminat|server closed|could not)/i,
		"$name, worker restarted mid-job: fails with a connection error")
	  or diag("stderr: $joberr");
	is($jobout, 'after', "$name, worker restarted mid-job: no partial result");
}
restart_mid_job(q{SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')}, 'simhash_pairs');
restart_mid_job(q{SET simhash.citus_jobs = off; SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')}, 'simhash_pairs (citus_jobs off)');
restart_mid_job(q{SELECT count(*) FROM simhash_groups('docs', 'id', 'h')}, 'simhash_groups');
restart_mid_job(q{SELECT count(*) FROM shared_key_groups('docs', 'id', 'keys')}, 'shared_key_groups');
restart_mid_job(q{SELECT count(*) FROM minhash_pairs('docs', 'id', 'sig', 0.5)}, 'minhash_pairs');
is(cq(q{SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash_part_%'}), '0',
	'the work table of the failed job was rolled back');
is(cq(q{SELECT string_agg(result, ',') FROM run_command_on_workers(
		$$SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash_part_%'$$)}), '0,0',
	'... on the workers too');
# after the restart the job works again and gives the same result
my $n_local = cq(q{SELECT count(*) FROM simhash_pairs('docs_local', 'id', 'h')});
is(cq(q{SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')}), $n_local,
	'after the restart: the same pairs again');
is(cq(q{SELECT count(DISTINCT group_id) FROM simhash_groups('docs', 'id', 'h')}),
	cq(q{SELECT count(DISTINCT group_id) FROM simhash_groups('docs_local', 'id', 'h')}),
	'after the restart: simhash_groups, the same groups again');

# a worker that is down: a clear error, no result
$w1->stop('fast');
my ($rc_down, $out_down, $err_down) = $coord->psql('postgres', q{SELECT count(*) FROM simhash_pairs('docs', 'id', 'h')});
ok($rc_down != 0 && $out_down eq '', 'a worker down: the job fails');
my ($rc_down2, $out_down2, $err_down2) = $coord->psql('postgres', q{SELECT count(*) FROM simhash_groups('docs', 'id', 'h', 3, 'leader')});
ok($rc_down2 != 0 && $out_down2 eq '' && $err_down2 =~ /ERROR:.*connect/i, 'a worker down: simhash_groups (leader) fails with a connection error')
  or diag($err_down2);
like($err_down, qr/ERROR:.*(connect|connection)/i, 'a worker down: a connection error names the cause')
  or diag($err_down);
for my $job (q{shared_key_pairs('docs', 'id', 'keys')}, q{shared_key_groups('docs', 'id', 'keys', 2)},
	q{minhash_pairs('docs', 'id', 'sig', 0.5)}, q{minhash_groups('docs', 'id', 'sig', 0.5)})
{
	my ($rc_j, $out_j, $err_j) = $coord->psql('postgres', "SELECT count(*) FROM $job");
	ok($rc_j != 0 && $out_j eq '' && $err_j =~ /ERROR:.*connect/i, "a worker down: $job fails with a connection error, no rows")
	  or diag($err_j);
}
$w1->start;

# groups computed on the workers into tables co-located with docs
# (simhash_groups_into), against the single-node groups of more than one row
cq(q{SET simhash.progress_interval = -1;
	SELECT simhash_groups_into('docs', 'id', 'h', 'docs_groups');
	SELECT simhash_groups_into('docs', 'id', 'h', 'docs_leaders', 3, 'leader');
	SELECT simhash_groups_into('docs', 'id', 'h', 'docs_groups_2_6', 2, 'connected', 6)});
for my $case ([ 'docs_groups', q{'docs_local', 'id', 'h'} ], [ 'docs_leaders', q{'docs_local', 'id', 'h', 3, 'leader'} ],
	[ 'docs_groups_2_6', q{'docs_local', 'id', 'h', 2, 'connected', 6} ])
{
	my ($t, $args) = @$case;
	is(cq("SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM $t"),
		cq("SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM simhash_groups($args) g
			WHERE g.group_id IN (SELECT x.group_id FROM simhash_groups($args) x GROUP BY 1 HAVING count(*) > 1)"),
		"simhash_groups_into($t) on the workers: the single-node groups of more than one row");
}
is(cq(q{SELECT count(DISTINCT colocationid) FROM pg_dist_partition
	WHERE logicalrelid IN ('docs'::regclass, 'docs_groups'::regclass, 'docs_leaders'::regclass)}), '1',
	'simhash_groups_into: the result tables are co-located with the source');
cmp_ok(cq(q{SELECT count(*) FROM docs_leaders WHERE id <> group_id}), '>', 100, 'simhash_groups_into: followers found');
is(cq(q{SELECT count(*) FROM pg_class WHERE relname LIKE 'simhash_part_%'}), '0', 'simhash_groups_into: the work tables are dropped');
($rc, $out, $err) = $coord->psql('postgres',
	q{SET simhash.progress_interval = 0; SELECT simhash_groups_into('docs', 'id', 'h', 'docs_groups_p', 3, 'leader')});
like($err, qr/NOTICE:  simhash_groups_into: labelling round 1 on the workers: \d+ rows relabelled\n.*NOTICE:  simhash_groups_into: choosing the leaders on the workers/s,
	'simhash_groups_into: groups labelled and leaders chosen on the workers (progress NOTICEs)') or diag($err);
unlike($err, qr/on this node|reading all its rows/, 'simhash_groups_into: nothing grouped or read on the coordinator');
# text ids: the rows are read here (simhash_groups says so), the table is
# still distributed
($rc, $out, $err) = $coord->psql('postgres',
	q{SET simhash.progress_interval = -1; SELECT simhash_groups_into('docs', 'body', 'h', 'docs_body_groups', 1)});
like($err, qr/The job runs here, not on the workers: ids of type text/, 'simhash_groups_into with text ids: read on the coordinator, saying so');
is(cq(q{SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM docs_body_groups}),
	cq(q{SELECT count(*), md5(string_agg(id || ',' || group_id, ';' ORDER BY id)) FROM simhash_groups('docs_local', 'body', 'h', NULL::text, 1) g
		WHERE g.group_id IN (SELECT x.group_id FROM simhash_groups('docs_local', 'body', 'h', NULL::text, 1) x GROUP BY 1 HAVING count(*) > 1)}),
	'simhash_groups_into with text ids: the single-node groups');
is(cq(q{SELECT partmethod FROM pg_dist_partition WHERE logicalrelid = 'docs_body_groups'::regclass}), 'h',
	'... in a distributed table');

# delete every member of a group but its leader: a join on the
# distribution column with the co-located result, one task per shard
like(cq('SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) DELETE FROM docs d USING docs_leaders g WHERE d.id = g.id AND g.id <> g.group_id'),
	qr/Task Count: $SHARDS/, 'the delete of the followers runs as one task per shard');
cq('DELETE FROM docs d USING docs_leaders g WHERE d.id = g.id AND g.id <> g.group_id');
cq(q{DELETE FROM docs_local d USING (SELECT * FROM simhash_groups('docs_local', 'id', 'h', 3, 'leader')) g
	WHERE d.id = g.id AND g.id <> g.group_id});
same_as_local(q{SELECT count(*), md5(string_agg(id::text, ',' ORDER BY id)) FROM docs},
	'delete all but the leaders through simhash_groups_into: the single-node rows');

$_->stop for @nodes;
done_testing();

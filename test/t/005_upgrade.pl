# test/t/005_upgrade.pl: the upgrade path from the frozen 1.0 to the current
# version.
#   - ALTER EXTENSION simhash UPDATE from 1.0 gives exactly the objects of a
#     fresh install (schema-only dumps of both databases compared);
#   - fingerprints and distances computed under 1.0 equal those computed
#     after the upgrade, for the same inputs and options;
#   - an index built under 1.0 answers the same after the upgrade;
#   - a dump taken under 1.0 restores into a database that gets the current
#     version.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->start;

my $current = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'simhash'");
isnt($current, '1.0', "default version ($current) is past the frozen 1.0");

# Values whose definition is frozen: every fingerprint and distance function
# of 1.0, on a fixed set of inputs.
my $values_sql = q{
	SELECT string_agg(v, E'\n' ORDER BY k) FROM (
		SELECT 'simhash ' || g AS k,
		       simhash(b)::text || ' ' || simhash(b, 3)::text || ' ' ||
		       simhash_compute(simhash_tokens(b))::text || ' ' ||
		       coalesce(array_to_string(sentence_hashes(b), ','), '') || ' ' ||
		       minhash(b)::text || ' ' || minhash(b, 3, 'term', 16, 7)::text AS v
		FROM (SELECT g, repeat('Near duplicate text number ' || g || '. ', g % 9) ||
		               '中文文本的第' || g || '个例子。这是一个比较长的句子，用于测试。'
		               AS b FROM generate_series(1, 40) g) s
		UNION ALL
		SELECT 'distance ' || g,
		       (simhash_hash('a' || g)::simhash64 <~> simhash_hash('b' || g)::simhash64)::text
		FROM generate_series(1, 20) g
	) x
};

# database old: 1.0 with data and an index, then updated
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{
	CREATE EXTENSION simhash VERSION '1.0';
	CREATE TABLE docs (id int PRIMARY KEY, h simhash64);
	INSERT INTO docs SELECT g, simhash_hash('doc' || (g % 3000))::simhash64
		FROM generate_series(1, 6000) g;
	CREATE INDEX docs_h ON docs USING simhash (h);
});
my $values_10 = $node->safe_psql('old', $values_sql);
my $hits_sql = q{
	SET enable_seqscan = off;
	SELECT string_agg(id::text, ',' ORDER BY id) FROM docs
	WHERE h <~> simhash_hash('doc17')::simhash64 <= 3
};
my $hits_10 = $node->safe_psql('old', $hits_sql);
like($hits_10, qr/^17,3017$/, 'index lookup under 1.0');

my $dumpdir = PostgreSQL::Test::Utils::tempdir;
$node->command_ok(
	[ 'pg_dump', '-F', 'c', '-f', "$dumpdir/old.dump", '-d', $node->connstr('old') ],
	'pg_dump under 1.0');

$node->safe_psql('old', 'ALTER EXTENSION simhash UPDATE');
is($node->safe_psql('old',
	"SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
	$current, "ALTER EXTENSION UPDATE reaches $current");
is($node->safe_psql('old', $values_sql), $values_10,
	'fingerprints and distances unchanged across the upgrade');
is($node->safe_psql('old', $hits_sql), $hits_10,
	'index built under 1.0 answers the same after the upgrade');
$node->safe_psql('old', q{
	INSERT INTO docs VALUES (6001, simhash_hash('doc17')::simhash64);
});
is($node->safe_psql('old', $hits_sql), "$hits_10,6001",
	'index built under 1.0 takes inserts after the upgrade');
# a function new in 1.1 works on a table made under 1.0
# (3000 values twice each, doc17 three times: 3000 - 1 + 3 exact pairs)
is($node->safe_psql('old',
	"SELECT pairs FROM simhash_distance_histogram('docs', 'h', 0)"), '3002',
	'simhash_distance_histogram on a 1.0 table after the upgrade');

# database fresh: the current version installed directly
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION simhash');
is($node->safe_psql('fresh', $values_sql), $values_10,
	'fingerprints of a fresh install equal those of 1.0');

# The extension's objects: a binary-upgrade schema dump of each database
# lists every member object of the extension (a plain dump shows only the
# CREATE EXTENSION); the OIDs it pins and the session keys of \restrict differ
# between databases and are dropped.
sub objects
{
	my ($db) = @_;
	my $file = "$dumpdir/$db.sql";
	$node->command_ok(
		[ 'pg_dump', '-s', '--binary-upgrade', '-T', 'docs', '-T', 'docs_id_seq',
		  '-f', $file, '-d', $node->connstr($db) ],
		"schema dump of $db");
	my @lines = grep { !/binary_upgrade_set_|^\\(un)?restrict |^-- Dumped|pg_catalog\.set_config|^CREATE DATABASE|^\\connect|^COMMENT ON DATABASE/ }
		split /\n/, slurp_file($file);
	# pg_dump lists an operator family's members ordered by strategy or
	# support number only; among equal numbers the order follows the catalogs'
	# physical order, i.e. the order the scripts added them in.  Compare the
	# members of each ALTER OPERATOR FAMILY as a set (sorted, without the
	# separating comma or final semicolon).
	my (@out, @members);
	for my $line (@lines, '')
	{
		if ($line =~ /^\s+(?:OPERATOR|FUNCTION) \d+ /)
		{
			push @members, $line =~ s/\s*[,;]$//r;
			next;
		}
		push @out, sort(@members), $line;
		@members = ();
	}
	return join("\n", @out);
}
my ($upgraded, $fresh) = (objects('old'), objects('fresh'));
like($fresh, qr/ALTER EXTENSION simhash ADD FUNCTION public\.simhash\(/,
	'schema dump lists the member objects');
is($upgraded, $fresh, 'upgraded objects equal a fresh install (schema dump)');

# A finer comparison than pg_dump (which dumps only the extension's CREATE):
# every member object of the extension, described, in both databases.
my $members_sql = q{
	SELECT string_agg(pg_describe_object(classid, objid, objsubid), E'\n'
	                  ORDER BY pg_describe_object(classid, objid, objsubid))
	FROM pg_depend
	WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
	  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
};
is($node->safe_psql('old', $members_sql), $node->safe_psql('fresh', $members_sql),
	'same member objects after the upgrade as in a fresh install');

# Every function's definition (signature, result, volatility, strictness,
# parallel safety, support function, body) in both databases.
my $functions_sql = q{
	SELECT string_agg(pg_get_functiondef(p.oid) || ' ' || coalesce(p.prosupport::text, '-')
	                  || ' ' || p.procost || ' ' || p.prorows, E'\n' ORDER BY p.oid::regprocedure::text)
	FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'simhash')
	  AND p.prokind <> 'a'
};
is($node->safe_psql('old', $functions_sql), $node->safe_psql('fresh', $functions_sql),
	'same function definitions after the upgrade as in a fresh install');

# A dump taken under 1.0 restores into a database that gets the current version.
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', $node->connstr('restored'), "$dumpdir/old.dump" ],
	'pg_restore of the 1.0 dump');
is($node->safe_psql('restored',
	"SELECT extversion FROM pg_extension WHERE extname = 'simhash'"),
	$current, "restored database has $current");
is($node->safe_psql('restored', $hits_sql), $hits_10,
	'index of the restored 1.0 dump answers the same');

$node->stop;
done_testing();

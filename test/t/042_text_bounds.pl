# test/t/042_text_bounds.pl: the functions that take a whole text stop when
# the query is cancelled, however the text is shaped, and jaccard's memory
# is bounded.
#
# Cancellation, held at a known point rather than timed: each call runs in
# a PL/pgSQL function that makes its text (200 MB, by repeat()) and then
# evaluates one simple assignment,
#     returned := CASE WHEN pg_advisory_xact_lock(41) ... THEN f(v) IS NOT NULL END
# Once the session holds the lock (the text is made, f is about to be
# called or running) a second session cancels it at once.  Nothing between
# taking the lock and the call, nor between the call and the assignment,
# checks for interrupts, so the cancel is pending when f runs, whenever it
# arrives: a function that never checks runs to its end, the assignment is
# made, and the cancel is only seen at the next statement ("returned, then
# cancelled"); one that checks is stopped inside ("cancelled inside").
# Neither a slow nor a fast machine changes which.  Before, sentence_hashes
# was cancelled only at its end (its boundary scan, tokenizing and sorts
# never checked).  (That a function checks throughout, not just somewhere,
# is what bench/bounds.sh measures: its cancel column.)
#
# Memory: jaccard(text, text) keeps each text's distinct shingle hashes in
# one allocation of at most 1 GB; a text of more distinct shingles than
# 2^26 (70 MB of hex digits) is refused with 54000.  The session's backend is
# limited (prlimit) to its size plus 2 GB (the set is 1.5 GB while it grows
# from 512 MB to 1 GB); before, the set grew with the distinct shingles
# (1.5 GB for 100 MB of distinct words, 16 GB for 1 GB) and this text's
# jaccard succeeded.
use strict;
use warnings;
use FindBin;
use lib $FindBin::RealBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use SimhashHold;

my $node = PostgreSQL::Test::Cluster->new('text_bounds');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	-- 70 MB of hex digits: 70 million distinct 9-character shingles,
	-- uncompressed (a read is a copy, not a decompression)
	CREATE UNLOGGED TABLE inputs (name text PRIMARY KEY, body text);
	ALTER TABLE inputs ALTER body SET STORAGE EXTERNAL;
	INSERT INTO inputs SELECT 'hex', string_agg(md5(i::text), '') FROM generate_series(1, 2200000) i;
});

# the texts, made by repeat() in the probe (0.05 s): 200 MB of one short
# sentence; 200 MB without ASCII nor a sentence end (one sentence, one run
# of tokens); 200 MB of ASCII words
my %text = (
	sentences => q{repeat(repeat('Sentence number one is here. ', 1000), 7000)},
	chinese => q{repeat(repeat('中文字符测试', 1000), 11000)},
	words => q{repeat(repeat('lorem ipsum dolor sit amet ', 1000), 7500)},
);

# probe NAME, TEXT, EXPR: a function probe_NAME() that evaluates EXPR (of
# the text v) as above and says where the cancel came
my @probes = (
	[ 'sentences_many', 'sentences', q{sentence_hashes(v)} ],
	[ 'sentences_one', 'chinese', q{sentence_hashes(v)} ],
	[ 'minhash_chinese', 'chinese', q{minhash(v)} ],
	[ 'jaccard_chinese', 'chinese', q{jaccard(v, 'abc', 2, 'term')} ],
	[ 'simhash', 'words', q{simhash(v, 64)} ],
	[ 'simhash_v2', 'chinese', q{simhash_v2(v, 3)} ],
);
for my $p (@probes)
{
	my ($name, $input, $expr) = @$p;
	$node->safe_psql('postgres', qq{
		CREATE FUNCTION probe_$name() RETURNS text LANGUAGE plpgsql AS \$f\$
		DECLARE
			v text;
			returned boolean := false;
		BEGIN
			v := $text{$input};
			returned := CASE WHEN pg_advisory_xact_lock(41)::text IS NOT NULL
							 THEN $expr IS NOT NULL END;
			RETURN 'finished';
		EXCEPTION WHEN query_canceled THEN
			RETURN CASE WHEN returned THEN 'returned, then cancelled' ELSE 'cancelled inside' END;
		END \$f\$;
	});
}
for my $p (@probes)
{
	my ($name, undef, $expr) = @$p;
	my ($s, $pid) = start_waiting($node, $name, '', "SELECT probe_$name()", q{
		count(*) > 0 FROM pg_locks
		WHERE locktype = 'advisory' AND objid = 41 AND pid = $1 AND granted});
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid);");
	my $out = $s->query('SELECT 1;');
	$s->quit;
	like($out, qr/^cancelled inside\n1\z/, "$expr is cancelled inside the call")
		or diag("$name: $out");
}

# jaccard's hash set: at most 1 GB, then 54000
my $limit = q{
	COPY (SELECT pg_backend_pid()) TO PROGRAM
		'read p; v=$(awk ''/^VmSize/ {print $2}'' /proc/$p/status); prlimit --pid $p --as=$(( (v + 2097152) * 1024 ))';
};
my ($stdout, $stderr);
$node->psql('postgres', $limit . q{
	\set VERBOSITY verbose
	SELECT jaccard(body, 'abc') FROM inputs WHERE name = 'hex';
}, stdout => \$stdout, stderr => \$stderr, on_error_stop => 0);
like($stderr, qr/54000: jaccard: more than 67108864 distinct shingles in one value/,
	'jaccard of 70 million distinct shingles: 54000 within 2 GB');
# below the limit, under the same address space limit
$node->psql('postgres', $limit . q{
	SELECT jaccard(left(body, 4000000), left(body, 2000000)) BETWEEN 0.49 AND 0.51 FROM inputs WHERE name = 'hex';
}, stdout => \$stdout, stderr => \$stderr, on_error_stop => 0);
is($stdout, 't', 'jaccard of 4 million distinct shingles below the limit') or diag($stderr);

$node->stop;
done_testing();

# test/t/011_input_limits.pl: hostile input sizes in a backend whose
# address space is limited.  The session limits its own backend with
# prlimit (COPY ... TO PROGRAM, as the superuser) to its current size plus
# 256 MB, then:
#  - simhash_features of a 30 MB text of two words lists them (it kept
#    every occurrence before);
#  - simhash(text) of a 100 MB text with two distinct words gives the right
#    fingerprint (it needed the text's length eight times over before: a
#    counting table sized from the length, and a buffer of twice the text);
#  - minhash_shingles and simhash_shingle whose results would exceed 1 GB
#    fail at once with 54000 instead of allocating until out of memory;
#  - jaccard(text, text) of the 30 MB text keeps the distinct shingles
#    only (it kept every occurrence before);
#  - a long simhash(text) is cancelled by statement_timeout promptly (the
#    backend's CPU time says so, not the wall clock).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION simhash;
	CREATE TABLE big (body text);
	-- 102 MB, stored compressed (about 1 MB)
	INSERT INTO big SELECT repeat('ab cd ', 17000000);
	CREATE TABLE mid (body text);
	INSERT INTO mid SELECT repeat('ab cd ', 5000000);	-- 30 MB
});

# the session's backend: at most its current size + 256 MB of address space
my $limit = q{
	COPY (SELECT pg_backend_pid()) TO PROGRAM
		'read p; v=$(awk ''/^VmSize/ {print $2}'' /proc/$p/status); prlimit --pid $p --as=$(( (v + 262144) * 1024 ))';
};

sub limited
{
	my ($sql) = @_;
	my ($stdout, $stderr);
	$node->psql('postgres', $limit . $sql, stdout => \$stdout, stderr => \$stderr,
		on_error_stop => 0);
	return ($stdout, $stderr);
}

# the limit works: a 600 MB allocation fails in the limited backend
my ($out, $err) = limited(q{SELECT length(repeat('x', 600000000));});
like($err, qr/out of memory/, 'the address space limit is in force');

($out, $err) = limited(q{
	SELECT simhash(body, 1) = (simhash_hash('ab') & simhash_hash('cd'))::simhash64,
		   simhash(body, 2) = simhash(repeat('ab cd ', 1000), 2)
	FROM big;
});
is($out, 't|t', 'simhash of a 100 MB text of two words within 256 MB') or diag($err);

# simhash_features keeps the distinct shingles, not every occurrence (it
# kept 24 bytes per occurrence: 240 MB here, besides twice the text)
($out, $err) = limited(q{
	SELECT count(*), sum(count), min(weight) FROM mid, simhash_features(body, 1);
});
is($out, '2|10000000|45', 'simhash_features of a 30 MB text of two words within 256 MB') or diag($err);

($out, $err) = limited(q{
	\set VERBOSITY verbose
	SELECT cardinality(minhash_shingles(repeat('abcdefghij ', 2000000), 1024, 'char'));
});
like($err, qr/54000: the result of minhash_shingles would be too large/,
	'minhash_shingles: 54000 before allocating');

($out, $err) = limited(q{
	\set VERBOSITY verbose
	SELECT cardinality(simhash_shingle(array_fill('x'::text, ARRAY[3000000]), 1024));
});
like($err, qr/54000: the result of simhash_shingle would be too large/,
	'simhash_shingle: 54000 before allocating');

# jaccard(text, text) keeps the distinct shingles of each text, not every
# occurrence (it kept 8 bytes per shingle occurrence, sorted once: 240 MB
# and its doublings here, besides the text and its 4-byte-a-character copy)
($out, $err) = limited(q{
	SELECT jaccard(body, 'ab cd ab cd ab cd'), jaccard(body, body, 3, 'term') FROM mid;
});
is($out, '1|1', 'jaccard of a 30 MB text of two words within 256 MB') or diag($err);

# cancel: window 1024 over 17M tokens hashes about 50 GB, about 10 s of CPU
# time.  The backend's own CPU time (utime + stime from /proc, in clock
# ticks), read before and after in the same session, bounds the work done
# after the 1 s timeout fired: a function that checks for interrupts only
# when it returns uses all of its 10 s, one that checks in its loops about
# 1 s (the timeout counts wall time, so less when the machine is busy).
# CPU time, unlike wall time, does not grow with the machine's load.
my $cpu = q{SELECT sum(t::bigint) FROM unnest((regexp_split_to_array(split_part(
	pg_read_file('/proc/' || pg_backend_pid() || '/stat'), ') ', 2), ' '))[12:13]) t;};
($out, $err) = limited(qq{
	$cpu
	SET statement_timeout = '1s';
	SELECT simhash(body, 1024) FROM big;
	RESET statement_timeout;
	$cpu
});
like($err, qr/canceling statement due to statement timeout/, 'long simhash(text) is cancelled');
my @ticks = split /\n/, $out;
my $hz = `getconf CLK_TCK` || 100;
my $cpu_s = @ticks == 2 ? ($ticks[1] - $ticks[0]) / $hz : 1e9;
cmp_ok($cpu_s, '<', 4, "cancelled after ${cpu_s} s of CPU time (about 10 s uncancelled)");

$node->stop;
done_testing();

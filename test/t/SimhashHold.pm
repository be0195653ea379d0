# test/t/SimhashHold.pm: starting a statement in a session of its own and
# waiting until it reaches a known point (start_waiting(): 004, 042), in
# particular a parallel job whose workers are held there
# (018_dedup_parallel.pl, 019_dedup_keys_parallel.pl).  Not a test itself
# (prove runs t/*.pl only).
#
# The hold point is src/test_hold.c: with simhash.test_hold_workers = KEY
# set in the job's session, every parallel worker of the job waits at its
# start for pg_advisory_lock(KEY), which a holder session keeps while the
# test terminates or cancels.  The test waits until the workers wait on the
# lock, however long that takes, so nothing depends on timing.
package SimhashHold;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(start_waiting hold_workers release_workers start_held_job terminate_held_worker);

my $KEY = 4242;
my %holder;

# start $sql in a new session of $node ($setup: SQL run there first) and
# return (session, its pid) once $until (SQL given the pid as $1's text:
# a condition on pg_stat_activity or pg_locks) is true; dies with $name
# if it never is
sub start_waiting
{
	my ($node, $name, $setup, $sql, $until) = @_;
	my $s = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $s->query_safe(($setup // '') . "SELECT pg_backend_pid();");
	chomp $pid;
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
	(my $cond = $until) =~ s/\$1/$pid/g;
	$node->poll_query_until('postgres', "SELECT $cond")
	  or die "$name: the statement never reached its known point";
	return ($s, $pid);
}

# lock the hold point's key in a holder session of $node
sub hold_workers
{
	my ($node) = @_;
	$holder{$node} //= $node->background_psql('postgres');
	$holder{$node}->query_safe("SELECT pg_advisory_lock($KEY);");
}

# unlock it: held workers (if any are left) go on
sub release_workers
{
	my ($node) = @_;
	$holder{$node}->query_safe("SELECT pg_advisory_unlock($KEY);");
}

# start $sql in a new session with the workers held; returns (session, its
# pid) once at least one of its parallel workers waits at the hold point.
# $setup: SQL run in the session first.
sub start_held_job
{
	my ($node, $name, $sql, $setup) = @_;
	hold_workers($node);
	return start_waiting($node, $name,
		($setup // '') . "SET simhash.test_hold_workers = $KEY; ", $sql, q{
		count(*) > 0 FROM pg_stat_activity
		WHERE backend_type = 'parallel worker' AND leader_pid = $1
		  AND wait_event_type = 'Lock' AND wait_event = 'advisory'});
}

# terminate one held worker of the leader $pid
sub terminate_held_worker
{
	my ($node, $pid) = @_;
	$node->safe_psql('postgres', qq{
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE backend_type = 'parallel worker' AND leader_pid = $pid
		  AND wait_event = 'advisory'
		LIMIT 1
	});
}

1;

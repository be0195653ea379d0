# bench/jobs.sh: sourced by bench/dedup.sh and bench/scale.sh (after
# test/lib.sh and start_cluster), the harness for one long statement:
#   job SETTINGS QUERY  run SETTINGS then QUERY (psql \timing) in a fresh
#                       connection; prints "ms peak_kB cpu_ms result": cpu_ms
#                       is the CPU time of the backend and its parallel
#                       workers (the postmaster's reaped children, clock
#                       ticks: 10 ms), less sensitive to the machine's load
#                       than ms (counted once the backend has exited and
#                       the postmaster has reaped it); peak_kB is
#                       the peak of the anonymous memory (RssAnon: private,
#                       not shared buffers) summed over the server's
#                       processes (the backend and its parallel workers),
#                       sampled every 20 ms, minus that sum before the call;
#                       result is the output's last line or its first error;
#                       the kernel's part of cpu_ms (system time: page
#                       faults, reads from the OS cache) goes to
#                       $SIMHASH_TMP/job.sys_ms
#   temp_bytes          pg_stat_database.temp_bytes of the current database
#   median              the median of the numbers on stdin, one a line
server_anon_kb() {
	local pm pids
	pm=$(head -1 "$SIMHASH_TMP/data/postmaster.pid")
	pids=$(pgrep -P "$pm" | sed 's|.*|/proc/&/status|' || true)
	# shellcheck disable=SC2086
	{ grep -h '^RssAnon' $pids 2>/dev/null || true; } | awk '{s += $2} END {print s + 0}'
}
# CPU time (clock ticks) of the postmaster's exited children: "user+system system"
server_reaped_ticks() {
	awk '{print $16 + $17, $17}' "/proc/$(head -1 "$SIMHASH_TMP/data/postmaster.pid")/stat"
}
job() {
	local settings=$1 query=$2 out base peak=0 v ms res cli cpu0 cpu1 sys0 sys1 pid i
	out=$SIMHASH_TMP/job.out
	rm -f "$SIMHASH_TMP/job.ready"
	base=$(server_anon_kb)
	read -r cpu0 sys0 < <(server_reaped_ticks)
	( psql -X -q -v ON_ERROR_STOP=1 -At <<SQL
$settings
SELECT pg_backend_pid() \g $SIMHASH_TMP/job.ready
\timing on
$query
SQL
	) >"$out" 2>&1 &
	cli=$!
	while [ ! -s "$SIMHASH_TMP/job.ready" ] && kill -0 $cli 2>/dev/null; do sleep 0.01; done
	base=$(server_anon_kb)
	while kill -0 $cli 2>/dev/null; do
		v=$(server_anon_kb)
		[ "${v:-0}" -gt "$peak" ] && peak=$v
		sleep 0.02
	done
	wait $cli || true
	# the backend exits after its client (freeing a large job's memory can
	# take seconds); its CPU time counts once the postmaster has reaped it
	pid=$(tr -dc 0-9 <"$SIMHASH_TMP/job.ready")
	for ((i = 0; i < 600; i++)); do
		[ -n "$pid" ] && [ -e "/proc/$pid" ] || break
		sleep 0.1
	done
	sleep 0.1
	read -r cpu1 sys1 < <(server_reaped_ticks)
	echo $(( (sys1 - sys0) * 1000 / $(getconf CLK_TCK) )) >"$SIMHASH_TMP/job.sys_ms"
	# the result's last line, or the first error
	res=$({ grep -m1 '^ERROR' "$out" || grep -v '^Time:' "$out" || true; } | tail -1)
	ms=$(grep -oE 'Time: [0-9.]+' "$out" | tail -1 | awk '{print $2}')
	echo "${ms:-0} $((peak > base ? peak - base : 0)) $(( (cpu1 - cpu0) * 1000 / $(getconf CLK_TCK) )) $res"
}
temp_bytes() {
	psql -X -q -At -c "SELECT pg_stat_force_next_flush()" \
		-c "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()" | tail -1
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

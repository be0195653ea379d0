#!/bin/sh
# sql/distance_grid.sh: prints the SQL of the simhash_distance operator grid,
# the functions and operators between simhash_distance and itself, smallint,
# integer, bigint, numeric and double precision, in both operand orders.
#   sh sql/distance_grid.sh comparisons   < <= = >= > <> (functions, operators)
#   sh sql/distance_grid.sh arithmetic    + - * /        (functions, operators)
#   sh sql/distance_grid.sh btree         the btree operator family
# The Makefile runs it while building the install script from sql/simhash.sql:
# a line "--@generate distance_grid.sh PART" there is replaced by this output
# (POSIX sh only: the Debian package build runs it).  Edit this file, not the
# built sql/simhash--<version>.sql; test/t/005_upgrade.pl checks the result
# against 1.0 + the upgrade scripts, which wrote the same objects by hand (1.0)
# and in a DO loop (1.0--1.1).
#
# What the grid is (README "Searching"): a <~> b is a simhash_distance, an
# int4 of its own type whose comparison functions carry the planner support
# simhash_distance_support, so that (h <~> q) <= k becomes an index condition.
# Integer operands use PostgreSQL's own int4/int2/int8 functions (LANGUAGE
# internal, LEAKPROOF; the comparisons other than <> carry the support);
# numeric and double precision operands are SQL functions through the
# built-in operator of that type (exact matches, so that d <= 3.5 or d / 64.0
# do not go through float8 via an implicit cast; not index conditions).
#
# Names (frozen: 1.0 and 1.1 released them):
#   simhash_distance_<op>(simhash_distance, simhash_distance)   comparisons
#   simhash_distance_distance_<op>(simhash_distance, simhash_distance) arithmetic
#   simhash_distance_<t>_<op>(simhash_distance, <t>)
#   simhash_<t>_distance_<op>(<t>, simhash_distance)
# <t>: int2 int4 int8 numeric float8; <op>: lt le eq ge gt ne, pl mi mul div,
# cmp (btree support, integers only).
set -eu

# The operand types, in the order their objects are printed.
TAGS="distance int2 int4 int8 numeric float8"

# sqltype TAG: the SQL name of an operand type
sqltype() {
	case $1 in
	distance) echo simhash_distance ;;
	int2) echo smallint ;;
	int4) echo integer ;;
	int8) echo bigint ;;
	numeric) echo numeric ;;
	float8) echo 'double precision' ;;
	esac
}

# builtin TAG SIDE: the prefix of PostgreSQL's internal functions for
# (simhash_distance, TAG) (SIDE 1) or (TAG, simhash_distance) (SIDE 2) taken as
# int4 operands; empty for the types that get SQL functions
builtin() {
	case $1:$2 in
	distance:* | int4:*) echo int4 ;;
	int2:1) echo int42 ;;
	int2:2) echo int24 ;;
	int8:1) echo int48 ;;
	int8:2) echo int84 ;;
	*) echo ;;
	esac
}

# name TAG SIDE: the function name stem of an operand pair (comparisons and
# btree support; the arithmetic of (distance, distance) says distance twice)
name() {
	if [ "$1" = distance ]; then echo simhash_distance
	elif [ "$2" = 1 ]; then echo "simhash_distance_$1"
	else echo "simhash_$1_distance"
	fi
}

# each_pair COMMAND: runs COMMAND TAG SIDE LEFT RIGHT for every operand pair,
# (distance, distance) once, then (distance, t) and (t, distance) by type
each_pair() {
	for tag in $TAGS; do
		for side in 1 2; do
			[ "$tag" = distance ] && [ "$side" = 2 ] && continue
			if [ "$side" = 1 ]; then
				"$1" "$tag" "$side" simhash_distance "$(sqltype "$tag")"
			else
				"$1" "$tag" "$side" "$(sqltype "$tag")" simhash_distance
			fi
		done
	done
}

# function NAME LEFT RIGHT RESULT BUILTIN SQLOP [EXTRA]: the function of an
# operator, internal when BUILTIN is set, else SQL through SQLOP of LEFT's or
# RIGHT's type (the one that is not simhash_distance)
function_sql() {
	if [ -n "$5" ]; then
		printf 'CREATE FUNCTION %s(%s, %s) RETURNS %s\n\tAS '\''%s'\'' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE%s;\n' \
			"$1" "$2" "$3" "$4" "$5" "${7:-}"
	else
		t=$2; [ "$t" = simhash_distance ] && t=$3
		printf 'CREATE FUNCTION %s(%s, %s) RETURNS %s\n\tAS '\''SELECT $1::%s OPERATOR(pg_catalog.%s) $2::%s'\'' LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE;\n' \
			"$1" "$2" "$3" "$4" "$t" "$6" "$t"
	fi
}

# comparison: op, name, commutator, negator, restriction and join selectivity
COMPARISONS='< lt > >= scalarltsel scalarltjoinsel
<= le >= > scalarlesel scalarlejoinsel
= eq = <> eqsel eqjoinsel
>= ge <= < scalargesel scalargejoinsel
> gt < <= scalargtsel scalargtjoinsel
<> ne <> = neqsel neqjoinsel'

comparisons_of() {	# TAG SIDE LEFT RIGHT
	stem=$(name "$1" "$2") prefix=$(builtin "$1" "$2")
	printf '\n-- %s op %s\n' "$3" "$4"
	echo "$COMPARISONS" | while read -r op fn com neg rest join; do
		extra=
		if [ -n "$prefix" ]; then
			extra=' LEAKPROOF'
			[ "$fn" != ne ] && extra="$extra
	SUPPORT simhash_distance_support"
		fi
		function_sql "${stem}_$fn" "$3" "$4" boolean "${prefix:+$prefix$fn}" "$op" "$extra"
		hashes=
		[ "$1" = distance ] && [ "$fn" = eq ] && hashes=',
	HASHES, MERGES'
		printf 'CREATE OPERATOR %s (\n\tLEFTARG = %s, RIGHTARG = %s, FUNCTION = %s,\n\tCOMMUTATOR = %s, NEGATOR = %s, RESTRICT = %s, JOIN = %s%s\n);\n' \
			"$op" "$3" "$4" "${stem}_$fn" "$com" "$neg" "$rest" "$join" "$hashes"
	done
}

arithmetic_of() {	# TAG SIDE LEFT RIGHT
	stem=$(name "$1" "$2") prefix=$(builtin "$1" "$2")
	[ "$1" = distance ] && stem=simhash_distance_distance
	# integers: the built-in function's result; others: the other type
	case $1 in
	int8) result=bigint ;;
	numeric | float8) result=$(sqltype "$1") ;;
	*) result=integer ;;
	esac
	printf '\n-- %s op %s\n' "$3" "$4"
	for pair in +:pl -:mi '*:mul' /:div; do
		op=${pair%%:*} fn=${pair#*:}
		function_sql "${stem}_$fn" "$3" "$4" "$result" "${prefix:+$prefix$fn}" "$op"
		printf 'CREATE OPERATOR %s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = %s);\n' \
			"$op" "$3" "$4" "${stem}_$fn"
	done
}

cmp_of() {	# TAG SIDE LEFT RIGHT
	[ -n "$(builtin "$1" "$2")" ] || return 0
	function_sql "$(name "$1" "$2")_cmp" "$3" "$4" integer "bt$(builtin "$1" "$2")cmp" '' ' LEAKPROOF'
}

family_of() {	# TAG SIDE LEFT RIGHT: the cross-type members of the btree family
	for op_fn_n in '<:lt:1' '<=:le:2' '=:eq:3' '>=:ge:4' '>:gt:5'; do
		printf '\tOPERATOR %s %s (%s, %s),\n' "${op_fn_n##*:}" "${op_fn_n%%:*}" "$3" "$4"
	done
	printf '\tFUNCTION 1 %s_cmp(%s, %s)%s\n' "$(name "$1" "$2")" "$3" "$4" "$5"
}

# the family's cross-type members, all (distance, t) then all (t, distance):
# the order of 1.0, which pg_dump's listing of the family follows
family() {
	for side in 1 2; do
		for tag in int2 int4 int8; do
			last=,
			[ "$side$tag" = 2int8 ] && last=';'
			if [ "$side" = 1 ]; then
				family_of "$tag" "$side" simhash_distance "$(sqltype "$tag")" "$last"
			else
				family_of "$tag" "$side" "$(sqltype "$tag")" simhash_distance "$last"
			fi
		done
	done
}

case ${1:-} in
comparisons)
	each_pair comparisons_of ;;
arithmetic)
	each_pair arithmetic_of ;;
btree)
	each_pair cmp_of
	cat <<'EOF'
CREATE FUNCTION simhash_distance_sortsupport(internal) RETURNS void
	AS 'btint4sortsupport' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR CLASS simhash_distance_ops DEFAULT FOR TYPE simhash_distance USING btree AS
	OPERATOR 1 < (simhash_distance, simhash_distance),
	OPERATOR 2 <= (simhash_distance, simhash_distance),
	OPERATOR 3 = (simhash_distance, simhash_distance),
	OPERATOR 4 >= (simhash_distance, simhash_distance),
	OPERATOR 5 > (simhash_distance, simhash_distance),
	FUNCTION 1 simhash_distance_cmp(simhash_distance, simhash_distance),
	FUNCTION 2 simhash_distance_sortsupport(internal);

-- integer operands of either side: cross-type members of the same family
ALTER OPERATOR FAMILY simhash_distance_ops USING btree ADD
EOF
	family ;;
*)
	echo "usage: $0 comparisons|arithmetic|btree" >&2
	exit 2 ;;
esac

#!/usr/bin/env bash
# bench/run.sh: how fast `cfix validate` reads a big store, next to cat and jq.
#
#   bench/run.sh          (or: make bench)
#
# Builds bin/cfix, generates a store into bench/out/store once (bench/gen;
# reused while the parameters, the generator and the corpus are the same),
# warms the page cache, then times each command RUNS times over the same
# files and keeps the best wall time and the highest peak RSS
# (/usr/bin/time). It prints a table, writes it to bench/out/results.txt and
# checks the bars:
#
#   cfix validate over the store is at least 2x as fast as `jq empty`;
#   cfix validate's peak RSS on the big session is under 150 MB.
#
# Exit status: 0 bars met, 1 a bar failed, 2 the bars could not be checked
# (cfix validate not built, or a command failed).
#
# Environment: SIZE (500MB), BIG (200MB), SEED (1), RUNS (3).
# MB here is 2^20 bytes, for sizes and RSS alike.
#
# To add a measurement: pick the files with `use_set`, then call
# `measure NAME CMD...` (or `measure_cfix NAME ARGS...` for cfix, which
# skips it while cfix validate does not exist). A pipeline goes through
# `bash -c` (see cat_all). Each row's numbers stay in WALL[NAME] and
# RSS[NAME] for verdicts. A command that writes (repair) must work on a copy
# (cp -a "$STORE" "$OUT/work", fresh before each run), never on the store.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-500MB}
BIG=${BIG:-200MB}
SEED=${SEED:-1}
RUNS=${RUNS:-3}

OUT=bench/out
STORE=$OUT/store
ROOT=$STORE/.claude
PROJECTS=$ROOT/projects
RESULTS=$OUT/results.txt
LOGS=$OUT/logs
TIME=/usr/bin/time

die() { echo "bench: $*" >&2; exit 2; }
[[ -x $TIME ]] || die "$TIME not found (GNU time: apt-get install time)"
command -v jq >/dev/null || die "jq not found"
mkdir -p "$LOGS"

# --- cfix --------------------------------------------------------------------
echo "bench: building bin/cfix ..." >&2
HAVE_CFIX=0
if go build -o bin/cfix ./cmd/cfix 2>"$LOGS/build.log" && bin/cfix validate --help >/dev/null 2>&1; then
	HAVE_CFIX=1
fi

# --- the store -----------------------------------------------------------------
# The stamp names what the store was made from; a different one regenerates it.
stamp="seed=$SEED size=$SIZE big=$BIG gen=$(
	ls bench/gen/*.go | grep -v '_test\.go$' | xargs cat | sha256sum | cut -c1-16
) corpus=$(find testdata/corpus -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -c1-16)"
if [[ ! -f $STORE/stamp || "$(cat "$STORE/stamp")" != "$stamp" ]]; then
	echo "bench: generating $SIZE store into $STORE ..." >&2
	rm -rf "$STORE"
	go run ./bench/gen -out "$STORE" -size "$SIZE" -big "$BIG" -seed "$SEED" >&2
	echo "$stamp" >"$STORE/stamp"
fi
BIGFILE=$STORE/$(jq -r .bigSession "$STORE/manifest.json")
[[ -f $BIGFILE ]] || die "big session $BIGFILE missing: rm -rf $STORE and retry"

# Warm the page cache: everything, twice.
echo "bench: warming the page cache ..." >&2
for _ in 1 2; do
	find "$ROOT" -type f -print0 | xargs -0 cat >/dev/null
done

# xargs passes as many names to one command as the system allows.
XARGS_MAX=$(xargs --show-limits </dev/null 2>&1 | awk -F': *' '/actually use/ {print $2}')
XARGS_MAX=${XARGS_MAX:-131072}

# --- measuring -------------------------------------------------------------------
SET_FILES=0 # the current file set: count and bytes (use_set)
SET_BYTES=0
declare -A WALL RSS
FAILED=0

# use_set FILE...: the files the next measurements read (for the files and MB
# columns); with a directory, its .jsonl files.
use_set() {
	read -r SET_FILES SET_BYTES < <(find "$@" -name '*.jsonl' -type f -printf '%s\n' |
		awk '{n++; s+=$1} END {printf "%d %d\n", n, s}')
}

# row NAME WALL RSS_MB | row NAME MESSAGE: print a line of the table (and
# add it to results.txt).
row() {
	local mb rate
	mb=$(awk -v b="$SET_BYTES" 'BEGIN {printf "%.1f", b/1048576}')
	if [[ $# -eq 3 ]]; then
		rate=$(awk -v b="$SET_BYTES" -v w="$2" 'BEGIN {if (w > 0) printf "%.0f", b/1048576/w; else print "-"}')
		printf '%-34s %7s %9s %8s %8s %12s\n' "$1" "$SET_FILES" "$mb" "$2" "$rate" "$3"
	else
		printf '%-34s %7s %9s   %s\n' "$1" "$SET_FILES" "$mb" "$2"
	fi | tee -a "$RESULTS"
}

# measure_prepared NAME PREPARE CMD...: measure, with PREPARE run (not
# timed) before each timed run.
measure_prepared() {
	local name=$1 prep=$2 ok=" ${OK:-0} " best="" rss=0 rc wall kb i log
	shift 2
	log=$LOGS/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-')
	for ((i = 0; i < RUNS; i++)); do
		$prep
		rc=0
		$TIME -f '%e %M' -o "$LOGS/time.txt" "$@" >/dev/null 2>"$log.err" || rc=$?
		if [[ $ok != *" $rc "* ]]; then
			row "$name" "failed: exit $rc (see $log.err)"
			FAILED=1
			return 0
		fi
		read -r wall kb < <(tail -n 1 "$LOGS/time.txt")
		if [[ -z $best ]] || awk -v a="$wall" -v b="$best" 'BEGIN {exit !(a < b)}'; then
			best=$wall
		fi
		if ((kb > rss)); then rss=$kb; fi
	done
	WALL[$name]=$best
	RSS[$name]=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k/1024}')
	row "$name" "$best" "${RSS[$name]}"
}

# measure NAME CMD...: run CMD RUNS times (stdout to /dev/null, stderr to
# bench/out/logs/NAME.err), record the best wall time and the highest peak
# RSS, and add a row. Exit codes in OK (default "0") count as success:
# `OK="0 1" measure ...`.
measure() {
	local name=$1
	shift
	measure_prepared "$name" : "$@"
}

# measure_cfix NAME ARGS...: measure bin/cfix ARGS (exit 0 or 1: it is a
# validator), or say it is not built.
measure_cfix() {
	local name=$1
	shift
	if ((HAVE_CFIX)); then
		OK="0 1" measure "$name" bin/cfix "$@"
	else
		row "$name" "cfix: not built"
	fi
}

# cat_all DIR / jq_all DIR: read every .jsonl under DIR with one command
# (xargs may still split a huge list into a few runs, one after the other).
cat_all() { find "$1" -name '*.jsonl' -type f -print0 | xargs -0 -s "$XARGS_MAX" cat >/dev/null; }
jq_all() { find "$1" -name '*.jsonl' -type f -print0 | xargs -0 -s "$XARGS_MAX" jq empty; }
export -f cat_all jq_all
export XARGS_MAX

BIG_MB=$(awk -v b="$(stat -c %s "$BIGFILE")" 'BEGIN {printf "%.0f", b/1048576}')
{
	echo "cfix bench $(date -u +%Y-%m-%dT%H:%M:%SZ)  $(git rev-parse --short HEAD 2>/dev/null || echo '?')  $(nproc) cores  $(jq --version)  best of $RUNS, page cache warm"
	echo "store: $STORE ($stamp)"
	echo
} | tee "$RESULTS"
printf '%-34s %7s %9s %8s %8s %12s\n' what files MB "wall s" "MB/s" "peak RSS MB" | tee -a "$RESULTS"

use_set "$PROJECTS"
measure "cat (store)" bash -c 'cat_all "$1"' _ "$PROJECTS"
measure "jq empty (store)" bash -c 'jq_all "$1"' _ "$PROJECTS"
measure_cfix "cfix validate (store)" validate --root "$ROOT" --quiet

use_set "$BIGFILE"
measure "cat (big session)" cat "$BIGFILE"
measure "jq empty (big session)" jq empty "$BIGFILE"
measure_cfix "cfix validate (big session)" validate --root "$ROOT" --quiet "$BIGFILE"

# --- repair: the big session with one torn line ---------------------------------
# Each run works on a fresh copy (made outside the timing): the big session
# with a torn record appended, its mtime an hour back (not live), in a store
# of its own on the same file system. Like a session torn minutes ago, the
# copy is on disk (synced) and its change time has settled: that cannot be
# set back, so the run waits changeset.Settled (1 s), and apply then trusts
# the plan's hash instead of reading the file again. cp and cp+sync copy the
# same file.
WORK=$OUT/work
WORKFILE=$WORK/.claude/projects/-bench/$(basename "$BIGFILE")
prepare_torn() {
	rm -rf "$WORK" "$OUT/journal"
	mkdir -p "$(dirname "$WORKFILE")"
	cp "$BIGFILE" "$WORKFILE"
	printf '{"type":"user","uuid":"torn' >>"$WORKFILE"
	touch -d '1 hour ago' "$WORKFILE"
	sync "$WORKFILE"
	cat "$WORKFILE" >/dev/null
	sleep 1.1
}
copy_big() { cp "$1" "$2"; }
copy_big_sync() { cp "$1" "$2" && sync "$2"; }
export -f copy_big copy_big_sync
if ((HAVE_CFIX)); then
	use_set "$BIGFILE"
	measure_prepared "cp (big session)" prepare_torn bash -c 'copy_big "$1" "$2"' _ "$WORKFILE" "$WORK/copy.jsonl"
	measure_prepared "cp + sync (big session)" prepare_torn bash -c 'copy_big_sync "$1" "$2"' _ "$WORKFILE" "$WORK/copy.jsonl"
	measure_prepared "cfix repair --apply (torn line)" prepare_torn env CFIX_JOURNAL_DIR="$OUT/journal" \
		bin/cfix repair --root "$WORK/.claude" --apply --yes "$WORKFILE"
	rm -rf "$WORK" "$OUT/journal"
fi

# --- verdicts ------------------------------------------------------------------
STATUS=0
VERDICTS=()
if ((HAVE_CFIX)) && [[ -n ${WALL["cfix validate (store)"]:-} && -n ${WALL["jq empty (store)"]:-} ]]; then
	x=$(awk -v j="${WALL["jq empty (store)"]}" -v c="${WALL["cfix validate (store)"]}" \
		'BEGIN {if (c > 0) printf "%.1f", j/c; else print "inf"}')
	if awk -v x="$x" 'BEGIN {exit !(x == "inf" || x >= 2)}'; then v=PASS; else v=FAIL STATUS=1; fi
	VERDICTS+=("cfix validate is ${x}x faster than jq empty (bar: >= 2x): $v")
else
	VERDICTS+=("cfix validate vs jq empty (bar: >= 2x): not measured")
	STATUS=2
fi
if ((HAVE_CFIX)) && [[ -n ${RSS["cfix validate (big session)"]:-} ]]; then
	r=${RSS["cfix validate (big session)"]}
	if awk -v r="$r" 'BEGIN {exit !(r < 150)}'; then v=PASS; else v=FAIL STATUS=1; fi
	VERDICTS+=("peak RSS on the $BIG_MB MB session: $r MB (bar: < 150 MB): $v")
else
	VERDICTS+=("peak RSS on the $BIG_MB MB session (bar: < 150 MB): not measured")
	STATUS=2
fi
if ((HAVE_CFIX)) && [[ -n ${WALL["cfix repair --apply (torn line)"]:-} && -n ${WALL["cp (big session)"]:-} ]]; then
	r=${WALL["cfix repair --apply (torn line)"]}
	x=$(awk -v r="$r" -v c="${WALL["cp (big session)"]}" 'BEGIN {if (c > 0) printf "%.1f", r/c; else print "inf"}')
	xs=$(awk -v r="$r" -v c="${WALL["cp + sync (big session)"]}" 'BEGIN {if (c > 0) printf "%.1f", r/c; else print "inf"}')
	if awk -v x="$x" 'BEGIN {exit !(x != "inf" && x < 2)}'; then v=PASS; else v=FAIL STATUS=1; fi
	VERDICTS+=("cfix repair --apply takes ${x}x the time of cp and ${xs}x that of cp + sync (bar: < 2x cp): $v")
	rr=${RSS["cfix repair --apply (torn line)"]}
	if awk -v r="$rr" 'BEGIN {exit !(r < 150)}'; then v=PASS; else v=FAIL STATUS=1; fi
	VERDICTS+=("peak RSS of the repair: $rr MB (bar: < 150 MB): $v")
fi
if ((!HAVE_CFIX)); then
	VERDICTS+=("cfix: not built (bin/cfix validate missing; see $LOGS/build.log)")
fi
if ((FAILED)); then
	STATUS=2
fi
{
	echo
	printf '%s\n' "${VERDICTS[@]}"
} | tee -a "$RESULTS"
exit $STATUS

#!/bin/sh
# bench/reproduce.sh - every paper run of bench/reproduce.plan at one budget, by one build, through GNU
# parallel when it is installed (one run after the other otherwise), then OUT/index.md: each run's
# status, budget, commit and wall time, linked to its report, and whether every report came from one
# commit.  `make reproduce` runs it from the top of the source tree.
#
#   bench/reproduce.sh [--budget quick|paper] [--out DIR] [--jobs N] [--threads T] [--plan FILE]
#                      [--only NAME,NAME,...]
#
# OUT defaults to versus-results/reproduce-BUDGET; the committed reports are replaced only when --out
# names bench/results.  Rerunning the same command resumes: a run whose report is written and whose
# status is 0 is kept, a run that was interrupted runs again (a bench that journals its items, snx,
# continues from its journal).  A run whose data are absent fails with the loader's message, which the
# index shows; the others go on.  VERSUS names the program (default ./versus); the data come from
# $VERSUS_DATA as for every bench.
set -u
usage() { echo "usage: bench/reproduce.sh [--budget quick|paper] [--out DIR] [--jobs N] [--threads T] [--plan FILE] [--only NAME,...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
BUDGET=quick OUT= JOBS=2 THREADS=1 PLAN=$here/reproduce.plan ONLY= ONE=
while [ $# -gt 0 ]; do
    case $1 in
    --budget) [ $# -ge 2 ] || usage; BUDGET=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; OUT=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
    --threads) [ $# -ge 2 ] || usage; THREADS=$2; shift 2 ;;
    --plan) [ $# -ge 2 ] || usage; PLAN=$2; shift 2 ;;
    --only) [ $# -ge 2 ] || usage; ONLY=$2; shift 2 ;;
    --one) [ $# -ge 2 ] || usage; ONE=$2; shift 2 ;; # internal: one run (what parallel calls)
    -h | --help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "reproduce: unknown option '$1'" >&2; usage ;;
    esac
done
case $BUDGET in quick | paper) ;; *) echo "reproduce: --budget expects quick or paper, got '$BUDGET'" >&2; exit 2 ;; esac
case $JOBS in '' | *[!0-9]* | 0) echo "reproduce: --jobs expects a positive integer, got '$JOBS'" >&2; exit 2 ;; esac
case $THREADS in '' | *[!0-9]* | 0) echo "reproduce: --threads expects a positive integer, got '$THREADS'" >&2; exit 2 ;; esac
[ -f "$PLAN" ] || { echo "reproduce: $PLAN: no such plan" >&2; exit 2; }
V=${VERSUS:-./versus}
[ -x "$V" ] || { echo "reproduce: $V is not a program (set VERSUS)" >&2; exit 2; }
OUT=${OUT:-versus-results/reproduce-$BUDGET}
# the models a bench trains: committed artefacts at the paper budget, beside the reports otherwise
MODELS=$OUT/models
[ "$BUDGET" = paper ] && MODELS=bench/models

# the plan's words for NAME (empty when the plan has no such run)
plan_words() { awk -v n="$1" '$1 == n { $1 = ""; sub(/^ +/, ""); print; exit }' "$PLAN"; }

# one run: versus bench WORDS --budget B --out OUT/NAME, its log in OUT/logs/NAME.log and "status
# seconds" in OUT/status/NAME; kept as it is when it already ended with status 0 and wrote its report
run_one() {
    name=$1
    words=$(plan_words "$name" | sed "s#MODELS#$MODELS#g")
    [ -n "$words" ] || { echo "reproduce: $PLAN has no run '$name'" >&2; return 2; }
    if [ -f "$OUT/$name/results.json" ] && [ "$(cut -d' ' -f1 "$OUT/status/$name" 2>/dev/null)" = 0 ]; then
        echo "reproduce: $name: done before, kept"
        return 0
    fi
    resume=
    case $words in snx\ *) resume=--resume ;; esac
    start=$(date +%s)
    # shellcheck disable=SC2086 # the plan's words are split on purpose
    "$V" bench $words --budget "$BUDGET" --threads "$THREADS" --out "$OUT/$name" $resume >"$OUT/logs/$name.log" 2>&1
    rc=$?
    echo "$rc $(($(date +%s) - start))" >"$OUT/status/$name"
    echo "reproduce: $name: exit $rc after $(($(date +%s) - start)) s (log: $OUT/logs/$name.log)"
    return $rc
}

# the top-level string member KEY of a results.json (its first occurrence), or "-"
member() { v=$(sed -n "s/^ \{0,2\}\"$2\": \"\([^\"]*\)\".*/\1/p" "$1" 2>/dev/null | head -n 1); echo "${v:--}"; }

write_index() {
    idx=$OUT/index.md
    {
        echo "# Reproduction at the $BUDGET budget"
        echo
        echo "Made by \`bench/reproduce.sh --budget $BUDGET\` with $($V --version) from the plan \`$(basename "$PLAN")\`;"
        echo "each run's command, flags and numbers are in its report."
        echo
        echo "| run | versus bench ... | status | budget | commit | seconds | report |"
        echo "|---|---|---|---|---|---|---|"
    } >"$idx"
    commits=
    for name in $NAMES; do
        st=$(cut -d' ' -f1 "$OUT/status/$name" 2>/dev/null)
        secs=$(cut -d' ' -f2 "$OUT/status/$name" 2>/dev/null)
        res=$OUT/$name/results.json
        if [ "$st" = 0 ] && [ -f "$res" ]; then
            status=done
            c=$(member "$res" commit)
            commits="$commits$c
"
            report="[table.md]($name/table.md)"
        elif [ -z "$st" ]; then
            status="not run"
            c=- report=-
        else
            why=$(grep -v '^\s*$' "$OUT/logs/$name.log" 2>/dev/null | tail -n 1 | tr '|' '/' | cut -c1-160)
            status="failed (exit $st): $why"
            c=- report=-
        fi
        echo "| $name | \`$(plan_words "$name")\` | $status | $(member "$res" budget) | $c | ${secs:--} | $report |" >>"$idx"
    done
    n=$(printf '%s' "$commits" | sort -u | grep -c .)
    {
        echo
        if [ "$n" -le 1 ]; then echo "Every report was made by one commit: $(printf '%s' "$commits" | sort -u | head -n 1)."
        else echo "**Not one commit:** the reports were made by $n commits ($(printf '%s' "$commits" | sort -u | tr '\n' ' ')): rerun the older ones."; fi
    } >>"$idx"
    echo "reproduce: wrote $idx"
}

NAMES=$(awk '!/^#/ && NF { print $1 }' "$PLAN")
if [ -n "$ONLY" ]; then
    for n in $(echo "$ONLY" | tr ',' ' '); do
        [ -n "$(plan_words "$n")" ] || { echo "reproduce: --only: $PLAN has no run '$n'" >&2; exit 2; }
    done
    NAMES=$(echo "$ONLY" | tr ',' ' ')
fi
mkdir -p "$OUT/logs" "$OUT/status" "$MODELS" || exit 1
if [ -n "$ONE" ]; then run_one "$ONE"; exit $?; fi

export VERSUS="$V"
if command -v parallel >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    parallel -j "$JOBS" --line-buffer "$0" --one {} --budget "$BUDGET" --out "$OUT" --threads "$THREADS" --plan "$PLAN" ::: $NAMES
else
    echo "reproduce: GNU parallel is absent (Debian: apt-get install parallel); the runs go one after the other"
    for name in $NAMES; do run_one "$name"; done
fi
write_index
failed=0
for name in $NAMES; do [ "$(cut -d' ' -f1 "$OUT/status/$name" 2>/dev/null)" = 0 ] || failed=$((failed + 1)); done
[ "$failed" -eq 0 ] || echo "reproduce: $failed of $(echo $NAMES | wc -w) runs did not finish: see $OUT/index.md"
[ "$failed" -eq 0 ]

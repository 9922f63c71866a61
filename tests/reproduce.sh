#!/bin/sh
# reproduce.sh - bench/reproduce.sh (make reproduce) on a small plan of synthetic runs and one whose
# data are absent: the runs at the quick budget, the index with each run's status, budget and commit,
# the failed run named with the loader's message, a rerun that keeps finished runs and redoes an
# interrupted one, and its usage errors.
set -u
. "$(dirname "$0")/cli_lib.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
V=$(pwd)/versus
R=$SRC/bench/reproduce.sh
W=reproduce.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
cat >plan <<'PLAN'
# runs of the test
snx-t   snx --data synthetic-tabular --n 200 --seed 2
absent  snx --data adult --path /nonexistent
cem-s   cem --data synthetic --images 2
PLAN
export VERSUS="$V"
check "a plan with a run that fails" 1 "$R" --plan plan --out r --jobs 2
grep_out "the index says which did not finish" "1 of 3 runs did not finish" out.txt
grep_out "snx ran at the quick budget" "^| snx-t | .* | done | quick | " r/index.md
grep_out "cem ran" "^| cem-s | .* | done | quick | " r/index.md
grep_out "the failed run names its file" "^| absent | .* | failed (exit 1): versus: /nonexistent/adult.data" r/index.md
grep_out "one commit" "^Every report was made by one commit: " r/index.md
grep_out "the report links" "(snx-t/table.md)" r/index.md
grep_out "the budget's flags ran" '"budget": "quick"' r/cem-s/results.json
grep_out "the plan's flags won" '"n_images": 2' r/cem-s/results.json
cp r/snx-t/results.json snx.json
check "a rerun" 1 "$R" --plan plan --out r --jobs 2
grep_out "a finished run is kept" "snx-t: done before, kept" out.txt
same "a kept run is not rewritten" snx.json r/snx-t/results.json
rm r/status/snx-t # as if it had been killed before it ended
check "a rerun after an interrupted run" 0 "$R" --plan plan --out r --only snx-t,cem-s
grep_out "the interrupted run runs again" "snx-t: exit 0" out.txt
grep_out "only the runs asked for are indexed" "^| cem-s |" r/index.md
if grep -q "^| absent |" r/index.md; then bad "--only left out runs in the index"; else ok; fi
check "unknown run" 2 "$R" --plan plan --out r --only nope
grep_out "names the run" "has no run 'nope'" err.txt
check "bad budget" 2 "$R" --plan plan --budget huge
grep_out "names the budgets" "expects quick or paper, got 'huge'" err.txt
check "bad jobs" 2 "$R" --plan plan --jobs 0
check "no plan" 2 "$R" --plan nowhere.plan
check "help" 0 "$R" --help
grep_out "help names make reproduce" "make reproduce" out.txt
cd .. && rm -rf "$W"
echo "reproduce: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

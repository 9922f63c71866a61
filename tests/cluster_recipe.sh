#!/bin/sh
# cluster_recipe.sh [--slurm] - docs/CLUSTER.md's Slurm recipe, as written there, on planted data.
# The three blocks of its Slurm section (train.sbatch, bench.sbatch and the submission) are taken from
# the page itself, so the page cannot drift from what is tested.  The only changes are the test's
# sizes, applied to that text here: the data (`--data adult` -> planted tabular data of 300 rows, the
# bench's first 14 test pairs), 3 array tasks instead of 16 and 1 CPU each.
#
# Without --slurm (make check): the sbatch files run under sh with the array's variables set by hand
# (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_CPUS_PER_TASK), then the merge; the merged files
# must equal a single run's, byte for byte.
# With --slurm (make check-slurm): a one-node cluster is started (tests/slurm_cluster.sh; skipped with
# the reason when slurm-wlm or munge is absent or a daemon does not come up), the submission block runs
# as written (training job, dependent array, dependent merge), waited for with a timeout, and compared
# with a single run; then a second array of one larger shard is requeued with `scontrol requeue` while
# it runs, and must resume (its log says how many pairs were already done) and still equal a single run.
set -u
. "$(dirname "$0")/cli_lib.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)
BIN=$(pwd)
slurm=no
[ "${1:-}" = "--slurm" ] && slurm=yes
W=$BIN/cluster_recipe.dir
[ $slurm = yes ] && W=$BIN/cluster_recipe_slurm.dir
rm -rf "$W"
mkdir -p "$W/bin"
ln -s "$BIN/versus" "$W/bin/versus"
PATH="$W/bin:$PATH"
export PATH
cd "$W" || exit 1

# the ```sh block that follows the line of the page matching $1
block() {
    awk -v pat="$1" 'f == 0 && index($0, pat) { f = 1; next } f == 1 && /^```sh/ { f = 2; next }
        f == 2 && /^```/ { exit } f == 2 { print }' "$SRC/docs/CLUSTER.md"
}
TASKS=3
sizes() {
    sed -e 's/bench snx --data adult/bench snx --data synthetic-tabular --n 300 --pairs 14/' \
        -e 's/train --arch siamese-mlp --data adult/train --arch siamese-mlp --data synthetic-tabular --n 300/' \
        -e "s/--array=1-16/--array=1-$TASKS/" -e 's/--cpus-per-task=4/--cpus-per-task=1/'
}
block '`train.sbatch`:' | sizes >train.sbatch
block '`bench.sbatch`:' | sizes >bench.sbatch
block 'Submit the training, the array' | sizes >submit.sh
for f in train.sbatch bench.sbatch submit.sh; do
    if [ -s "$f" ] && grep -q versus "$f"; then ok; else bad "docs/CLUSTER.md: no $f block found"; fi
done
grep_out "the sizes applied to the bench" "synthetic-tabular --n 300 --pairs 14" bench.sbatch
grep_out "the sizes applied to the training" "synthetic-tabular --n 300" train.sbatch

# the single run every recipe is compared with: the same training, then the bench whole
single() { # dir, pairs
    mkdir -p "$1" && (cd "$1" && versus train --arch siamese-mlp --data synthetic-tabular --n 300 --seed 1 --out model \
        >/dev/null 2>&1 && versus bench snx --data synthetic-tabular --n 300 --pairs "$2" --model model --seed 1 \
        --reproducible --out snx-adult >/dev/null 2>err.txt) || { bad "single run of $2 pairs"; cat "$1/err.txt"; }
}
same_dir() { # description, dir, dir
    for f in "$2"/*; do same "$1: $(basename "$f")" "$f" "$3/$(basename "$f")"; done
    if [ "$(ls "$2" | wc -l)" -eq "$(ls "$3" | wc -l)" ]; then ok; else bad "$1: $2 and $3 hold different files"; fi
}
single single 14

if [ $slurm = no ]; then
    # ---- by hand: the scripts as Slurm would run them ----------------------------------------------
    mkdir -p logs parts
    check "train.sbatch" 0 env SLURM_CPUS_PER_TASK=1 sh train.sbatch
    exists "the trained model" model/model.safetensors
    k=1
    while [ $k -le $TASKS ]; do
        check "bench.sbatch, task $k of $TASKS" 0 env SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=$TASKS \
            SLURM_CPUS_PER_TASK=1 sh bench.sbatch
        exists "part $k" "parts/part$k"
        k=$((k + 1))
    done
    # the merge job's command, as the submission block writes it
    merge=$(sed -n 's/.*--wrap "\(versus merge [^"]*\)".*/\1/p' submit.sh)
    if [ -n "$merge" ]; then ok; else bad "no merge command in the submission block"; fi
    check "the merge job" 0 sh -c "$merge"
    same_dir "recipe by hand against a single run" single/snx-adult snx-adult
    # a resubmitted task (N set, as the page's resubmission does: the array's own count is 1) gives a part
    # that merges into the same files (a part's records carry the item's time, so parts differ in bytes)
    rm -rf parts/part2 snx-adult
    check "resubmitted task 2 with N=$TASKS" 0 env SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=1 N=$TASKS \
        SLURM_CPUS_PER_TASK=1 sh bench.sbatch
    check "the merge job after the resubmission" 0 sh -c "$merge"
    same_dir "resubmitted recipe against a single run" single/snx-adult snx-adult
    cd .. && rm -rf "$W"
    echo "cluster_recipe: $pass passed, $fails failed"
    [ "$fails" -eq 0 ]
    exit
fi

# ---- a real Slurm ------------------------------------------------------------------------------------
sh "$SRC/tests/slurm_cluster.sh" start "$W/cluster" >cluster.txt
rc=$?
if [ $rc -ne 0 ]; then cat cluster.txt; rm -rf "$W"; exit $rc; fi
SLURM_CONF=$W/cluster/slurm.conf
export SLURM_CONF
trap 'sh "$SRC/tests/slurm_cluster.sh" stop "$W/cluster"' EXIT
PATH="$PATH:/usr/sbin"

# wait (at most $2 s) until job $1 and its array tasks have all left the queue
wait_job() {
    t=0
    while [ $t -lt "$2" ]; do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 1
        t=$((t + 1))
    done
    return 1
}
start=$(date +%s)
if sh -e submit.sh >submit.out 2>submit.err; then ok; else bad "the submission block"; cat submit.err; fi
merge_job=$(tail -1 submit.out)
if wait_job "$merge_job" 300; then ok; else bad "the jobs did not end in 300 s"; squeue; fi
end=$(date +%s)
echo "cluster_recipe: training, $TASKS array tasks and the merge took $((end - start)) s under Slurm"
exists "the merge job's log" logs/merge.out
same_dir "Slurm recipe against a single run" single/snx-adult snx-adult

# ---- a task requeued while it runs resumes its shard ---------------------------------------------------
# one task covering 150 pairs, so that it is still running when requeued
PAIRS=150
single single150 $PAIRS
rm -rf parts logs snx-adult && mkdir -p parts logs
sed -e "s/--pairs 14/--pairs $PAIRS/" -e "s/--array=1-$TASKS/--array=1-1/" bench.sbatch >bench1.sbatch
start=$(date +%s)
jid=$(sbatch --parsable bench1.sbatch)
# requeue once the part holds a finished pair (the part grows past its header by one record)
t=0
first=
while [ $t -lt 600 ]; do
    size=$(stat -c %s parts/part1 2>/dev/null || echo 0)
    if [ -z "$first" ] && [ "$size" -gt 0 ]; then first=$size; fi
    if [ -n "$first" ] && [ "$size" -gt "$first" ]; then break; fi
    sleep 0.2
    t=$((t + 1))
done
if scontrol requeue "${jid}_1" 2>requeue.err; then ok; else bad "scontrol requeue"; cat requeue.err; fi
if wait_job "$jid" 600; then ok; else bad "the requeued task did not end in 600 s"; squeue; fi
log=$(ls logs/*-1.out 2>/dev/null | head -1)
end=$(date +%s)
echo "cluster_recipe: the requeued task ended after $((end - start)) s; its log says: $(grep "already done" "$log" 2>/dev/null)"
if [ -n "$log" ] && grep -q "already done" "$log" && ! grep -q ": 0 of [0-9]* pairs already done" "$log"; then ok; else
    bad "the requeued task did not resume its shard"; [ -n "$log" ] && cat "$log"; fi
check "merge of the requeued shard" 0 versus merge parts/part1 --out snx-adult
same_dir "requeued run against a single run" single150/snx-adult snx-adult
trap - EXIT
sh "$SRC/tests/slurm_cluster.sh" stop "$W/cluster"
cd .. && rm -rf "$W"
echo "cluster_recipe: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

#!/bin/sh
# cli_shard_kill.sh - --resume after SIGKILL for the verbs that loop over items: versus bench snx,
# explain snx --pairs all and attribute (whole runs and a shard) are each killed (kill -9) at random
# moments, up to KILLS times, resumed from their journal each time, and must end with files equal to
# an uninterrupted run's, with no pair or row lost or done twice.  A journal record is appended whole
# with a checksum, so a kill can land anywhere, even inside an append.  SIGINT and SIGTERM end a run
# with the journal's path and the --resume hint, and the resumed run ends as an uninterrupted one.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_shard_kill.dir
KILLS=${KILLS:-3}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# name, seconds an uninterrupted run took, command...: killed up to KILLS times, then run to its end,
# always with --resume (a run without a journal yet simply starts)
kill_and_resume() {
    name=$1 secs=$2
    shift 2
    kills=0 tries=0
    while [ $kills -lt "$KILLS" ] && [ $tries -lt $((KILLS + 6)) ]; do
        tries=$((tries + 1))
        "$@" --resume >out.txt 2>err.txt &
        pid=$!
        delay=$(awk -v r="$(random01)" -v s="$secs" 'BEGIN { printf "%.3f", 0.05 + r * s * 0.9 }')
        sleep "$delay"
        if kill -KILL $pid 2>/dev/null; then kills=$((kills + 1)); fi
        wait $pid 2>/dev/null
    done
    echo "cli_shard_kill: $name killed $kills times"
    check "$name: resumed after $kills kills" 0 "$@" --resume
}

# seconds since the epoch, with fractions
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# ---- bench snx ------------------------------------------------------------------------------------------------
B="bench snx --data synthetic-tabular --n 300 --pairs 40 --seed 2 --iters 20 --reproducible"
# the same --out in two directories: the report stamps the command line
mkdir u k
t0=$(now)
cd u; check "bench: uninterrupted" 0 $V $B --out b; cd ..
secs=$(elapsed "$t0")
cd k; kill_and_resume "bench" "$secs" $V $B --out b; cd ..
for f in u/b/*; do same "bench: $(basename "$f") after kills" "$f" "k/b/$(basename "$f")"; done
if [ -e k/b.journal ]; then bad "bench: the journal outlived the run"; else ok; fi

# ---- explain snx --pairs all, a whole run and a shard ------------------------------------------------------------
check "train siamese" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 160 --epochs 2 --seed 2 --out sn
X="explain snx --model sn --data synthetic-tabular --n 160 --seed 2 --pairs all --iters 30"
t0=$(now)
check "explain: uninterrupted" 0 $V $X --out eu
secs=$(elapsed "$t0")
kill_and_resume "explain" "$secs" $V $X --out ek
same "explain: pairs.json after kills" eu/pairs.json ek/pairs.json
for k in 1 2; do check "explain shard $k/2" 0 $V $X --shard $k/2 --out part$k; done
half=$(awk -v s="$secs" 'BEGIN { printf "%.3f", s / 2 }')
kill_and_resume "explain shard 2/2" "$half" $V $X --shard 2/2 --out kpart2
check "merge with a killed and resumed shard" 0 $V merge part1 kpart2 --out em
same "explain: merged after kills" eu/pairs.json em/pairs.json

# ---- attribute ------------------------------------------------------------------------------------------------
check "train mlp" 0 $V train --arch mlp --data synthetic-tabular --n 600 --epochs 2 --seed 2 --out clf
check "export inputs" 0 $V data export synthetic-tabular --n 600 --seed 2 --out data
A="attribute --model clf --input data/X.npy --method lime --samples 400 --baseline uniform"
t0=$(now)
check "attribute: uninterrupted" 0 $V $A --report ru.json --out au.npy
secs=$(elapsed "$t0")
kill_and_resume "attribute" "$secs" $V $A --report rk.json --out ak.npy
same "attribute: A.npy after kills" au.npy ak.npy
sed 's/"seconds": [0-9.e+-]*//g' ru.json >r1.txt
sed 's/"seconds": [0-9.e+-]*//g' rk.json >r2.txt
same "attribute: the report after kills (times aside)" r1.txt r2.txt
rows=$(grep -c '"row":' rk.json)
if [ "$rows" -eq 600 ]; then ok; else bad "attribute: $rows rows in the report, not 600"; fi

# SIGINT and SIGTERM (Ctrl-C, Slurm's scancel): the run ends with the journal's path and the --resume hint
# name, signal, its number, journal, command...: interrupted once its journal holds a record, then resumed
interrupt_and_resume() {
    name=$1 sig=$2 signo=$3 journal=$4
    shift 4
    rm -f "$journal"
    "$@" >out.txt 2>err.txt &
    pid=$!
    n=0
    while [ "$({ wc -c <"$journal"; } 2>/dev/null || echo 0)" -le 200 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n + 1)); done
    if kill -"$sig" $pid 2>/dev/null; then
        wait $pid
        rc=$?
        if [ $rc -eq $((128 + signo)) ]; then ok; else bad "$name: SIG$sig ended with status $rc"; fi
        grep_out "$name: SIG$sig names the journal" "interrupted; the finished .* are kept in $journal" err.txt
        grep_out "$name: SIG$sig says --resume" "the same command with --resume continues" err.txt
    else
        wait $pid
        echo "cli_shard_kill: $name ended before SIG$sig"
    fi
    check "$name: resumed after SIG$sig" 0 "$@" --resume
}
interrupt_and_resume "attribute" INT 2 ai.npy.journal $V $A --out ai.npy
same "attribute: A.npy after SIGINT" au.npy ai.npy
cd k; interrupt_and_resume "bench" TERM 15 bt.journal $V $B --out bt; cd ..
for f in u/b/*; do
    case $f in */index.html | */results.json | */table.md) ;; *) same "bench: $(basename "$f") after SIGTERM" "$f" "k/bt/$(basename "$f")" ;; esac
done

cd .. && [ "$fails" -eq 0 ] && rm -rf "$W"
echo "cli_shard_kill: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

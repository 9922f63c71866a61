#!/bin/sh
# cli_resume_kill.sh - `versus train --resume` after SIGKILL, for every task: each run is killed
# (kill -9) at random moments, up to KILLS times, resumed from its last checkpoint each time, and
# must end with a model.safetensors identical to an uninterrupted run's.  The checkpoint on disk is
# always a whole one (written to a temporary file, fsync'd, renamed), so a kill can land anywhere.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_resume_kill.dir
KILLS=${KILLS:-3}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# run name, flags...: uninterrupted, then killed and resumed
kill_and_resume() {
    name=$1
    shift
    check "$name: uninterrupted" 0 $V train "$@" --out "$name-u"
    # the uninterrupted run's length in seconds bounds the kill moments
    secs=$(sed -n 's/.*"wall_seconds": \([0-9.e+-]*\).*/\1/p' "$name-u/metrics.json")
    [ -n "$secs" ] || secs=1
    kills=0
    done_=0
    tries=0
    while [ $done_ -eq 0 ] && [ $tries -lt $((KILLS + 8)) ]; do
        tries=$((tries + 1))
        resume=""
        [ -f "$name-k/checkpoint.safetensors" ] && resume="--resume"
        if [ $kills -lt "$KILLS" ]; then
            $V train "$@" --out "$name-k" --checkpoint-every 1 $resume >out.txt 2>err.txt &
            pid=$!
            delay=$(awk -v r="$(random01)" -v s="$secs" 'BEGIN { printf "%.3f", 0.05 + r * s * 0.8 }')
            sleep "$delay"
            if kill -KILL $pid 2>/dev/null; then
                wait $pid 2>/dev/null
                kills=$((kills + 1))
                continue
            fi
            wait $pid
            rc=$?
        else
            $V train "$@" --out "$name-k" --checkpoint-every 1 $resume >out.txt 2>err.txt
            rc=$?
        fi
        if [ $rc -ne 0 ]; then
            fails=$((fails + 1))
            echo "FAIL: $name: a resumed run ended with status $rc"
            cat err.txt
            return
        fi
        done_=1
    done
    echo "$name: killed $kills times, then resumed to the end"
    same "$name: killed $kills times and resumed = uninterrupted" "$name-u/model.safetensors" "$name-k/model.safetensors"
}

kill_and_resume classifier --arch mlp --data synthetic-tabular --n 400 --epochs 30
kill_and_resume siamese --arch siamese-mlp --data synthetic-tabular --n 300 --epochs 15 --pairs random
kill_and_resume vae --arch vae --data synthetic-shapes --n 300 --epochs 6 --batch-size 16 --sample-every 20
kill_and_resume dip-vae --arch dip-vae --data synthetic-shapes --n 100 --epochs 2 --batch-size 16
kill_and_resume gan --arch gan-mlp --data synthetic-shapes --n 300 --epochs 8 --batch-size 16 --task-opts n_critic=3
kill_and_resume stargan --arch stargan-gen --data synthetic-shapes --n 64 --epochs 2 --batch-size 8 --task-opts n_critic=2

cd .. && rm -rf "$W"
echo "cli_resume_kill: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

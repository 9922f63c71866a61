#!/bin/sh
# cli_shard.sh - sharded runs and versus merge as a user meets them: the SNX bench split into N = 1, 3
# and 7 shards run by GNU parallel (the recipe of docs/CLUSTER.md) and merged into files equal byte for
# byte to a single run's; attribute, evaluate and explain snx --pairs all split and merged likewise;
# every refusal of merge (missing, repeated or incomplete shards, other seeds, commands or files) and
# the usage errors of --shard and --resume.  The parallel runs are skipped, with the reason printed,
# when GNU parallel is absent (Debian: apt-get install parallel).
set -u
. "$(dirname "$0")/cli_lib.sh"
V=$(pwd)/versus
W=cli_shard.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# every file of directory $2 equal to the one of the same name in $3, and no file more or less
same_dir() {
    for f in "$2"/*; do same "$1: $(basename "$f")" "$f" "$3/$(basename "$f")"; done
    if [ "$(ls "$2" | wc -l)" -eq "$(ls "$3" | wc -l)" ]; then ok; else bad "$1: $2 and $3 hold different files"; fi
}

# ---- the SNX bench: single run, then N shards under GNU parallel, merged ------------------------------------
B="--data synthetic-tabular --n 300 --pairs 14 --seed 2 --reproducible"
check "single bench" 0 $V bench snx $B --out res
exists "the single run's table" res/table.md
grep_out "a reproducible run says so" "wall times and the thread count left out" res/table.md
if command -v parallel >/dev/null 2>&1; then
    for N in 1 3 7; do
        mkdir "n$N"
        cd "n$N" || exit 1
        # docs/CLUSTER.md: one job per shard, then one merge
        if parallel -j 2 "$V" bench snx $B --shard "{}/$N" --out "part{}" ::: $(seq "$N") >out.txt 2>err.txt; then ok; else
            bad "parallel ran $N shards"; cat err.txt; fi
        check "merge of $N shards" 0 $V merge part* --out res
        grep_out "merge resumes with every pair done" "14 of 14 pairs already done" err.txt
        same_dir "N = $N merged against the single run" ../res res
        if [ -e res.journal ]; then bad "N = $N: the merged journal was left behind"; else ok; fi
        cd ..
    done
else
    echo "cli_shard: GNU parallel is absent (Debian: apt-get install parallel); the parallel runs are skipped"
fi

# a budget's flags come before the user's (theirs win), and a part made under a budget merges
Q="--budget quick --data synthetic-tabular --n 300 --pairs 14 --seed 2 --reproducible"
mkdir q1 q2 && cd q1 || exit 1
check "single bench, quick budget, --pairs 14 given" 0 $V bench snx $Q --out res
grep_out "the user's --pairs wins over the budget's" "the first 14 test pairs" res/table.md
grep_out "results.json records the budget" '"budget": "quick"' res/results.json
grep_out "a run without --budget records the default" '"budget": "default"' ../res/results.json
cd ../q2 || exit 1
for k in 1 2; do check "budget shard $k/2" 0 $V bench snx $Q --shard $k/2 --out part$k; done
check "merge of budget shards" 0 $V merge part1 part2 --out res
same_dir "budget shards merged against the single run" ../q1/res res
cd ..
check "unknown budget" 2 $V bench snx --budget huge --data synthetic-tabular
grep_out "names the budgets" "bench snx has no budget 'huge' (quick, paper)" err.txt
check "budget without a value" 2 $V bench snx --data synthetic-tabular --budget
check "budgets in the help" 0 $V bench snx --help
grep_out "help lists the paper budget" "^  paper " out.txt

# shards run one after the other give the same files too
mkdir seq3 && cd seq3 || exit 1
for k in 1 2 3; do check "bench shard $k/3" 0 $V bench snx $B --shard $k/3 --out part$k; done
grep_out "a shard says what it wrote" "wrote the pairs of shard 3/3 to part3" out.txt
if [ -d res ]; then bad "a shard wrote a report"; else ok; fi
check "merge of sequential shards" 0 $V merge part3 part1 part2 --out res
same_dir "sequential shards" ../res res

# ---- merge refuses wrong sets, naming the parts -------------------------------------------------------------
check "a shard missing" 1 $V merge part1 part3 --out x
grep_out "the missing shard is named" "shards missing: 2 of 3" err.txt
check "a shard twice" 1 $V merge part1 part2 part2 --out x
grep_out "the repeated shard is named" "part2 and part2 are the same shard 2/3" err.txt
head -c -8 part1 >cut1 # a shard killed while appending its last pair
check "an incomplete part" 1 $V merge cut1 part2 part3 --out x
grep_out "the incomplete part is named" "cut1 is incomplete: 3 of the 4 items" err.txt
check "bench shard of another seed" 0 $V bench snx --data synthetic-tabular --n 300 --pairs 14 --seed 3 --reproducible --shard 2/3 --out other2
check "parts of other seeds" 1 $V merge part1 other2 part3 --out x
grep_out "the seeds differ" "different" err.txt
check "bench shard of another command" 0 $V bench snx $B --gamma 0.01 --shard 2/3 --out cmd2
check "parts of other commands" 1 $V merge part1 cmd2 part3 --out x
grep_out "the commands differ" "part1 and cmd2 are parts of different commands" err.txt
check "bench shard of another split" 0 $V bench snx $B --shard 2/4 --out four2
check "parts of other splits" 1 $V merge part1 four2 part3 --out x
grep_out "the splits differ" "split different runs" err.txt
printf 'not a journal' >junk
check "a file that is no part" 1 $V merge part1 junk part3 --out x
grep_out "the file is named" "junk: not a versus journal" err.txt
check "merge without parts" 2 $V merge --out x
check "merge without --out" 2 $V merge part1 part2 part3
if [ -e x ] || [ -e x.journal ]; then bad "a refused merge wrote files"; else ok; fi
cd ..

# ---- usage errors of --shard and --resume -------------------------------------------------------------------
check "shard 0/3" 2 $V bench snx $B --shard 0/3 --out p
grep_out "the shard syntax is explained" "K/N with 1 <= K <= N" err.txt
check "shard 4/3" 2 $V bench snx $B --shard 4/3 --out p
check "shard without --out" 2 $V bench snx $B --shard 1/3
check "resume of another command" 0 $V bench snx $B --shard 1/3 --out mine
check "resume refuses another command's journal" 2 $V bench snx $B --gamma 0.01 --shard 1/3 --out mine --resume
grep_out "the journal is named" "mine: the journal belongs to another command" err.txt

# ---- attribute, evaluate, explain snx --pairs all -----------------------------------------------------------
check "train mlp" 0 $V train --arch mlp --data synthetic-tabular --n 300 --epochs 3 --seed 2 --out clf
check "export inputs" 0 $V data export synthetic-tabular --n 300 --seed 2 --out data
A="--model clf --input data/X.npy --method kernel_shap --baseline uniform --report"
check "attribute whole" 0 $V attribute $A rep.json --out a.npy
grep_out "progress: rows, rate, time left" "300/300 rows (100%), .* rows/s, .* left" err.txt
for k in 1 2 3; do check "attribute shard $k/3" 0 $V attribute $A rep.json --shard $k/3 --out ap$k; done
grep_out "a shard names its rows" "wrote rows 200..299 of 300 to ap3" err.txt
cp rep.json rep1.json
check "merge attribute" 0 $V merge ap1 ap2 ap3 --out am.npy
same "merged attributions" a.npy am.npy
sed 's/"seconds": [0-9.e+-]*//g' rep1.json >r1.txt
sed 's/"seconds": [0-9.e+-]*//g' rep.json >r2.txt
same "merged report (times aside)" r1.txt r2.txt
check "evaluate whole" 0 $V evaluate --model clf --input data/X.npy --attributions a.npy --method saliency --samples 3 --out e.json
for k in 1 2; do check "evaluate shard $k/2" 0 $V evaluate --model clf --input data/X.npy --attributions a.npy --method saliency --samples 3 \
    --shard $k/2 --out ep$k; done
check "merge evaluate" 0 $V merge ep2 ep1 --out em.json
same "merged evaluation" e.json em.json
check "evaluate --shard needs --out" 2 $V evaluate --model clf --input data/X.npy --attributions a.npy --shard 1/2
check "train siamese" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 120 --epochs 2 --seed 2 --out sn
X="--model sn --data synthetic-tabular --n 120 --seed 2 --pairs all --iters 10 --method snx-kl"
check "explain every pair" 0 $V explain snx $X --out ex
grep_out "explain says how many pairs" "explained 144 test pairs with snx-kl" out.txt
grep_out "pairs.json has the masks" '"local_mask_query"' ex/pairs.json
for k in 1 2 3; do check "explain shard $k/3" 0 $V explain snx $X --shard $k/3 --out xp$k; done
check "merge explain" 0 $V merge xp1 xp2 xp3 --out exm
same "merged pairs.json" ex/pairs.json exm/pairs.json
check "explain --shard needs --pairs all" 2 $V explain snx --model sn --data synthetic-tabular --n 120 --seed 2 --query 0 --reference 1 \
    --shard 1/2 --out xx
check "explain --pairs takes all" 2 $V explain snx --model sn --data synthetic-tabular --n 120 --seed 2 --pairs some --out xx

cd .. && rm -rf "$W"
echo "cli_shard: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

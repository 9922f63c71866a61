#!/bin/sh
# docs_formats.sh - docs/formats/ kept current by the code: every ```json example of model.md is
# built with random weights (tests/docs_model_tool), saved with the page's text as its model.json
# and run through `versus predict`; the keys of the files versus writes (metrics.json, a checkpoint's
# state, a journal's header, attribute's and evaluate's summaries, explanation.json, every committed
# results.json) are named on their pages; every format id the code writes ("versus-.../N", grepped
# from the sources outside tests/) is named on a page; and nothing points at the retired
# ../shared/INTERFACES.md.  A new format or key, a changed one or an example that no longer loads
# fails here until the docs follow.
set -u
. "$(dirname "$0")/cli_lib.sh"
SRC=${VERSUS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
DOCS=$SRC/docs/formats
V=$(pwd)/versus
TOOL=$(pwd)/tests/docs_model_tool
W=docs_formats.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# ---- the pages exist and the index links each ----
for p in README model checkpoint arrays data outputs results journal; do
    exists "page $p.md" "$DOCS/$p.md"
    [ "$p" = README ] || grep_out "the index links $p.md" "($p.md" "$DOCS/README.md"
done

# ---- every json example of model.md loads and predicts ----
awk -v dir=. '/^```json$/ { n++; f = sprintf("%s/example%02d.json", dir, n); on = 1; next }
              /^```$/ && on { on = 0; close(f); next }
              on { print > f }' "$DOCS/model.md"
n=$(ls example*.json 2>/dev/null | wc -l)
# the page shows a classifier, a layer tour, a tabular net, a Siamese, a graph model, a VAE, a GAN,
# a wiring tour and the SVAE: fewer examples means some were lost
if [ "$n" -ge 9 ]; then ok; else bad "model.md has $n json examples, expected at least 9"; fi
for f in example*.json; do
    d=${f%.json}
    check "$f: builds and saves" 0 "$TOOL" "$f" "$d"
    kind=$(cat out.txt)
    same "$f: model.json is the page's text" "$f" "$d/model.json"
    case $kind in
    npy) check "$f: versus predict" 0 "$V" predict --model "$d" --input "$d/x.npy" --out "$d/y.npy" ;;
    siamese) check "$f: versus predict --reference" 0 "$V" predict --model "$d" --input "$d/x.npy" --reference "$d/r.npy" --out "$d/y.npy" ;;
    graph) check "$f: versus predict on graphs" 0 "$V" predict --model "$d" --input synthetic-graph --out "$d/y.npy" ;;
    graph-siamese) check "$f: versus predict on graph pairs" 0 "$V" predict --model "$d" --input synthetic-graph --reference synthetic-graph --out "$d/y.npy" ;;
    *) bad "$f: docs_model_tool printed '$kind'"; continue ;;
    esac
    exists "$f: predictions written" "$d/y.npy"
done
# a loaded example is checked, not only parsed: a wrong shape in the page's text must fail
sed 's/"in": 3136/"in": 3000/' example01.json > bad.json
mkdir -p bad && cp example01/model.safetensors bad/ && cp bad.json bad/model.json
check "a wrong width in the example is refused" 1 "$V" predict --model bad --input example01/x.npy --out bad/y.npy
grep_out "names the layer and field" 'layer 5 (linear): "in" is 3000' err.txt

# ---- the keys versus writes are the keys the pages name ----
# named KEY PAGE FILE: KEY (from FILE) appears on PAGE as `KEY`
named() {
    if grep -qF -- "\`$1\`" "$DOCS/$2"; then ok; else bad "$3 holds \"$1\", which $2 does not name"; fi
}
# the top-level keys of a JSON file versus wrote (two-space indent: one key a line)
top_keys() { grep -oE '^  "[A-Za-z0-9_]+":' "$1" | tr -d ' ":' | sort -u; }
# a short training run: metrics.json, and its checkpoint's state (compact JSON escaped in the header)
check "train for the training files" 0 "$V" train --arch mlp --data synthetic-tabular --n 120 --epochs 1 --out m
for k in $(top_keys m/metrics.json); do named "$k" checkpoint.md m/metrics.json; done
state=$(head -c 4096 m/checkpoint.safetensors | LC_ALL=C tr -cd '[:print:]' | grep -oE '\\"[A-Za-z0-9_]+\\":' | tr -d '\\":' | sort -u)
if [ -n "$state" ]; then ok; else bad "no state keys found in m/checkpoint.safetensors"; fi
for k in $state; do named "$k" checkpoint.md m/checkpoint.safetensors; done
# a shard part: its header record
check "a shard part for the journal" 0 "$V" attribute --model example03 --input example03/x.npy --method saliency --shard 1/2 --out part
hdr=$(head -c 2048 part | LC_ALL=C tr -cd '[:print:]' | grep -oE '"[a-z_]+":' | tr -d '":' | sort -u)
if [ -n "$hdr" ]; then ok; else bad "no header keys found in the shard part"; fi
for k in $hdr; do named "$k" journal.md part; done
# the summaries for people: attribute --report, evaluate --out, explain snx's explanation.json
all_keys() { LC_ALL=C tr -cd '[:print:]\n' < "$1" | grep -oE '"[A-Za-z0-9_]+":' | tr -d '":' | sort -u; }
check "attribute --report" 0 "$V" attribute --model example03 --input example03/x.npy --method integrated_gradients --report r.json --out a.npy
for k in $(all_keys r.json); do named "$k" outputs.md r.json; done
check "evaluate --out" 0 "$V" evaluate --model example03 --input example03/x.npy --attributions a.npy --out s.json
for k in $(top_keys s.json); do named "$k" outputs.md s.json; done
check "a Siamese model to explain" 0 "$V" train --arch siamese-mlp --data synthetic-tabular --n 120 --epochs 1 --out sm
check "explain snx" 0 "$V" explain snx --model sm --data synthetic-tabular --n 120 --query 0 --reference 1 --out e
for k in $(all_keys e/explanation.json); do named "$k" outputs.md e/explanation.json; done
# every committed bench result (bench/**/results.json, tests/golden/*.json): its top-level keys on results.md
results=$(find -L "$SRC/bench" -name results.json | sort; ls "$SRC"/tests/golden/*.json 2>/dev/null)
if [ -n "$results" ]; then ok; else bad "no committed results.json under bench/"; fi
for f in $results; do
    for k in $(top_keys "$f"); do named "$k" results.md "${f#"$SRC"/}"; done
done

# ---- every format id the code writes is documented ----
ids=$(cd "$SRC" && find -L autograd datasets nn report explain bench cli include -name '*.[ch]' 2>/dev/null |
      xargs grep -ohE '"versus-[a-z0-9-]+/[0-9]+"' | tr -d '"' | sort -u)
if [ -n "$ids" ]; then ok; else bad "no format ids found in the sources"; fi
for id in $ids; do
    if cat "$DOCS"/*.md | grep -qF -- "$id"; then ok; else bad "format id $id (written by the code) is on no page of docs/formats/"; fi
done
# and nothing points at the retired outside contract (../shared/INTERFACES.md) any more
left=$(cd "$SRC" && grep -rl "INTERFACES\.md" README.md docs autograd datasets nn report explain bench cli include tests 2>/dev/null |
       grep -v '^tests/docs_formats\.sh$')
if [ -z "$left" ]; then ok; else bad "still pointing at INTERFACES.md: $left"; fi

cd .. && rm -rf "$W"
echo "docs_formats: $pass passed, $fails failed"
[ "$fails" -eq 0 ]

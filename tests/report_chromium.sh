#!/bin/sh
# report_chromium.sh - the pages a person opens, rendered by a real browser: the demo's page, bench
# pages and an interactions page (matrix figures) in headless Chromium.  Fails on a console error, a
# missing or empty image (the dumped DOM is checked by page_check.py) or a screenshot that was not
# written.  Skipped (exit 77) with the reason when chromium or python3 is absent.  The screenshots are
# kept in report_chromium.dir/.
set -u
. "$(dirname "$0")/cli_lib.sh"
SRC=$(cd "$(dirname "$0")" && pwd)
V=$(pwd)/versus
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then echo "report_chromium: skipped, no $CHROMIUM (Debian: apt-get install chromium)"; exit 77; fi
if ! command -v python3 >/dev/null 2>&1; then echo "report_chromium: skipped, no python3 to read the DOM"; exit 77; fi
W=report_chromium.dir
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1

# render PAGE NAME: screenshot NAME.png, DOM NAME.dom.html, console log NAME.log
render() {
    flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
--disable-component-update --disable-sync --enable-logging=stderr --v=0 --log-level=0 --window-size=1280,2000"
    # shellcheck disable=SC2086
    timeout 120 "$CHROMIUM" $flags --user-data-dir="$(pwd)/profile-$2" --screenshot="$(pwd)/$2.png" "file://$(pwd)/$1" 2>"$2.log" >/dev/null
    # shellcheck disable=SC2086
    timeout 120 "$CHROMIUM" $flags --user-data-dir="$(pwd)/profile-$2" --dump-dom "file://$(pwd)/$1" 2>>"$2.log" >"$2.dom.html"
    exists "$2: screenshot written" "$2.png"
    exists "$2: DOM dumped" "$2.dom.html"
    if grep -E "CONSOLE|Uncaught|Failed to load resource|net::ERR_" "$2.log" >console.txt; then
        bad "$2: console errors"; cat console.txt
    else ok; fi
    if python3 "$SRC/page_check.py" "$2.dom.html" >check.txt; then ok; else bad "$2: the page is not whole"; cat check.txt; fi
}

check "demo" 0 $V demo --out demo
render demo/index.html demo
check "bench" 0 $V bench snx --data synthetic-graph --n 40 --pairs 4 --epochs 2 --iters 10 --global-iters 10 \
    --baseline-iters 10 --pg-epochs 2 --out bench
render bench/index.html bench
check "tabular bench" 0 $V bench snx --data synthetic-tabular --n 300 --pairs 6 --seed 2 --out tab
render tab/index.html tab
# the interaction matrices of pairs (matrix figures) drawn by versus evaluate --report
check "pair model" 0 $V train --arch siamese-mlp --data synthetic-tabular --n 120 --epochs 2 --seed 2 --out sn
check "pair inputs" 0 $V data export synthetic-tabular --n 4 --seed 3 --out data
check "interactions" 0 $V attribute --model sn --input data/X.npy --reference data/X.npy --side both --method integrated_hessians \
    --steps 4 --out ih.npy
check "interactions page" 0 $V evaluate --model sn --input data/X.npy --reference data/X.npy --side both --attributions ih.npy \
    --report ih
render ih/index.html interactions
# a page with a missing figure must fail the same checks (the test can fail)
sed 's#<svg xmlns[^>]*>#<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">#; s#<img#<img src="missing.png"#' tab/index.html >broken.html
printf '<figure><img src="missing.png"></figure>' >>broken.html
if python3 "$SRC/page_check.py" broken.html >check.txt; then bad "a broken page passed page_check"; else ok; fi
# ... and a console error must be caught (--log-level=0 makes Chromium log the page's console)
printf '<!DOCTYPE html><html><body><script>console.error("report_chromium probe")</script></body></html>' >probe.html
render_fails=$fails
render probe.html probe >/dev/null
if grep -q "report_chromium probe" probe.log; then ok; else bad "a console error was not logged"; fi
fails=$render_fails

cd .. && rm -rf "$W/profile-"*
echo "report_chromium: $pass passed, $fails failed (screenshots in $W/)"
[ "$fails" -eq 0 ]

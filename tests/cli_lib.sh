# tests/cli_lib.sh - the assertions the CLI scripts share (sourced): each counts into pass/fails.
# check runs a command, keeping its standard output in out.txt and its standard error in err.txt.
fails=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { fails=$((fails + 1)); echo "FAIL: $*"; }
check() { # description, expected exit status, command...
    desc=$1; want=$2; shift 2
    "$@" >out.txt 2>err.txt
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else bad "$desc (exit $got, wanted $want)"; cat err.txt; fi
}
grep_out() { # description, pattern, file
    if grep -q -- "$2" "$3"; then ok; else bad "$1: no '$2' in $3"; cat "$3"; fi
}
exists() { # description, file
    if [ -s "$2" ]; then ok; else bad "$1: no $2"; fi
}
same() { # description, file, file
    if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; fi
}
# the shape in a .npy header, e.g. "(200, 2)"
npy_shape() { head -c 128 "$1" | LC_ALL=C tr -cd '[:print:]' | LC_ALL=C sed -n "s/.*'shape': \(([^)]*)\).*/\1/p"; }
shape_is() { # description, file, shape
    s=$(npy_shape "$2")
    if [ "$s" = "$3" ]; then ok; else bad "$1: shape '$s', wanted '$3'"; fi
}

# A pseudo-random number in [0, 1) from awk, seeded by the clock and the process: the kill-and-resume
# tests draw their kill moments from it (they are meant to differ between runs; the tests must pass
# for every one of them).
random_seq_no=0
random01() {
    random_seq_no=$((random_seq_no + 1))
    awk -v s="$$$random_seq_no" 'BEGIN { srand(); r = rand(); srand(int(r * 1000000) + s); print rand() }'
}

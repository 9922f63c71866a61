# tests/german_data.awk - a stand-in for UCI's Statlog German credit german.data, made deterministically:
# 1,000 rows, 20 attributes and the label (1 good, 2 bad; 700 and 300), one space between fields, no
# header, the real file's column kinds (A11-style category codes, integers) and value ranges.
# Usage: awk -f german_data.awk > german.data
function rnd(n) { seed = (seed * 16807) % 2147483647; return int(seed / 2147483647 * n) } # Park-Miller: exact in doubles
function code(prefix, first, count) { return "A" prefix (first + rnd(count)) }
BEGIN {
    seed = 20240601
    for (i = 0; i < 1000; i++) {
        row = code(1, 1, 4) " " (4 + 2 * rnd(35)) " " code(3, 0, 5) " " code(4, 0, 11) " " (250 + rnd(18175)) " "
        row = row code(6, 1, 5) " " code(7, 1, 5) " " (1 + rnd(4)) " " code(9, 1, 5) " " code(10, 1, 3) " "
        row = row (1 + rnd(4)) " " code(12, 1, 4) " " (19 + rnd(57)) " " code(14, 1, 3) " " code(15, 1, 3) " "
        row = row (1 + rnd(4)) " " code(17, 1, 4) " " (1 + rnd(2)) " " code(19, 1, 2) " " code(20, 1, 2) " "
        print row (i % 10 < 7 ? 1 : 2)
    }
}

# explain/games.mk: cooperative games (versus/games.h) and the search explainers of Hamilton et al.
# 2022 (versus/search.h).
versusinclude_HEADERS += include/versus/games.h include/versus/search.h
noinst_HEADERS += explain/games_internal.h
libversus_la_SOURCES += explain/games.c explain/games_kernel.c explain/games_permutation.c explain/games_study.c explain/games_memo.c explain/games_lime.c explain/shapley_taylor.c \
	explain/search_model.c explain/search_sam.c explain/search_pixels.c
if HAVE_CHECK
check_PROGRAMS += tests/test_games
TESTS += tests/test_games
endif
if HAVE_CHECK
check_PROGRAMS += tests/test_search
TESTS += tests/test_search
endif
TESTS += tests/cli_bench_search.sh
EXTRA_DIST += tests/cli_bench_search.sh

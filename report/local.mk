# report: experiment results as data (tables with typed cells, figures) and their writers.
versusinclude_HEADERS += include/versus/report.h
noinst_HEADERS += report/internal.h
libversus_la_SOURCES += report/report.c report/report_json.c report/report_markdown.c report/report_html.c \
	report/report_files.c report/report_matrix.c report/report_claims.c
if HAVE_CHECK
check_PROGRAMS += tests/test_report
TESTS += tests/test_report
endif
# shards, per-item seeds, journals of finished items (--resume), partial results and their merge
versusinclude_HEADERS += include/versus/shard.h
noinst_HEADERS += report/shard_internal.h
libversus_la_SOURCES += report/shard.c report/shard_journal.c report/shard_merge.c
if HAVE_CHECK
check_PROGRAMS += tests/test_shard
TESTS += tests/test_shard
endif

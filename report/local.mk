# report: experiment results as data (tables with typed cells, figures) and their writers.
versusinclude_HEADERS += include/versus/report.h
noinst_HEADERS += report/internal.h
libversus_la_SOURCES += report/report.c report/report_json.c report/report_markdown.c report/report_html.c \
	report/report_files.c report/report_matrix.c
if HAVE_CHECK
check_PROGRAMS += tests/test_report
TESTS += tests/test_report
endif

# datasets/tabular.mk - CSV parsing, one-hot tabular encoding, the tabular presets, dataset describe.
versusinclude_HEADERS += include/versus/tabular.h include/versus/describe.h
libversus_la_SOURCES += datasets/csv.c datasets/tabular.c datasets/tabular_presets.c datasets/describe.c

if HAVE_CHECK
check_PROGRAMS += tests/test_csv tests/test_tabular
TESTS += tests/test_csv tests/test_tabular
endif

# The CSV fuzzer joins `make fuzz` / `make fuzz-run` (datasets/io.mk).
FUZZERS += csv
EXTRA_DIST += fuzz/fuzz_csv.c fuzz/corpus/csv
CLEANFILES += fuzz/csv_fuzz
fuzz/csv_fuzz: fuzz/fuzz_csv.c $(FUZZ_LIB_SRCS) datasets/csv.c datasets/tabular.c datasets/describe.c
	$(FUZZ_BUILD)

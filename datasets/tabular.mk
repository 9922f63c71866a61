# datasets/tabular.mk - CSV parsing, one-hot tabular encoding, the tabular presets, dataset describe.
versusinclude_HEADERS += include/versus/tabular.h include/versus/describe.h
libversus_la_SOURCES += datasets/csv.c datasets/tabular.c datasets/tabular_presets.c datasets/describe.c

if HAVE_CHECK
check_PROGRAMS += tests/test_csv tests/test_tabular
TESTS += tests/test_csv tests/test_tabular
tests_test_csv_SOURCES = tests/test_csv.c
tests_test_csv_CFLAGS = $(TEST_CFLAGS)
tests_test_csv_LDADD = $(TEST_LIBS)
tests_test_tabular_SOURCES = tests/test_tabular.c
tests_test_tabular_CFLAGS = $(TEST_CFLAGS)
tests_test_tabular_LDADD = $(TEST_LIBS)
endif

# `make fuzz-csv`: libFuzzer on the CSV parser and the tabular encoder (needs clang; Debian:
# apt-get install clang libclang-rt-14-dev).  FUZZ_CSV_TIME seconds; new inputs go to fuzz/csv-work,
# the committed seeds in fuzz/corpus/csv are only read.
FUZZ_CC = clang
FUZZ_CSV_TIME = 120
CSV_FUZZ_SRC = $(srcdir)/fuzz/fuzz_csv.c $(srcdir)/datasets/csv.c $(srcdir)/datasets/tabular.c \
  $(srcdir)/datasets/describe.c $(srcdir)/datasets/dataset.c $(srcdir)/autograd/error.c
EXTRA_DIST += fuzz/fuzz_csv.c fuzz/corpus/csv
CLEANFILES += fuzz/csv_fuzz

fuzz/csv_fuzz: $(CSV_FUZZ_SRC) $(srcdir)/include/versus/tabular.h $(srcdir)/include/versus/describe.h
	@$(MKDIR_P) fuzz
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -I$(srcdir)/include -I$(srcdir) -D_POSIX_C_SOURCE=200809L $(CSV_FUZZ_SRC) -o $@ -lm

fuzz-csv: fuzz/csv_fuzz
	@$(MKDIR_P) fuzz/csv-work
	./fuzz/csv_fuzz -max_total_time=$(FUZZ_CSV_TIME) -max_len=4096 fuzz/csv-work $(srcdir)/fuzz/corpus/csv

.PHONY: fuzz-csv

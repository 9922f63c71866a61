# nn/io.mk: JSON, .npy and safetensors files (and their tests and fuzz target).
versusinclude_HEADERS += include/versus/json.h include/versus/npy.h include/versus/safetensors.h
noinst_HEADERS += nn/io_util.h tests/io_check.h
libversus_la_SOURCES += nn/io_util.c nn/json.c nn/json_parse.c nn/json_write.c nn/npy.c nn/safetensors.c

if HAVE_CHECK
check_PROGRAMS += tests/test_json tests/test_npy tests/test_safetensors
TESTS += tests/test_json tests/test_npy tests/test_safetensors
tests_test_json_SOURCES = tests/test_json.c
tests_test_json_CFLAGS = $(TEST_CFLAGS)
tests_test_json_LDADD = $(TEST_LIBS)
tests_test_npy_SOURCES = tests/test_npy.c
tests_test_npy_CFLAGS = $(TEST_CFLAGS)
tests_test_npy_LDADD = $(TEST_LIBS)
tests_test_safetensors_SOURCES = tests/test_safetensors.c
tests_test_safetensors_CFLAGS = $(TEST_CFLAGS)
tests_test_safetensors_LDADD = $(TEST_LIBS)
endif

# libFuzzer target for the JSON, .npy and safetensors memory parsers: `make fuzz-modelio`
# (FUZZ_SECONDS=120 by default).  Needs clang with compiler-rt (Debian: libclang-rt-14-dev).
# New inputs and crash files go to FUZZ_WORK (outside the tree); the committed seeds are read only.
EXTRA_DIST += fuzz/fuzz_modelio.c fuzz/corpus/modelio
FUZZ_SECONDS = 120
FUZZ_WORK = $${TMPDIR:-/tmp}/versus-fuzz-modelio
FUZZ_MODELIO_SRC = $(top_srcdir)/fuzz/fuzz_modelio.c $(top_srcdir)/nn/io_util.c $(top_srcdir)/nn/json.c \
	$(top_srcdir)/nn/json_parse.c $(top_srcdir)/nn/json_write.c $(top_srcdir)/nn/npy.c \
	$(top_srcdir)/nn/safetensors.c $(top_srcdir)/autograd/tensor.c $(top_srcdir)/autograd/error.c \
	$(top_srcdir)/autograd/rng.c
CLEANFILES += fuzz/modelio_fuzz

fuzz/modelio_fuzz: $(FUZZ_MODELIO_SRC)
	@mkdir -p fuzz
	$(FUZZ_CC) -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -I$(top_srcdir)/include -I$(top_srcdir) -D_POSIX_C_SOURCE=200809L -pthread \
	  -o $@ $(FUZZ_MODELIO_SRC) -lm

fuzz-modelio: fuzz/modelio_fuzz
	@mkdir -p $(FUZZ_WORK)/corpus
	./fuzz/modelio_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 \
	  -artifact_prefix=$(FUZZ_WORK)/ $(FUZZ_WORK)/corpus $(top_srcdir)/fuzz/corpus/modelio

.PHONY: fuzz-modelio

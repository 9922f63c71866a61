# nn/io.mk: JSON, .npy and safetensors files (and their tests and fuzz target).
versusinclude_HEADERS += include/versus/json.h include/versus/npy.h include/versus/safetensors.h
noinst_HEADERS += nn/io_util.h tests/io_check.h
libversus_la_SOURCES += nn/io_util.c nn/json.c nn/json_parse.c nn/json_write.c nn/npy.c nn/safetensors.c

if HAVE_CHECK
check_PROGRAMS += tests/test_json tests/test_npy tests/test_safetensors
TESTS += tests/test_json tests/test_npy tests/test_safetensors
endif

# libFuzzer target for the JSON, .npy and safetensors memory parsers (see FUZZERS in Makefile.am).
FUZZERS += modelio
MODELIO_FUZZ_SRCS = fuzz/fuzz_modelio.c nn/io_util.c nn/json.c nn/json_parse.c nn/json_write.c nn/npy.c \
	nn/safetensors.c autograd/tensor.c autograd/alloc.c autograd/error.c autograd/rng.c
fuzz/modelio_fuzz: $(MODELIO_FUZZ_SRCS)
	$(FUZZ_BUILD)
CLEANFILES += fuzz/modelio_fuzz
EXTRA_DIST += fuzz/fuzz_modelio.c fuzz/corpus/modelio

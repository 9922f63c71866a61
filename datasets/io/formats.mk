# datasets/io/formats.mk - the file formats every floor above reads and writes: whole-file reads with
# caps, atomic writes (io_util, write_atomic), JSON, .npy, safetensors, inflate/gzip, IDX, TU, CSV;
# their tests and fuzz targets.  Nothing here knows a model.
versusinclude_HEADERS += include/versus/json.h include/versus/npy.h include/versus/safetensors.h \
	include/versus/data_io.h include/versus/onnx.h
noinst_HEADERS += datasets/io/io_util.h datasets/io/write_atomic.h datasets/io/deflate_tables.h datasets/io/protobuf.h tests/io_check.h
libversus_la_SOURCES += datasets/io/io_util.c datasets/io/write_atomic.c datasets/io/json.c \
	datasets/io/json_parse.c datasets/io/json_write.c datasets/io/npy.c datasets/io/safetensors.c \
	datasets/io/inflate.c datasets/io/idx.c datasets/io/tu.c datasets/io/csv.c datasets/io/protobuf.c datasets/io/onnx.c

if HAVE_CHECK
check_PROGRAMS += tests/test_json tests/test_npy tests/test_safetensors tests/test_inflate tests/test_idx tests/test_tu
TESTS += tests/test_json tests/test_npy tests/test_safetensors tests/test_inflate tests/test_idx tests/test_tu
endif

# ---- fuzzing (variables are in Makefile.am) ----
FUZZERS += modelio inflate idx tu csv onnx
MODELIO_FUZZ_SRCS = fuzz/fuzz_modelio.c datasets/io/io_util.c datasets/io/json.c datasets/io/json_parse.c \
	datasets/io/json_write.c datasets/io/npy.c datasets/io/safetensors.c autograd/tensor.c autograd/alloc.c \
	autograd/error.c autograd/mem_budget.c autograd/rng.c
fuzz/modelio_fuzz: $(MODELIO_FUZZ_SRCS)
	$(FUZZ_BUILD)
fuzz/inflate_fuzz: fuzz/fuzz_inflate.c $(FUZZ_LIB_SRCS)
	$(FUZZ_BUILD)
fuzz/idx_fuzz: fuzz/fuzz_idx.c $(FUZZ_LIB_SRCS) datasets/io/idx.c
	$(FUZZ_BUILD)
fuzz/tu_fuzz: fuzz/fuzz_tu.c $(FUZZ_LIB_SRCS) datasets/io/tu.c
	$(FUZZ_BUILD)
fuzz/onnx_fuzz: fuzz/fuzz_onnx.c $(FUZZ_LIB_SRCS) datasets/io/protobuf.c datasets/io/onnx.c
	$(FUZZ_BUILD)
fuzz/csv_fuzz: fuzz/fuzz_csv.c $(FUZZ_LIB_SRCS) datasets/io/csv.c datasets/tabular.c datasets/describe.c
	$(FUZZ_BUILD)

fuzz:
	@for f in $(FUZZERS); do $(MAKE) $(AM_MAKEFLAGS) fuzz/$${f}_fuzz || exit 1; done

fuzz-run: fuzz
	@for f in $(FUZZERS); do \
	  mkdir -p fuzz/work/$$f && \
	  echo "fuzzing $$f for $(FUZZ_TIME) s" && \
	  ./fuzz/$${f}_fuzz -max_total_time=$(FUZZ_TIME) -max_len=65536 -artifact_prefix=fuzz/work/$$f- fuzz/work/$$f $(srcdir)/fuzz/corpus/$$f \
	    > fuzz/work/$$f.log 2>&1 || { tail -40 fuzz/work/$$f.log; exit 1; }; \
	  tail -1 fuzz/work/$$f.log; \
	done

CLEANFILES += fuzz/modelio_fuzz fuzz/inflate_fuzz fuzz/idx_fuzz fuzz/tu_fuzz fuzz/csv_fuzz fuzz/onnx_fuzz
clean-fuzz:
	-rm -rf fuzz/work

.PHONY: fuzz fuzz-run clean-fuzz
EXTRA_DIST += fuzz/fuzz_modelio.c fuzz/corpus/modelio fuzz/fuzz_inflate.c fuzz/fuzz_idx.c fuzz/fuzz_tu.c \
	fuzz/corpus/inflate fuzz/corpus/idx fuzz/corpus/tu fuzz/fuzz_csv.c fuzz/corpus/csv fuzz/fuzz_onnx.c fuzz/corpus/onnx

# torch_to_versus.py writes a PyTorch module as a versus model directory (model.json + safetensors),
# installed under $(pkgdatadir) (share/versus/); tests/torch_export.sh runs a PyTorch user's path with
# it (skipped without Debian's python3-torch).
dist_pkgdata_SCRIPTS = datasets/io/torch_to_versus.py
TESTS += tests/torch_export.sh
EXTRA_DIST += tests/torch_export.sh tests/torch_export.py

# autograd/kernels.mk: GEMM, thread pool and other optimised kernels.
versusinclude_HEADERS += include/versus/threads.h
noinst_HEADERS += autograd/kernels.h autograd/gemm_kernel.h autograd/gemm_ukernel.h
libversus_la_SOURCES += autograd/threadpool.c autograd/isa.c autograd/gemm.c autograd/gemm_ref.c \
	autograd/gemm_avx2.c autograd/gemm_avx512.c autograd/gemm_thin.c autograd/exp_pd.c

if HAVE_CHECK
check_PROGRAMS += tests/test_gemm tests/test_threads tests/test_exp_pd
TESTS += tests/test_gemm tests/test_threads tests/test_exp_pd
endif

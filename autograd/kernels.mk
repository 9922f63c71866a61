# autograd/kernels.mk: GEMM, thread pool and other optimised kernels.

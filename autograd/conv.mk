# autograd/conv.mk: convolution, pooling and upsampling ops.

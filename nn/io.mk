# nn/io.mk: JSON, .npy and safetensors files.

# datasets/io.mk

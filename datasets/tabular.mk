# datasets/tabular.mk

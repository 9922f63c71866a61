# nn/layers.mk: layers, module tree, initialisers, optimizers, architectures.

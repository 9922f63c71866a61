# nn/train.mk: the training loop, checkpoints, and the train / predict verbs.

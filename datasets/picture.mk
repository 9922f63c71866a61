# datasets/picture.mk

//! NumPy `.npy` files (filled in below).

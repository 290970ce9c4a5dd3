//! Walking multi-dimensional indices in row-major order.
//!
//! Every backend loops over array indices; this is the one shared, tested way to
//! do it without recomputing divisions per element.

/// Advances `index` to the next row-major position within `dims`; returns `false`
/// (leaving `index` all zeros) after the last one.
#[inline]
pub fn next_index(index: &mut [usize], dims: &[usize]) -> bool {
    for d in (0..dims.len()).rev() {
        index[d] += 1;
        if index[d] < dims[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

/// Calls `f` with every index of an array with these dimensions, in row-major
/// order (once with `[]` for a scalar; never if a dimension is 0).
pub fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize])) {
    if dims.contains(&0) {
        return;
    }
    let mut index = vec![0usize; dims.len()];
    loop {
        f(&index);
        if !next_index(&mut index, dims) {
            return;
        }
    }
}

/// The row-major linear position of `index` given row-major `strides`.
#[inline]
pub fn linear_index(index: &[usize], strides: &[usize]) -> usize {
    index.iter().zip(strides).map(|(i, s)| i * s).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_in_row_major_order() {
        let mut seen = Vec::new();
        for_each_index(&[2, 3], |i| seen.push(i.to_vec()));
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], [0, 0]);
        assert_eq!(seen[1], [0, 1]);
        assert_eq!(seen[3], [1, 0]);
        let mut n = 0;
        for_each_index(&[], |_| n += 1);
        assert_eq!(n, 1);
        for_each_index(&[3, 0], |_| n += 1);
        assert_eq!(n, 1);
        let strides = crate::shape::row_major_strides(&[2, 3]);
        assert_eq!(linear_index(&[1, 2], &strides), 5);
    }
}

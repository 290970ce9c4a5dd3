//! Physical byte order of arrays: a literal is always row-major, a device buffer
//! may be laid out as its shape's layout names. These reorder bytes between the
//! two; a transfer manager or a custom-call ABI calls them at the boundary.

use crate::shape::ArrayShape;

/// For each logical dimension, the distance in elements between neighbours in
/// memory under the shape's layout (row-major when it has none).
pub fn layout_strides(array: &ArrayShape) -> Vec<usize> {
    let layout = array.layout_or_default();
    let mut strides = vec![0usize; array.rank()];
    let mut step = 1usize;
    for &d in &layout.minor_to_major {
        if d < strides.len() {
            strides[d] = step;
            step *= array.dims[d];
        }
    }
    strides
}

/// Reorders row-major bytes into the physical order the shape's layout names.
/// Returns the input unchanged (copied) when the layout is row-major. Tiles are not
/// applied: no platform here uses tiled layouts.
pub fn row_major_to_layout(bytes: &[u8], array: &ArrayShape) -> Vec<u8> {
    permute_bytes(bytes, array, true)
}

/// The inverse of [`row_major_to_layout`].
pub fn layout_to_row_major(bytes: &[u8], array: &ArrayShape) -> Vec<u8> {
    permute_bytes(bytes, array, false)
}

/// Whether an array's bytes are the same in its layout and in row-major order.
pub fn is_row_major(array: &ArrayShape) -> bool {
    array.element_count() <= 1
        || array
            .layout
            .as_ref()
            .is_none_or(|l| l.is_row_major() || l.minor_to_major.is_empty())
}

fn permute_bytes(bytes: &[u8], array: &ArrayShape, to_physical: bool) -> Vec<u8> {
    if is_row_major(array) {
        return bytes.to_vec();
    }
    let elem = array.element_type.byte_size();
    let physical = layout_strides(array);
    let mut out = vec![0u8; bytes.len()];
    let rank = array.rank();
    let mut index = vec![0usize; rank];
    for logical in 0..array.element_count() {
        let phys: usize = index.iter().zip(&physical).map(|(i, s)| i * s).sum();
        let (from, to) = if to_physical {
            (logical, phys)
        } else {
            (phys, logical)
        };
        out[to * elem..(to + 1) * elem].copy_from_slice(&bytes[from * elem..(from + 1) * elem]);
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < array.dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{ElementType, Layout};

    #[test]
    fn column_major_round_trip() {
        let mut a = ArrayShape::new(ElementType::U8, vec![2, 3]);
        a.layout = Some(Layout {
            minor_to_major: vec![0, 1],
            ..Layout::default()
        });
        let row_major = [0u8, 1, 2, 3, 4, 5];
        let physical = row_major_to_layout(&row_major, &a);
        assert_eq!(physical, [0, 3, 1, 4, 2, 5]);
        assert_eq!(layout_to_row_major(&physical, &a), row_major);
    }
}

//! The few fields of a serialized `xla.CompileOptionsProto` the plugin needs,
//! read by hand (no protobuf dependency or generated code for ~4 fields).
//!
//! The field numbers are those of `xla/pjrt/proto/compile_options.proto` and
//! `xla/xla_data.proto`, checked against jaxlib 0.10.2's own serialization:
//!
//! ```text
//! CompileOptionsProto      { ExecutableBuildOptionsProto executable_build_options = 3; }
//! ExecutableBuildOptionsProto { int64 num_replicas = 4; int64 num_partitions = 5;
//!                               DeviceAssignmentProto device_assignment = 9; }
//! DeviceAssignmentProto    { int32 replica_count = 1; int32 computation_count = 2;
//!                            repeated ComputationDevice computation_devices = 3; }
//! ComputationDevice        { repeated int64 replica_device_ids = 1; }
//! ```
//!
//! Every other field is skipped by its wire type, so options from newer
//! jaxlibs (new fields) read the same.

use platform_api::Error;

/// What a compile needs from the options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    pub num_replicas: usize,
    pub num_partitions: usize,
    /// `[computation][replica] -> device id`, when the options carry one.
    pub device_assignment: Option<Vec<Vec<i64>>>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            num_replicas: 1,
            num_partitions: 1,
            device_assignment: None,
        }
    }
}

/// One field: number and value.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn malformed(what: &str) -> Error {
    Error::invalid_argument(format!("malformed CompileOptionsProto: {what}"))
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, Error> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .buf
                .get(self.pos)
                .ok_or_else(|| malformed("truncated varint"))?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(malformed("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| malformed("field runs past the end"))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// The next field, or `None` at the end.
    fn field(&mut self) -> Result<Option<(u64, Value<'a>)>, Error> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("length"))?;
                Value::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            other => return Err(malformed(&format!("wire type {other}"))),
        };
        Ok(Some((key >> 3, value)))
    }
}

fn count(v: u64, what: &str) -> Result<usize, Error> {
    // Zero means "unset" in proto3; negative counts arrive as huge varints.
    match usize::try_from(v) {
        Ok(0) => Ok(1),
        Ok(n) if n <= 1 << 20 => Ok(n),
        _ => Err(malformed(&format!("{what} = {}", v as i64))),
    }
}

/// Reads `CompileOptionsProto` bytes.
pub fn parse(bytes: &[u8]) -> Result<CompileOptions, Error> {
    let mut options = CompileOptions::default();
    let mut top = Reader::new(bytes);
    while let Some((number, value)) = top.field()? {
        let (3, Value::Bytes(build)) = (number, value) else {
            continue;
        };
        let mut build = Reader::new(build);
        while let Some((number, value)) = build.field()? {
            match (number, value) {
                (4, Value::Varint(v)) => options.num_replicas = count(v, "num_replicas")?,
                (5, Value::Varint(v)) => options.num_partitions = count(v, "num_partitions")?,
                (9, Value::Bytes(da)) => options.device_assignment = Some(device_assignment(da)?),
                _ => {}
            }
        }
    }
    Ok(options)
}

fn device_assignment(bytes: &[u8]) -> Result<Vec<Vec<i64>>, Error> {
    let mut computations = Vec::new();
    let mut reader = Reader::new(bytes);
    while let Some((number, value)) = reader.field()? {
        let (3, Value::Bytes(computation)) = (number, value) else {
            continue;
        };
        let mut ids = Vec::new();
        let mut c = Reader::new(computation);
        while let Some((number, value)) = c.field()? {
            match (number, value) {
                // Packed (proto3's default) or one id per field.
                (1, Value::Bytes(packed)) => {
                    let mut p = Reader::new(packed);
                    while p.pos < packed.len() {
                        ids.push(p.varint()? as i64);
                    }
                }
                (1, Value::Varint(id)) => ids.push(id as i64),
                _ => {}
            }
        }
        computations.push(ids);
    }
    Ok(computations)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A serialized `DeviceAssignmentProto` of `[computation][replica]` device
/// ids (what `PJRT_LoadedExecutable_GetDeviceAssignment` returns).
pub fn encode_device_assignment(computations: &[Vec<i64>]) -> Vec<u8> {
    let replicas = computations.first().map_or(0, Vec::len);
    let mut out = Vec::new();
    put_varint(&mut out, 1 << 3); // replica_count
    put_varint(&mut out, replicas as u64);
    put_varint(&mut out, 2 << 3); // computation_count
    put_varint(&mut out, computations.len() as u64);
    for ids in computations {
        let mut packed = Vec::new();
        for &id in ids {
            put_varint(&mut packed, id as u64);
        }
        let mut device = Vec::new();
        put_varint(&mut device, (1 << 3) | 2); // replica_device_ids, packed
        put_varint(&mut device, packed.len() as u64);
        device.extend(packed);
        put_varint(&mut out, (3 << 3) | 2); // computation_devices
        put_varint(&mut out, device.len() as u64);
        out.extend(device);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_assignment_round_trips() {
        let assignment = vec![vec![7, 9, 11], vec![8, 10, 12]];
        let mut options = vec![(3 << 3) | 2];
        let mut build = vec![4 << 3, 3, 5 << 3, 2, (9 << 3) | 2];
        let da = encode_device_assignment(&assignment);
        build.push(da.len() as u8);
        build.extend(da);
        options.push(build.len() as u8);
        options.extend(build);
        let parsed = parse(&options).unwrap();
        assert_eq!(parsed.num_replicas, 3);
        assert_eq!(parsed.num_partitions, 2);
        assert_eq!(parsed.device_assignment, Some(assignment));
    }

    #[test]
    fn truncated_options_are_errors() {
        let err = parse(&[(3 << 3) | 2, 10, 1]).unwrap_err();
        assert!(err.message().contains("CompileOptionsProto"), "{err}");
    }
}

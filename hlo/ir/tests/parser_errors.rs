//! Malformed HLO is refused with an `InvalidArgument` error that starts with the
//! `line:column` where reading stopped and says what was expected there and what
//! was found.
//!
//! Each case marks the expected error position by a unique piece of the text; the
//! expected `line:column` is computed from where that piece sits, so the tests do
//! not depend on hand-counted columns.

use hlo_ir::{Code, HloModule};

/// 1-based line and column (in characters) of the first occurrence of `needle`
/// at or after the `nth` occurrence.
fn position_of(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    let mut offset = 0;
    let mut found = None;
    for _ in 0..=nth {
        let at = text[offset..]
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in the test text"));
        found = Some(offset + at);
        offset += at + needle.len();
    }
    let at = found.unwrap();
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |p| p + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Parses `text`, expects an error at the `nth` occurrence of `at`, whose message
/// contains every one of `parts`.
fn expect_error_nth(text: &str, at: &str, nth: usize, parts: &[&str]) {
    let err = match HloModule::parse(text) {
        Ok(_) => panic!("parsed, but should fail with {parts:?}:\n{text}"),
        Err(e) => e,
    };
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let (line, col) = position_of(text, at, nth);
    let prefix = format!("{line}:{col}: ");
    assert!(
        err.message().starts_with(&prefix),
        "error should be at {line}:{col} ({at:?}), got: {}",
        err.message()
    );
    for part in parts {
        assert!(
            err.message().contains(part),
            "error should mention {part:?}, got: {}",
            err.message()
        );
    }
}

fn expect_error(text: &str, at: &str, parts: &[&str]) {
    expect_error_nth(text, at, 0, parts)
}

/// A small valid module with one line replaced, to test errors in context.
fn module_with(line: &str) -> String {
    format!(
        "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}}\n\nENTRY %main (p: f32[4]) -> f32[4] {{\n  %p = f32[4]{{0}} parameter(0)\n{line}\n}}\n"
    )
}

#[test]
fn the_base_module_is_valid() {
    HloModule::parse(&module_with("  ROOT %n = f32[4]{0} negate(%p)")).unwrap();
}

#[test]
fn unknown_opcode() {
    let text = module_with("  ROOT %n = f32[4]{0} frobnicate(%p)");
    expect_error(&text, "frobnicate", &["unknown opcode 'frobnicate'"]);
}

#[test]
fn missing_equals() {
    let text = module_with("  ROOT %n f32[4]{0} negate(%p)");
    expect_error(&text, "f32[4]{0} negate", &["expected '='", "found 'f32'"]);
}

#[test]
fn missing_parenthesis_after_opcode() {
    let text = module_with("  ROOT %n = f32[4]{0} negate %p");
    expect_error(
        &text,
        "%p\n}",
        &["expected '(' after the opcode", "found '%p'"],
    );
}

#[test]
fn unterminated_string() {
    let text =
        module_with("  ROOT %n = f32[4]{0} custom-call(%p), custom_call_target=\"never closed");
    expect_error(&text, "\"never", &["unterminated string"]);
}

#[test]
fn unterminated_comment() {
    let text = module_with("  /* a comment that never ends\n  ROOT %n = f32[4]{0} negate(%p)");
    expect_error(&text, "/* a comment", &["unterminated /* comment"]);
}

#[test]
fn unterminated_computation_body() {
    let text = "HloModule m\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(1)\n";
    expect_error(text, "{\n  ROOT", &["%main is missing its closing '}'"]);
}

#[test]
fn unterminated_raw_brace_block() {
    let text = module_with(
        "  ROOT %n = f32[4]{0} custom-call(%p), custom_call_target=\"x\", backend_config={\"a\": {{\"b\": 1}",
    );
    expect_error(&text, "{\"a\"", &["unbalanced '{'"]);
}

#[test]
fn bad_shapes() {
    let text = module_with("  ROOT %n = f33[4] negate(%p)");
    expect_error(
        &text,
        "f33",
        &["expected a shape", "'f33'", "not an element type"],
    );
    let text = module_with("  ROOT %n = f32[4 negate(%p)");
    expect_error(
        &text,
        "negate",
        &["expected ',' or ']' in shape", "found 'negate'"],
    );
    let text = module_with("  ROOT %n = f32[-4] negate(%p)");
    expect_error(&text, "-4", &["expected a non-negative integer", "'-4'"]);
    let text = module_with("  ROOT %n = f32[4,99999999999,99999999999] negate(%p)");
    expect_error(&text, "f32[4,9", &["too large"]);
    let text = module_with("  ROOT %n = f32[4]{0:Q(1)} negate(%p)");
    expect_error(&text, "Q(1)", &["unsupported layout attribute 'Q'"]);
}

#[test]
fn layout_must_be_a_permutation() {
    let text = module_with("  ROOT %n = f32[4]{1} negate(%p)");
    expect_error(
        &text,
        "{1}",
        &["layout {1} is not a permutation of the 1 dimensions"],
    );
    let text = "HloModule m\nENTRY %e (p: f32[2,3]) -> f32[2,3] {\n  ROOT %p = f32[2,3]{0,0} parameter(0)\n}\n";
    expect_error(
        text,
        "{0,0}",
        &["layout {0,0} is not a permutation of the 2 dimensions"],
    );
    let text = "HloModule m\nENTRY %e (p: f32[2,3]) -> f32[2,3] {\n  ROOT %p = f32[2,3]{1,0,2} parameter(0)\n}\n";
    expect_error(text, "{1,0,2}", &["not a permutation"]);
}

#[test]
fn unknown_attribute() {
    let text = module_with("  ROOT %n = f32[4]{0} negate(%p), flavour=sweet");
    expect_error(&text, "flavour", &["unknown attribute 'flavour'"]);
}

#[test]
fn attribute_on_the_wrong_opcode() {
    let text = module_with("  ROOT %n = f32[4]{0} negate(%p), dimensions={0}");
    expect_error(
        &text,
        "dimensions",
        &["attribute dimensions does not apply to negate"],
    );
    let text = module_with("  ROOT %n = f32[4]{0} negate(%p), to_apply=%add");
    expect_error(
        &text,
        "to_apply",
        &["attribute to_apply does not apply to negate"],
    );
}

#[test]
fn attribute_given_twice() {
    let text = module_with("  ROOT %n = f32[4]{0} broadcast(%p), dimensions={0}, dimensions={0}");
    expect_error_nth(
        &text,
        "dimensions",
        1,
        &["attribute dimensions is given twice"],
    );
}

#[test]
fn missing_required_attribute() {
    let text = module_with("  ROOT %n = f32[] reduce(%p, %p), dimensions={0}");
    expect_error(&text, "reduce(", &["missing attribute to_apply"]);
}

#[test]
fn unknown_instruction_reference() {
    let text = module_with("  ROOT %n = f32[4]{0} add(%p, %q)");
    expect_error(&text, "%q", &["unknown instruction %q"]);
    // Operands must come before their users.
    let text =
        module_with("  %n = f32[4]{0} add(%p, %later)\n  ROOT %later = f32[4]{0} negate(%p)");
    expect_error(&text, "%later)", &["unknown instruction %later"]);
}

#[test]
fn unknown_computation_reference() {
    let text = module_with("  ROOT %r = f32[4] reduce(%p, %p), dimensions={0}, to_apply=%nowhere");
    expect_error(
        &text,
        "%nowhere",
        &["computation %nowhere is used but never defined"],
    );
}

#[test]
fn duplicate_names() {
    let text = module_with("  %p = f32[4]{0} negate(%p)\n  ROOT %n = f32[4]{0} negate(%p)");
    expect_error_nth(&text, "%p = ", 1, &["duplicate instruction name %p"]);
    let text = format!(
        "{}\n%add (x: f32[]) -> f32[] {{\n  ROOT %x = f32[] parameter(0)\n}}\n",
        module_with("  ROOT %n = f32[4]{0} negate(%p)")
    );
    expect_error_nth(&text, "%add (", 1, &["duplicate computation name %add"]);
}

#[test]
fn two_roots_and_two_entries() {
    let text = module_with("  ROOT %n = f32[4]{0} negate(%p)\n  ROOT %m = f32[4]{0} negate(%n)");
    expect_error(
        &text,
        "%m =",
        &["computation %main has two ROOT instructions"],
    );
    let text = format!(
        "{}\nENTRY %other () -> f32[] {{\n  ROOT %c = f32[] constant(1)\n}}\n",
        module_with("  ROOT %n = f32[4]{0} negate(%p)")
    );
    expect_error(&text, "ENTRY %other", &["a second ENTRY computation"]);
}

#[test]
fn elided_constants() {
    let text = module_with("  ROOT %c = f32[4]{0} constant({...})");
    expect_error(&text, "{...}", &["constant values were elided"]);
}

#[test]
fn out_of_range_integer_constants() {
    for (ty, value) in [
        ("s8", "128"),
        ("s8", "-129"),
        ("u8", "256"),
        ("u16", "-1"),
        ("s32", "2147483648"),
        ("u32", "4294967296"),
        ("s64", "-9223372036854775809"),
        ("u64", "18446744073709551616"),
    ] {
        let text = module_with(&format!("  ROOT %c = {ty}[2] constant({{0, {value}}})"));
        expect_error(
            &text,
            value,
            &[&format!("value {value} is out of range for {ty}")],
        );
    }
    let text = module_with("  ROOT %c = s32[] constant(12abc)");
    expect_error(&text, "12abc", &["expected a s32 value, found '12abc'"]);
    let text = module_with("  ROOT %c = pred[] constant(2)");
    expect_error(&text, "2)", &["expected a pred value"]);
}

#[test]
fn constant_element_counts() {
    let text = module_with("  ROOT %c = f32[2] constant({1, 2, 3})");
    expect_error(&text, "3}", &["too many elements in dimension 0 of f32[2]"]);
    let text = module_with("  ROOT %c = f32[3] constant({1, 2})");
    expect_error(
        &text,
        "{1, 2}",
        &["dimension 0 of f32[3] has 3 elements, but 2 are written"],
    );
    // A shape claiming more values than the text could hold is refused up front.
    let text = module_with("  ROOT %c = f32[1000000000000] constant({1})");
    expect_error(&text, "{1}", &["needs more values than the text holds"]);
}

#[test]
fn bad_attribute_values() {
    let text = module_with("  ROOT %g = f32[] get-tuple-element(%p), index=-1");
    expect_error(
        &text,
        "-1",
        &["expected a non-negative integer, found '-1'"],
    );
    let text = module_with("  ROOT %c = pred[4]{0} compare(%p, %p), direction=SIDEWAYS");
    expect_error(&text, "SIDEWAYS", &["'SIDEWAYS' is not a valid direction"]);
    let text = module_with(
        "  ROOT %r = f32[4]{0} reduce-precision(%p), exponent_bits=4294967296, mantissa_bits=2",
    );
    expect_error(
        &text,
        "4294967296",
        &["exponent_bits must be an integer from 0 to 4294967295"],
    );
    let text = module_with("  ROOT %r = f32[4]{0} all-reduce(%p), replica_groups=[2,2]<=[99999999,99999999], to_apply=%add");
    expect_error(&text, "[2,2]", &["iota replica groups name more than"]);
    let text = module_with(
        "  ROOT %r = f32[4]{0} all-reduce(%p), replica_groups=[3,2]<=[4], to_apply=%add",
    );
    expect_error(&text, "[3,2]", &["malformed iota replica groups"]);
}

#[test]
fn module_level_errors() {
    expect_error(
        "HloMod m",
        "HloMod",
        &["expected 'HloModule'", "found 'HloMod'"],
    );
    let err = HloModule::parse("HloModule m\n").unwrap_err();
    assert!(
        err.message().starts_with("2:1: ")
            && err.message().contains("the module has no computations"),
        "{err}"
    );
    expect_error(
        "HloModule m, is_scheduled=maybe\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1)\n}\n",
        "maybe",
        &["expected true or false, found 'maybe'"],
    );
    expect_error(
        "HloModule m\nENTRY %e () -> f32[] {\n}\n",
        "{\n}",
        &["computation %e has no instructions"],
    );
    expect_error(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1) %d\n}\n",
        "}",
        &["expected '='", "found '}'"],
    );
    expect_error(
        "HloModule m\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1) \u{e9}\n}\n",
        "\u{e9}",
        &["unexpected character '\u{e9}'"],
    );
}

#[test]
fn deep_tuple_shapes_are_refused_not_a_stack_overflow() {
    let shape = format!("{}f32[]{}", "(".repeat(5000), ")".repeat(5000));
    let text =
        format!("HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %p = {shape} parameter(0)\n}}\n");
    expect_error_nth(&text, "(", 65, &["tuples nest more than 64 deep"]);
}

use platform_api::Literal;
use platform_host::runner::run_hlo;

#[test]
fn add_and_broadcast() {
    let text = r#"
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  c = f32[] constant(10)
  b = f32[2,3] broadcast(c), dimensions={}
  s = f32[2,3] add(a, b)
  ROOT t = f32[3,2] transpose(s), dimensions={1,0}
}
"#;
    let a = Literal::from_slice(&[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let out = run_hlo(text, &[a]).unwrap();
    assert_eq!(out.data::<f32>().unwrap(), &[11., 14., 12., 15., 13., 16.]);
}

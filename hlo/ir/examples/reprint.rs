fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        match hlo_ir::HloModule::parse(&text) {
            Ok(m) => print!("{}", m.to_text()),
            Err(e) => println!("{path}: {e}"),
        }
    }
}

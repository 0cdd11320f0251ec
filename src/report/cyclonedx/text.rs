//! Text from the scanned tree as the SBOM may carry it.

/// Renders text from the scanned tree for the SBOM: C0 controls, DEL and the XML-forbidden
/// noncharacters U+FFFE/U+FFFF become `\xNN` / `\u{..}` (the same style the crawler uses for
/// invalid UTF-8), everything else is kept. `verify` applies the same function to the tree.
pub fn sbom_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{0}'..='\u{1f}' | '\u{7f}' => out.push_str(&format!("\\x{:02X}", c as u32)),
            '\u{fffe}' | '\u{ffff}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

use super::*;

/// A small IR v11 as `ov.save_model` writes it: a parameter, a constant, a MatMul inside a
/// `Loop`-style body, a result.
pub(crate) fn ir(extra_layers: &str, doctype: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
{doctype}<net name="tiny" version="11">
	<layers>
		<layer id="0" name="x" type="Parameter" version="opset1">
			<data shape="1,3" element_type="f32" />
			<output>
				<port id="0" precision="FP32" names="x"><dim>1</dim><dim>3</dim></port>
			</output>
		</layer>
		<layer id="1" name="w" type="Const" version="opset1">
			<data element_type="f32" shape="3,3" offset="0" size="36" />
		</layer>
		<layer id="2" name="loop" type="Loop" version="opset5">
			<body>
				<layers>
					<layer id="0" name="b" type="Const" version="opset1">
						<data element_type="f16" shape="3" offset="36" size="6" />
					</layer>
				</layers>
				<edges />
			</body>
		</layer>
		{extra_layers}
		<layer id="3" name="out" type="Result" version="opset1" />
	</layers>
	<edges>
		<edge from-layer="0" from-port="0" to-layer="2" to-port="0" />
		<edge from-layer="1" from-port="0" to-layer="2" to-port="1" />
	</edges>
	<rt_info><framework><item name="name" value="a &amp; b" /></framework></rt_info>
</net>
"#
    )
}

fn codes(p: &[Problem]) -> Vec<&'static str> {
    p.iter().map(|p| p.code).collect()
}

#[test]
fn a_benign_ir_lists_layers_opsets_and_weight_ranges() {
    let xml = ir("", "");
    assert!(is_ir(xml.as_bytes()));
    let (f, p) = parse(xml.as_bytes());
    assert!(p.is_empty(), "{p:?}");
    assert_eq!(f.version.as_deref(), Some("11"));
    assert_eq!(f.name.as_deref(), Some("tiny"));
    assert_eq!(f.layers, 5);
    assert_eq!(f.op_types["Const"], 2);
    assert_eq!(f.opsets["opset1"], 4);
    assert_eq!(f.edges, 2);
    assert_eq!(f.weights.ranges, 2);
    assert_eq!(f.weights.end, 42);
    assert_eq!(f.weights.end_layer.as_deref(), Some("b"));
    assert_eq!(f.weights.bytes, 42);
    assert!(f.custom_layers.is_empty());
}

#[test]
fn recognised_by_content_not_by_name() {
    assert!(is_ir(b"<net name=\"m\" version=\"10\">"));
    assert!(is_ir(
        b"\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- c -->\n<net version='11'>"
    ));
    assert!(is_ir(
        b"<?xml version=\"1.0\"?><!DOCTYPE net [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><net version=\"11\">"
    ));
    assert!(!is_ir(b"<network version=\"11\">"));
    assert!(!is_ir(b"<net name=\"m\">"));
    assert!(!is_ir(b"<net subversion=\"1\">"));
    assert!(!is_ir(b"<?xml version=\"1.0\"?><svg version=\"1.1\">"));
    assert!(!is_ir(b"version=1"));
    // A DTD padded past the probe's window is a candidate when it declares entities.
    let padded = format!(
        "<!DOCTYPE net [<!ENTITY x SYSTEM \"file:///etc/passwd\">{}",
        " ".repeat(70_000)
    );
    assert!(is_ir(&padded.as_bytes()[..65_536]));
    assert!(!is_ir(
        format!("<!DOCTYPE html [{}", " ".repeat(70_000)).as_bytes()
    ));
}

#[test]
fn extension_and_unknown_layers_are_custom() {
    let xml = ir(
        r#"<layer id="5" name="tok" type="RegexNormalization" version="extension" />
		<layer id="6" name="py" type="PyFunc" version="opset8" />
		<layer id="7" name="rope" type="RoPE" version="ie_internal_opset" />"#,
        "",
    );
    let (f, p) = parse(xml.as_bytes());
    assert_eq!(codes(&p), ["custom-layer", "custom-layer"]);
    assert!(p.iter().all(|p| p.kind == ProblemKind::CustomOp));
    assert_eq!(
        f.custom_layers,
        ["RegexNormalization@extension", "PyFunc@opset8"]
    );
    assert_eq!(p[0].detail("layer"), Some("tok"));
}

#[test]
fn xxe_and_entity_references_are_exploit_shapes_and_never_expanded() {
    let dt = "<!DOCTYPE net [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n";
    let xml = ir("", dt).replace("name=\"tiny\"", "name=\"&xxe;\"");
    let (f, p) = parse(xml.as_bytes());
    assert_eq!(codes(&p), ["xml-doctype-entities", "xml-entity-reference"]);
    assert!(p.iter().all(|p| p.kind == ProblemKind::Exploit));
    assert_eq!(p[0].detail("external"), Some("true"));
    // The reference stays as written: nothing was substituted or fetched.
    assert_eq!(f.name.as_deref(), Some("&xxe;"));
    // A billion-laughs DTD: declared, reported, never expanded.
    let lol =
        "<!DOCTYPE net [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>";
    let xml = ir(
        "<layer id=\"9\" name=\"q\" type=\"Relu\" version=\"opset1\">&b;</layer>",
        lol,
    );
    let (_, p) = parse(xml.as_bytes());
    assert_eq!(codes(&p), ["xml-doctype-entities", "xml-entity-reference"]);
    assert_eq!(p[0].detail("external"), Some("false"));
    // A bare DOCTYPE is only broken structure.
    let (_, p) = parse(ir("", "<!DOCTYPE net>").as_bytes());
    assert_eq!(codes(&p), ["xml-doctype"]);
    assert_eq!(p[0].kind, ProblemKind::Malformed);
}

#[test]
fn hostile_weight_ranges_are_exploit_shapes() {
    let xml = ir(
        r#"<layer id="5" name="ovf" type="Const" version="opset1"><data element_type="u8" shape="1" offset="18446744073709551615" size="2" /></layer>
		<layer id="6" name="short" type="Const" version="opset1"><data element_type="f32" shape="1000,1000" offset="0" size="4" /></layer>
		<layer id="7" name="neg" type="Const" version="opset1"><data element_type="f32" shape="1" offset="-4" size="4" /></layer>
		<layer id="8" name="huge" type="Const" version="opset1"><data element_type="f32" shape="4294967296,4294967296" offset="0" size="4" /></layer>"#,
        "",
    );
    let (f, p) = parse(xml.as_bytes());
    assert_eq!(
        codes(&p),
        [
            "const-range-overflow",
            "const-size-mismatch",
            "const-range-invalid",
            "const-shape-overflow"
        ]
    );
    assert!(p.iter().all(|p| p.kind == ProblemKind::Exploit));
    assert_eq!(f.weights.ranges, 4);
}

#[test]
fn broken_xml_is_malformed_and_never_panics() {
    for bad in [
        &b"<net version=\"11\"><layers></net>"[..],
        b"<net version=\"11\"><layers>",
        b"<layers/>",
        b"\xff\xfe<net version=\"11\"/>",
        b"",
        b"<net version=\"11\"/><net version=\"11\"/>",
    ] {
        let (_, p) = parse(bad);
        assert!(
            p.iter().any(|p| p.kind == ProblemKind::Malformed),
            "{:?}: {p:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn nesting_is_bounded() {
    let mut xml = String::from("<net version=\"11\">");
    for _ in 0..(MAX_DEPTH + 10) {
        xml.push_str("<a>");
    }
    let (_, p) = parse(xml.as_bytes());
    assert_eq!(codes(&p), ["xml-too-deep"]);
    assert_eq!(p[0].kind, ProblemKind::LimitExceeded);
}

#[test]
fn legacy_ir_v7_layers_are_not_judged_by_the_opset_table() {
    let xml = "<net name=\"old\" version=\"7\" batch=\"1\"><layers><layer id=\"0\" name=\"i\" type=\"Input\" precision=\"FP32\"/><layer id=\"1\" name=\"s\" type=\"ScaleShift\"/></layers></net>";
    let (f, p) = parse(xml.as_bytes());
    assert!(p.is_empty(), "{p:?}");
    assert_eq!(f.layers, 2);
}

#[test]
fn problems_are_capped_and_facts_still_count_everything() {
    let layers: String = (0..1000)
        .map(|i| format!("<layer id=\"{i}\" name=\"c{i}\" type=\"Custom{i}\" version=\"ext\"/>"))
        .collect();
    let xml = format!("<net version=\"11\"><layers>{layers}</layers></net>");
    let (f, p) = parse(xml.as_bytes());
    assert_eq!(f.layers, 1000);
    assert_eq!(p.len(), MAX_PROBLEMS + 1);
    assert_eq!(p[MAX_PROBLEMS].code, "problems-capped");
    assert_eq!(f.custom_layers.len(), MAX_LISTED + 1);
    assert_eq!(f.custom_layers[MAX_LISTED], "... and 744 more");
}

#[test]
fn issue_40_serializer_spellings_of_relu_prelu_and_softmax_are_standard() {
    // The layer lines as openvino 2024.6's `ov.save_model` wrote them (scripts/format-samples.sh):
    // the serializer spells `Relu`, `PRelu` and `Softmax` as `ReLU`, `PReLU` and `SoftMax`.
    let xml = ir(
        r#"<layer id="8" name="Relu_8" type="ReLU" version="opset1" />
		<layer id="9" name="PRelu_9" type="PReLU" version="opset1" />
		<layer id="11" name="Softmax_11" type="SoftMax" version="opset1" />
		<layer id="12" name="Softmax_12" type="SoftMax" version="opset8" />
		<layer id="13" name="Relu_13" type="Relu" version="opset1" />"#,
        "",
    );
    let (f, p) = parse(xml.as_bytes());
    assert!(p.is_empty(), "{p:?}");
    assert!(f.custom_layers.is_empty());
    assert_eq!(f.op_types["SoftMax"], 2);
    // A near miss is still no opset's type.
    let (_, p) = parse(
        ir(
            r#"<layer id="8" name="r" type="RELU" version="opset1" />"#,
            "",
        )
        .as_bytes(),
    );
    assert_eq!(codes(&p), ["custom-layer"]);
}

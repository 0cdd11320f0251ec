//! Chat templates wherever a Hugging Face folder ships them (issue 40): `chat_template` in
//! `tokenizer_config.json` (a string or named templates), `chat_template.json`, processor configs
//! and `*.jinja` files, all judged by the GGUF template judge (FMT005); included from
//! integration.rs.

use crate::support::*;
use serde_json::Value;

/// A Llama 3.1-style template with tools: `namespace`, a macro, loops, `tojson`,
/// `raise_exception` and `strftime_now`, everything ordinary templates use.
const BENIGN: &str = r#"{%- macro render(m) -%}{{ m['content'] | trim }}{%- endmacro -%}
{%- set ns = namespace(system='', found=false) -%}
{%- if not date_string is defined -%}{%- set date_string = strftime_now('%d %b %Y') -%}{%- endif -%}
{%- for message in messages -%}
  {%- if message['role'] == 'system' -%}{%- set ns.system = message['content'] -%}{%- set ns.found = true -%}
  {%- elif message['role'] not in ['user', 'assistant', 'tool'] -%}{{ raise_exception('unknown role ' ~ message['role']) }}
  {%- endif -%}
{%- endfor -%}
{{ bos_token }}<|start_header_id|>system<|end_header_id|>
Today Date: {{ date_string }}
{%- if tools is not none %}
{%- for t in tools %}{{ t | tojson(indent=4) }}
{% endfor %}{%- endif %}{{ ns.system }}<|eot_id|>
{%- for message in messages if message['role'] != 'system' -%}
<|start_header_id|>{{ message['role'] }}<|end_header_id|>

{{ render(message) }}<|eot_id|>
{%- if message.tool_calls is defined %}{% for call in message.tool_calls %}{"name": "{{ call.function.name }}", "parameters": {{ call.function.arguments | tojson }}}{% endfor %}{% endif %}
{%- endfor -%}
{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>

{% endif %}"#;

/// Published server-side template injection payloads (CVE-2024-34359 and the Jinja sandbox
/// escapes it builds on), one per carrier.
const CYCLER: &str = "{% for m in messages %}{{ m.content }}\n{{ cycler.__init__.__globals__.os.popen('id').read() }}{% endfor %}";
const SUBCLASSES: &str = "{{ ''.__class__.__mro__[1].__subclasses__() }}";
const LIPSUM: &str = "{{ bos_token }}\n{{ lipsum.__globals__['os'].popen('id').read() }}";
const REQUEST: &str =
    "{{ request.application.__globals__.__builtins__.__import__('os').popen('id').read() }}";
const ATTR: &str = "{{ messages|attr('\\x5f\\x5fclass\\x5f\\x5f')|attr(['__mr','o__']|join) }}";

/// Every carrier, with the file, the template's name and what it holds.
fn carriers(payload: &dyn Fn(usize) -> &'static str) -> Vec<(String, String, &'static str)> {
    vec![
        (
            "string/tokenizer_config.json".into(),
            tokenizer_config_with_template(payload(1)),
            "default",
        ),
        (
            "named/tokenizer_config.json".into(),
            tokenizer_config_with_named_templates(&[("default", BENIGN), ("tool_use", payload(0))]),
            "tool_use",
        ),
        (
            "jinja/chat_template.jinja".into(),
            payload(2).into(),
            "default",
        ),
        (
            "jinja/additional_chat_templates/rag.jinja".into(),
            payload(4).into(),
            "rag",
        ),
        (
            "json/chat_template.json".into(),
            chat_template_json(payload(3), &[]),
            "default",
        ),
        (
            "processor/processor_config.json".into(),
            chat_template_json(payload(0), &[("processor_class", "LlavaProcessor")]),
            "default",
        ),
        (
            "preprocessor/preprocessor_config.json".into(),
            chat_template_json(
                payload(4),
                &[("image_processor_type", "CLIPImageProcessor")],
            ),
            "default",
        ),
    ]
}

fn build(files: &[(String, String, &'static str)]) -> Repo {
    let repo = Repo::new();
    for (path, content, _) in files {
        repo.file(path, content);
    }
    repo
}

#[test]
fn ssti_payloads_are_denied_in_every_carrier_naming_file_and_template() {
    let payloads = [CYCLER, SUBCLASSES, LIPSUM, REQUEST, ATTR];
    let files = carriers(&|i| payloads[i]);
    let repo = build(&files);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    for (path, _, name) in &files {
        let hits: Vec<&Value> = findings(&r, "FMT005")
            .into_iter()
            .filter(|f| f["path"] == path.as_str())
            .collect();
        assert!(
            !hits.is_empty(),
            "{path}: no FMT005 in {:?}",
            rules_on(&r, path)
        );
        let file_name = path.rsplit('/').next().unwrap();
        for f in hits {
            assert_eq!(f["action"], "deny", "{path}");
            assert_eq!(f["evidence"]["template"], *name, "{path}");
            assert_eq!(f["evidence"]["problem"], "template-suspicious", "{path}");
            let message = f["message"].as_str().unwrap();
            assert!(message.contains(&format!("'{name}'")), "{message}");
            if file_name.ends_with(".json") {
                assert!(message.contains(path.as_str()), "{message}");
            }
            assert!(f["evidence"]["line"].as_str().is_some(), "{path}");
        }
    }
    // The list's second template is the payload (the cycler one), on its second line.
    let named = findings(&r, "FMT005")
        .into_iter()
        .find(|f| f["path"] == "named/tokenizer_config.json")
        .unwrap();
    assert_eq!(named["evidence"]["field"], "chat_template[1]");
    assert_eq!(named["evidence"]["line"], "2");
    // Recognised as chat templates in the report (and so in the SBOM).
    let jinja = file(&r, "jinja/chat_template.jinja");
    assert_eq!(jinja["format"], "jinja");
    assert_eq!(jinja["kind"], "tokenizer");
    assert_eq!(
        jinja["facts"]["chat_templates"],
        serde_json::json!(["default"])
    );
    assert_eq!(
        file(&r, "named/tokenizer_config.json")["facts"]["chat_templates"],
        serde_json::json!(["default", "tool_use"])
    );
}

#[test]
fn benign_twins_pass_in_every_carrier() {
    let files = carriers(&|_| BENIGN);
    let repo = build(&files);
    let (code, r) = scan_json(repo.path(), &[]);
    assert!(
        findings(&r, "FMT005").is_empty(),
        "{:?}",
        findings(&r, "FMT005")
    );
    assert_eq!(code, 0, "{}", r["findings"]);
    assert_eq!(
        file(&r, "jinja/additional_chat_templates/rag.jinja")["facts"]["chat_templates"],
        serde_json::json!(["rag"])
    );
}

#[test]
fn an_oversized_jinja_is_judged_up_to_the_cap_and_said() {
    let mut big = BENIGN.to_string();
    while big.len() <= 1 << 20 {
        big.push_str("{# padding #}");
    }
    big.push_str("{{ lipsum.__globals__ }}");
    let repo = Repo::new();
    repo.file("chat_template.jinja", &big);
    let (_, r) = scan_json(repo.path(), &[]);
    let rules = rules_on(&r, "chat_template.jinja");
    assert_eq!(rules, ["SCAN004"], "{rules:?}");
}

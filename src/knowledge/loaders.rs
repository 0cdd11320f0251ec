//! What the loaders of the ecosystem follow in a model's config files to fetch or import code
//! (issue 39). Data only, each group with the loader code it was read from; the walker that
//! applies it is `provenance::loader_code`.
//!
//! | loader | file | field | what the loader does |
//! |---|---|---|---|
//! | transformers | any config (`config.json`, `tokenizer_config.json`, `processor_config.json`, `preprocessor_config.json`, ...) at any depth | `auto_map` | `get_class_from_dynamic_module`: `module.Class` from this repository, `org/repo--module.Class` from another (under `trust_remote_code`; sub-configs too, through `AutoModel.from_config(config.text_config, trust_remote_code=...)`) |
//! | transformers | `config.json` | `custom_pipelines.<task>.impl` | the same, for `pipeline()` |
//! | transformers 4.56-5.2 | `config.json`, any sub-config | `attn_implementation`, `_attn_implementation`, `_attn_implementation_internal` | a value shaped `org/repo[@rev][:kernel]` (`is_kernel`) is downloaded from the Hub and imported by `kernels` on a plain `from_pretrained`, without `trust_remote_code` (CVE-2026-4372; 5.3 adds `allow_all_kernels`) |
//! | transformers 5.x (LightGlue) | `config.json` | `trust_remote_code` + a sub-config's `_name_or_path` | `AutoConfig.from_pretrained(sub["_name_or_path"], trust_remote_code=self.trust_remote_code)`: the config itself turns remote code on for another repository (CVE-2026-5241) |
//! | transformers >= 4.54 | the repository | `custom_generate/generate.py` | replaces `generate` under `trust_remote_code` (a file, not a field: judged as model code) |
//! | diffusers | `model_index.json` | `<component>: [library, class]` | a diffusers pipeline module or a loadable library (no code of the repository); `<component>/<library>.py` in the repository (custom component, dynamic module); otherwise `importlib.import_module(library)` (`get_class_obj_and_candidates`) |
//! | diffusers | `model_index.json` | `_class_name: [file, class]` | `custom_pipeline = file`: `file.py` of the repository, else a Hub repository's `pipeline.py` (`org/repo`) or a community pipeline fetched from the diffusers mirror (a bare name) (`_get_custom_pipeline_class`, `get_cached_module_file`) |
//! | sentence-transformers | `modules.json` | `[i].type` | `sentence_transformers.*` imported; anything else through `get_class_from_dynamic_module` (this repository's `module.py`, or `org/repo--module.Class`) under `trust_remote_code`, else `import_from_string` (`_load_module_class_from_ref`) |
//! | PEFT | `adapter_config.json` | `auto_mapping.parent_library` + `base_model_class` | `importlib.import_module(parent_library)`; `transformers_modules.<org>.<repo>...` is the base model's remote code (`AutoPeftModel.from_pretrained`) |
//! | ModelScope | `configuration.json` | `plugins` | `register_plugins_repo`: pip-installs the named packages and imports them |
//! | ModelScope | `configuration.json` | `allow_remote: true` | `register_modelhub_repo`: imports the Python modules of the model directory |
//!
//! Read and found *not* to be followed (so no finding): timm's `pretrained_cfg.hf_hub_id`
//! (`timm/models/_hub.py`: `load_model_config_from_hf` overwrites it with the repository being
//! loaded, and a local directory loads from `file`); PEFT's `base_model_name_or_path` (weights,
//! and code only when the caller passes `trust_remote_code`, which SRC002 reports);
//! sentence-transformers' `trust_remote_code` inside `sentence_bert_config.json` arguments
//! (`Transformer.load` drops it); diffusers' `custom_pipeline` (a `from_pretrained` argument,
//! never read from `model_index.json`).

/// Keys whose string value transformers takes as the attention implementation
/// (`configuration_utils.PretrainedConfig.__init__` pops `attn_implementation` into
/// `_attn_implementation_internal`; the other two are set as attributes, the second through the
/// property setter).
pub const ATTENTION_FIELDS: &[&str] = &[
    "attn_implementation",
    "_attn_implementation",
    "_attn_implementation_internal",
];

/// The advisory for attention kernels fetched from the Hub.
pub const KERNEL_REFERENCES: &[&str] = &["CVE-2026-4372"];

/// The advisory for a config that turns `trust_remote_code` on for a nested load.
pub const NESTED_TRUST_REFERENCES: &[&str] = &["CVE-2026-5241"];

/// Config files a loader reads by name. A file of one of these names over the size limit is a
/// finding (it could pad a field out of reach), and it is always parsed.
pub const LOADER_CONFIG_NAMES: &[&str] = &[
    "config.json",
    "tokenizer_config.json",
    "processor_config.json",
    "preprocessor_config.json",
    "video_preprocessor_config.json",
    "feature_extractor_config.json",
    "image_processor_config.json",
    "generation_config.json",
    "model_index.json",
    "modular_model_index.json",
    "modules.json",
    "adapter_config.json",
    "configuration.json",
];

/// Words without which a JSON file of another name cannot hold a loader field (its bytes are
/// searched before it is parsed; a `\u` escape can spell any of them, so it counts too).
pub const LOADER_FIELD_NEEDLES: &[&[u8]] = &[
    b"auto_map",
    b"custom_pipelines",
    b"attn_implementation",
    b"trust_remote_code",
    b"\\u",
];

/// `model_index.json` libraries diffusers loads without code of the repository:
/// `LOADABLE_CLASSES` (`diffusers/pipelines/pipeline_loading_utils.py`).
pub const DIFFUSERS_LIBRARIES: &[&str] = &["diffusers", "transformers", "onnxruntime.training"];

/// `model_index.json` libraries that are diffusers pipeline modules (`hasattr(pipelines,
/// library)`): the sub-packages of `src/diffusers/pipelines/` and `pipelines/deprecated/` at
/// huggingface/diffusers 58eb52c (2026-08), which older model indexes name too.
pub const DIFFUSERS_PIPELINE_MODULES: &[&str] = &[
    "ace_step",
    "allegro",
    "alt_diffusion",
    "amused",
    "animatediff",
    "anyflow",
    "audio_diffusion",
    "audioldm",
    "audioldm2",
    "aura_flow",
    "blip_diffusion",
    "bria",
    "bria_fibo",
    "chroma",
    "chronoedit",
    "cogvideo",
    "cogview3",
    "cogview4",
    "consisid",
    "consistency_models",
    "controlnet",
    "controlnet_hunyuandit",
    "controlnet_sd3",
    "controlnet_xs",
    "cosmos",
    "dance_diffusion",
    "ddim",
    "ddpm",
    "deepfloyd_if",
    "diffusion_gemma",
    "dit",
    "dreamlite",
    "easyanimate",
    "ernie_image",
    "flux",
    "flux2",
    "glm_image",
    "helios",
    "hidream_image",
    "hunyuan_image",
    "hunyuan_video",
    "hunyuan_video1_5",
    "hunyuandit",
    "i2vgen_xl",
    "ideogram4",
    "joyimage",
    "kandinsky",
    "kandinsky2_2",
    "kandinsky3",
    "kandinsky5",
    "kolors",
    "krea2",
    "latent_consistency_models",
    "latent_diffusion",
    "latent_diffusion_uncond",
    "latte",
    "ledits_pp",
    "llada2",
    "longcat_audio_dit",
    "longcat_image",
    "ltx",
    "ltx2",
    "lucy",
    "lumina",
    "lumina2",
    "marigold",
    "mochi",
    "motif_video",
    "musicldm",
    "nucleusmoe_image",
    "omnigen",
    "ovis_image",
    "pag",
    "paint_by_example",
    "pia",
    "pixart_alpha",
    "pndm",
    "prx",
    "qwenimage",
    "repaint",
    "sana",
    "sana_video",
    "score_sde_ve",
    "semantic_stable_diffusion",
    "shap_e",
    "skyreels_v2",
    "spectrogram_diffusion",
    "stable_audio",
    "stable_audio_3",
    "stable_cascade",
    "stable_diffusion",
    "stable_diffusion_3",
    "stable_diffusion_attend_and_excite",
    "stable_diffusion_diffedit",
    "stable_diffusion_gligen",
    "stable_diffusion_ldm3d",
    "stable_diffusion_panorama",
    "stable_diffusion_safe",
    "stable_diffusion_sag",
    "stable_diffusion_variants",
    "stable_diffusion_xl",
    "stable_video_diffusion",
    "stochastic_karras_ve",
    "t2i_adapter",
    "text_to_video_synthesis",
    "unclip",
    "unidiffuser",
    "versatile_diffusion",
    "visualcloze",
    "vq_diffusion",
    "wan",
    "wuerstchen",
    "z_image",
];

/// Top-level packages whose classes a config may name for import (a sentence-transformers module
/// `type`, a PEFT `parent_library`, a diffusers library): installed library code that the config
/// only selects from, not code it brings. A dangerous name among them is still judged by the
/// pickle tables first.
pub const LIBRARY_ROOTS: &[&str] = &[
    "diffusers",
    "transformers",
    "sentence_transformers",
    "peft",
    "timm",
    "open_clip",
    "onnxruntime",
    "optimum",
];

/// The package transformers puts the dynamic modules of remote code under (`HF_MODULES_CACHE`,
/// `transformers_modules.<org>.<repo>.<commit>.<module>`).
pub const DYNAMIC_MODULES_ROOT: &str = "transformers_modules";

/// True when `module`'s top-level package is one of [`LIBRARY_ROOTS`].
pub fn is_library_module(module: &str) -> bool {
    let root = module.split('.').next().unwrap_or_default();
    LIBRARY_ROOTS.contains(&root)
}

/// True when a `model_index.json` library names no code of the repository or another.
pub fn is_diffusers_library(library: &str) -> bool {
    DIFFUSERS_LIBRARIES.contains(&library) || DIFFUSERS_PIPELINE_MODULES.contains(&library)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_where_searched_and_free_of_duplicates() {
        let mut sorted = DIFFUSERS_PIPELINE_MODULES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, DIFFUSERS_PIPELINE_MODULES);
    }

    #[test]
    fn library_modules_are_matched_by_their_root_package() {
        assert!(is_library_module(
            "transformers.models.llama.modeling_llama"
        ));
        assert!(is_library_module("sentence_transformers"));
        assert!(!is_library_module(
            "transformers_modules.org.repo.abc.modeling_x"
        ));
        assert!(!is_library_module("transformersx.evil"));
        assert!(is_diffusers_library("stable_diffusion"));
        assert!(!is_diffusers_library("my_unet"));
    }
}

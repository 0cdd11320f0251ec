//! Judged by what the name says (issue 32): for a called global the tables do not know, the
//! last part of its name says what calling it does.

use super::names::{self, normalize_module};

// ---- issue 32: judged by what the name says ----
// For a *called* global the tables do not know, the last part of its name says what calling
// it does. Sources: the issue-32 gadget round (third-party loaders and executors named
// `load_dataset`, `instantiate`, `system`, `getoutput`, `load_model`, `loads`, `write_file`,
// `from_pretrained`); CPython's own verbs (`os.system`, `subprocess.getoutput`, `runpy.run_path`,
// `shutil.rmtree`, `urllib.request.urlopen`); GuardDog's and Bandit's call-name heuristics.
// Checked against what real torch, numpy, pandas, scikit-learn, joblib and gensim pickles call
// (rebuilders, constructors, `_reconstruct`, `_unpickle_block`, `call_on_class_only`, ...):
// none of those has these shapes, and `scripts/real-world.sh` stays at 0 denies.

/// Whole names (leading underscores dropped) that say the call runs, loads, writes or deletes.
pub(super) const VERB_NAMES: &[(&str, &str)] = &[
    ("loads", "deserialises bytes"),
    ("read_pickle", "deserialises a pickle file"),
    (
        "from_pretrained",
        "loads a model (and its remote code when allowed)",
    ),
    ("system", "runs a shell command"),
    ("getoutput", "runs a shell command"),
    ("getstatusoutput", "runs a shell command"),
    ("check_output", "runs a command"),
    ("check_call", "runs a command"),
    ("call", "calls a configured callable or runs a command"),
    ("urlopen", "opens a url"),
    ("urlretrieve", "downloads a url"),
    ("remove", "deletes a file"),
    ("unlink", "deletes a file"),
    ("rmtree", "deletes a directory tree"),
    ("rmdir", "deletes a directory"),
    ("removedirs", "deletes directories"),
    ("run", "runs code or a command"),
    ("runctx", "runs code"),
    ("runcall", "runs code"),
    ("runcode", "runs code"),
    ("runsource", "runs code"),
    ("runeval", "runs code"),
];

/// First words (the name split at `_`, leading underscores dropped) that say the same, as
/// prefixes: `load_model`, `loadtxt`, `exec_module`, `evaluate`, `spawnv`, `download_url`,
/// `write_file`, `popen2`, `instantiate_from_config`, `deserialize_model`, `install_package`,
/// `run_path`, `save_pretrained`.
pub(super) const VERB_PREFIXES: &[(&str, &str)] = &[
    ("load", "loads a file, model or pickle"),
    ("exec", "executes code"),
    ("eval", "evaluates code"),
    ("spawn", "spawns a process"),
    ("popen", "runs a command"),
    ("download", "downloads files"),
    ("write", "writes a file"),
    ("instantiate", "imports and calls a configured callable"),
    ("deserializ", "deserialises data"),
    ("deserialis", "deserialises data"),
    ("install", "installs packages"),
];

/// First words that count only as whole words (`run_path`, but not `runtime_checkable`).
pub(super) const VERB_WORDS: &[(&str, &str)] = &[("run", "runs code or a command")];

/// Any word of the name: `hf_hub_download`, `snapshot_download`, `safe_load`, `pl_load`,
/// `torch_load`, `cached_download`.
pub(super) const VERB_ANY_WORD: &[(&str, &str)] = &[
    ("download", "downloads files"),
    ("load", "loads a file, model or pickle"),
    ("loads", "deserialises bytes"),
];

/// Issue 32: what a called global's name says it does, for a global the tables do not know:
/// `Some(reason)` when its last name part loads, deserialises, executes, spawns, installs,
/// downloads, writes, deletes or instantiates (see `VERB_NAMES`, `VERB_PREFIXES`,
/// `VERB_ANY_WORD`), or is `main` of a packaging tool. Class names (a capital first letter)
/// are constructors and never match.
pub fn judge_by_name(module: &str, name: &str) -> Option<&'static str> {
    let module = normalize_module(module);
    let last = name.rsplit('.').next().unwrap_or(name);
    let bare = last.trim_start_matches('_');
    if !bare.starts_with(|c: char| c.is_ascii_lowercase()) {
        return None;
    }
    if bare == "main" {
        let top = module.split('.').next().unwrap_or(&module);
        return names::is_installer(top)
            .then_some("is a packaging tool's entry point (installs or builds)");
    }
    if let Some((_, why)) = VERB_NAMES.iter().find(|(n, _)| *n == bare) {
        return Some(why);
    }
    if bare.ends_with("from_pretrained") || bare == "from_config" {
        return Some("loads a model (and its remote code when allowed)");
    }
    let mut words = bare.split('_').filter(|w| !w.is_empty());
    let first = words.next().unwrap_or(bare);
    if let Some((_, why)) = VERB_PREFIXES.iter().find(|(p, _)| first.starts_with(p)) {
        return Some(why);
    }
    if let Some((_, why)) = VERB_WORDS.iter().find(|(w, _)| *w == first) {
        return Some(why);
    }
    bare.split('_').find_map(|w| {
        VERB_ANY_WORD
            .iter()
            .find(|(v, _)| w == *v || (*v == "download" && w.starts_with(v)))
            .map(|(_, why)| *why)
    })
}

/// The category [`judge_by_name`] verdicts carry.
pub const JUDGED_BY_NAME: &str = "judged-by-name";

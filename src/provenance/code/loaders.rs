//! Calls that deserialize with a code-executing loader: `torch.load` without `weights_only`,
//! `pickle`/`dill`/`joblib` loads, `np.load(allow_pickle=True)`, `yaml.load` with an unsafe loader.

use super::Callee::{self, EndsWith, Name, Product};
use super::{Args, Scanner, Watched, dispatch};

/// Loader classes that PyYAML documents as safe.
const YAML_SAFE_LOADERS: &[&str] = &["SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"];

/// Calls that load a native library into the process (its initialisers run on load).
const NATIVE_LIBRARY_LOADERS: &[Callee] = &[
    Name("torch.ops.load_library"),
    Name("torch.classes.load_library"),
    Name("tensorflow.load_library"),
    Name("tensorflow.load_op_library"),
    Name("tf.load_library"),
    Name("tf.load_op_library"),
    Name("ctypes.CDLL"),
    Name("ctypes.PyDLL"),
    Name("ctypes.WinDLL"),
    Name("ctypes.OleDLL"),
    Name("ctypes.cdll.LoadLibrary"),
    Name("ctypes.pydll.LoadLibrary"),
    Name("ctypes.windll.LoadLibrary"),
    Name("ctypes.oledll.LoadLibrary"),
];

/// Hydra's entry points that import (and mostly call) a dotted name taken from a config.
const HYDRA_INSTANTIATORS: &[Callee] = &[
    Name("hydra.utils.instantiate"),
    Name("hydra.utils.call"),
    Name("hydra.utils.get_method"),
    Name("hydra.utils.get_class"),
    Name("hydra.utils.get_object"),
];

/// Modules whose `load`/`loads`/`Unpickler` unpickle, which runs arbitrary callables.
const PICKLE_MODULES: &[&str] = &["pickle", "cPickle", "_pickle", "dill", "cloudpickle"];

/// The code-executing loaders, each handled by its own arm of [`Scanner::unsafe_load`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loader {
    Torch,
    Pickle,
    Joblib,
    Numpy,
    Pandas,
    KerasLoadModel,
    KerasUnsafeDeserialization,
    TorchJit,
    NativeLibrary,
    YamlFullLoad,
    Hydra,
    YamlUnsafeLoad,
    YamlLoad,
    Marshal,
    Shelve,
    TorchHub,
}

/// The loader calls, in dispatch order (the first row whose callee matches decides). The
/// pre-filter is built from this table: a callee or keyword added here is let through
/// automatically.
pub(super) const LOADS: &[Watched<Loader>] = &[
    row(&[Name("torch.load")], &[], Loader::Torch),
    row(
        &[Product(PICKLE_MODULES, &["load", "loads", "Unpickler"])],
        &[],
        Loader::Pickle,
    ),
    row(
        &[Name("joblib.load"), EndsWith(".joblib.load")],
        &[],
        Loader::Joblib,
    ),
    // Only `allow_pickle=` (true or unknown) makes numpy unpickle.
    row(&[Name("numpy.load")], &["allow_pickle"], Loader::Numpy),
    row(&[Name("pandas.read_pickle")], &[], Loader::Pandas),
    row(
        &[
            EndsWith("keras.models.load_model"),
            EndsWith("keras.saving.load_model"),
        ],
        &["safe_mode", "custom_objects"],
        Loader::KerasLoadModel,
    ),
    row(
        &[EndsWith("keras.config.enable_unsafe_deserialization")],
        &[],
        Loader::KerasUnsafeDeserialization,
    ),
    row(&[Name("torch.jit.load")], &[], Loader::TorchJit),
    row(NATIVE_LIBRARY_LOADERS, &[], Loader::NativeLibrary),
    row(
        &[Name("yaml.full_load"), Name("yaml.full_load_all")],
        &[],
        Loader::YamlFullLoad,
    ),
    row(HYDRA_INSTANTIATORS, &[], Loader::Hydra),
    row(
        &[Name("yaml.unsafe_load"), Name("yaml.unsafe_load_all")],
        &[],
        Loader::YamlUnsafeLoad,
    ),
    row(
        &[Name("yaml.load"), Name("yaml.load_all")],
        &[],
        Loader::YamlLoad,
    ),
    row(
        &[Name("marshal.load"), Name("marshal.loads")],
        &[],
        Loader::Marshal,
    ),
    row(&[Name("shelve.open")], &[], Loader::Shelve),
    row(&[Name("torch.hub.load")], &[], Loader::TorchHub),
];

const fn row(
    callees: &'static [Callee],
    keywords: &'static [&'static str],
    kind: Loader,
) -> Watched<Loader> {
    Watched {
        callees,
        keywords,
        kind,
    }
}

impl<'s> Scanner<'s, '_> {
    pub(super) fn unsafe_load(
        &self,
        names: &[String],
        args: &Args<'s>,
        callee: &str,
    ) -> Option<(&'static str, String)> {
        let kind = dispatch(LOADS, names, args)?;
        let callee = self.excerpt(callee);
        match kind {
            Loader::Torch => {
                let Some(value) = args.keyword("weights_only") else {
                    if args.splat.is_some() {
                        return Some((
                            "torch-load-weights-only-unverifiable",
                            format!(
                                "{callee} passes **kwargs; weights_only=True cannot be verified"
                            ),
                        ));
                    }
                    return Some((
                        "torch-load-no-weights-only",
                        format!(
                            "{callee} without weights_only=True unpickles arbitrary objects on \
                             torch < 2.6 (the default became True in 2.6)"
                        ),
                    ));
                };
                match self.bool_value(value) {
                    Some(true) => None,
                    Some(false) => Some((
                        "torch-load-weights-only-false",
                        format!(
                            "{callee} with weights_only=False unpickles arbitrary objects on \
                             every torch version"
                        ),
                    )),
                    None => Some((
                        "torch-load-weights-only-unverifiable",
                        format!(
                            "{callee} with weights_only={} cannot be verified",
                            self.excerpt(self.text(value))
                        ),
                    )),
                }
            }
            Loader::Pickle => Some((
                "pickle-load",
                format!("{callee} unpickles data, which can run arbitrary code"),
            )),
            Loader::Joblib => Some((
                "joblib-load",
                format!("{callee} unpickles data, which can run arbitrary code"),
            )),
            Loader::Numpy => {
                let value = args.keyword("allow_pickle")?;
                match self.bool_value(value) {
                    Some(false) => None,
                    Some(true) => Some((
                        "numpy-allow-pickle",
                        format!("{callee} with allow_pickle=True unpickles object arrays"),
                    )),
                    None => Some((
                        "numpy-allow-pickle",
                        format!(
                            "{callee} with allow_pickle={} may unpickle object arrays",
                            self.excerpt(self.text(value))
                        ),
                    )),
                }
            }
            Loader::Pandas => Some((
                "pandas-read-pickle",
                format!("{callee} unpickles data, which can run arbitrary code"),
            )),
            Loader::KerasLoadModel => {
                if let Some(value) = args.keyword("safe_mode")
                    && self.bool_value(value) != Some(true)
                {
                    return Some((
                        "keras-unsafe-mode",
                        format!(
                            "{callee} with safe_mode={} deserializes lambda layers (arbitrary \
                             code)",
                            self.excerpt(self.text(value))
                        ),
                    ));
                }
                if args.keyword("custom_objects").is_some() {
                    return Some((
                        "keras-custom-objects",
                        format!(
                            "{callee} with custom_objects= lets the file's config pick which of \
                             these classes to build and with what arguments; review them as \
                             code the model runs"
                        ),
                    ));
                }
                None
            }
            Loader::KerasUnsafeDeserialization => Some((
                "keras-unsafe-deserialization",
                format!(
                    "{callee} turns off Keras safe mode for every later load in the process: \
                     lambda layers in any loaded file run arbitrary code"
                ),
            )),
            Loader::TorchJit => Some((
                "torch-jit-load",
                format!(
                    "{callee} deserializes a TorchScript archive whose code/ runs when the model \
                     is called; load only archives whose code was reviewed"
                ),
            )),
            Loader::NativeLibrary => Some((
                "native-library-load",
                format!("{callee} loads a native library, which runs its code on load"),
            )),
            Loader::YamlFullLoad => Some((
                "yaml-full-load",
                format!(
                    "{callee} uses FullLoader, which constructs python objects on pyyaml < 5.4 \
                     (CVE-2020-1747, CVE-2020-14343); use yaml.safe_load"
                ),
            )),
            Loader::Hydra => Some((
                "hydra-instantiate",
                format!(
                    "{callee} imports and calls the dotted name in a config's `_target_`; a \
                     config shipped with a model chooses what runs (CVE-2025-23304)"
                ),
            )),
            Loader::YamlUnsafeLoad => Some((
                "yaml-unsafe-loader",
                format!("{callee} constructs arbitrary python objects"),
            )),
            Loader::YamlLoad => {
                let Some(loader) = args.arg(1, &["Loader"]) else {
                    return Some((
                        "yaml-load-no-safe-loader",
                        format!(
                            "{callee} without Loader= used the unsafe loader before pyyaml 5.1; \
                             pass Loader=yaml.SafeLoader or use yaml.safe_load"
                        ),
                    ));
                };
                let text = self.text(loader);
                let last = text.rsplit('.').next().unwrap_or_default().trim();
                if YAML_SAFE_LOADERS.contains(&last) {
                    return None;
                }
                Some((
                    "yaml-unsafe-loader",
                    format!(
                        "{callee} with Loader={} may construct arbitrary python objects",
                        self.excerpt(text)
                    ),
                ))
            }
            Loader::Marshal => Some((
                "marshal-load",
                format!("{callee} reads code objects from data"),
            )),
            Loader::Shelve => Some((
                "shelve-open",
                format!("{callee} unpickles every value it reads"),
            )),
            // torch.hub.load imports hubconf.py from the fetched repository: remote code by
            // design.
            Loader::TorchHub => (!self.is_local_source(args)).then(|| {
                (
                    "torch-hub-load",
                    format!("{callee} imports and runs hubconf.py from the downloaded repository"),
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    #[test]
    fn flags_torch_load_by_weights_only() {
        assert_eq!(
            unsafe_codes("import torch\ntorch.load(p)"),
            vec!["torch-load-no-weights-only"]
        );
        assert_eq!(
            unsafe_codes("torch.load(p, weights_only=False)"),
            vec!["torch-load-weights-only-false"]
        );
        assert!(unsafe_codes("torch.load(p, map_location='cpu', weights_only=True)").is_empty());
        assert!(unsafe_codes("SAFE = True\ntorch.load(p, weights_only=SAFE)").is_empty());
        assert_eq!(
            unsafe_codes("torch.load(p, weights_only=flag)"),
            vec!["torch-load-weights-only-unverifiable"]
        );
        assert_eq!(
            unsafe_codes("torch.load(p, **kw)"),
            vec!["torch-load-weights-only-unverifiable"]
        );
    }

    #[test]
    fn flags_each_unsafe_loader() {
        let cases: &[(&str, &str)] = &[
            ("import pickle\npickle.load(f)", "pickle-load"),
            ("import pickle\npickle.loads(b)", "pickle-load"),
            ("import cPickle\ncPickle.load(f)", "pickle-load"),
            ("import _pickle\n_pickle.Unpickler(f).load()", "pickle-load"),
            ("import dill\ndill.loads(b)", "pickle-load"),
            ("import cloudpickle\ncloudpickle.load(f)", "pickle-load"),
            ("import joblib\njoblib.load('m.joblib')", "joblib-load"),
            (
                "from sklearn.externals import joblib\njoblib.load(p)",
                "joblib-load",
            ),
            (
                "import numpy as np\nnp.load(p, allow_pickle=True)",
                "numpy-allow-pickle",
            ),
            ("numpy.load(p, allow_pickle=flag)", "numpy-allow-pickle"),
            (
                "import pandas as pd\npd.read_pickle(p)",
                "pandas-read-pickle",
            ),
            (
                "from tensorflow import keras\nkeras.models.load_model(p, safe_mode=False)",
                "keras-unsafe-mode",
            ),
            (
                "import tf_keras\ntf.keras.models.load_model(p, safe_mode=False)",
                "keras-unsafe-mode",
            ),
            ("import yaml\nyaml.load(s)", "yaml-load-no-safe-loader"),
            (
                "import yaml\nyaml.load(s, Loader=yaml.Loader)",
                "yaml-unsafe-loader",
            ),
            ("import yaml\nyaml.unsafe_load(s)", "yaml-unsafe-loader"),
            ("import marshal\nmarshal.loads(b)", "marshal-load"),
            ("import shelve\nshelve.open('db')", "shelve-open"),
        ];
        for (src, code) in cases {
            assert_eq!(unsafe_codes(src), vec![*code], "{src}");
        }
        for safe in [
            "np.load(p)",
            "np.load(p, allow_pickle=False)",
            "yaml.load(s, Loader=yaml.SafeLoader)",
            "yaml.load(s, yaml.CSafeLoader)",
            "yaml.safe_load(s)",
            "keras.models.load_model(p)",
            "json.load(f)",
            "load(f)",
        ] {
            assert!(unsafe_codes(safe).is_empty(), "{safe}");
        }
    }

    #[test]
    fn flags_the_2025_loader_patterns_and_not_their_safe_spellings_or_mentions() {
        let cases: &[(&str, &str)] = &[
            (
                "import keras\nkeras.config.enable_unsafe_deserialization()",
                "keras-unsafe-deserialization",
            ),
            (
                "import tensorflow as tf\ntf.keras.config.enable_unsafe_deserialization()",
                "keras-unsafe-deserialization",
            ),
            (
                "import keras\nkeras.models.load_model('m.keras', custom_objects={'L': L})",
                "keras-custom-objects",
            ),
            ("import torch\ntorch.jit.load('m.pt')", "torch-jit-load"),
            (
                "import torch\ntorch.ops.load_library('ops.so')",
                "native-library-load",
            ),
            (
                "import torch\ntorch.classes.load_library('c.so')",
                "native-library-load",
            ),
            (
                "import tensorflow as tf\ntf.load_op_library('op.so')",
                "native-library-load",
            ),
            (
                "import ctypes\nctypes.CDLL('./libx.so')",
                "native-library-load",
            ),
            (
                "from ctypes import cdll\ncdll.LoadLibrary('libx.so')",
                "native-library-load",
            ),
            ("import yaml\nyaml.full_load(s)", "yaml-full-load"),
            (
                "from hydra.utils import instantiate\ninstantiate(cfg.model)",
                "hydra-instantiate",
            ),
            (
                "import hydra\nhydra.utils.call(cfg.fn)",
                "hydra-instantiate",
            ),
            (
                "from hydra.utils import get_method\nget_method(cfg.f)",
                "hydra-instantiate",
            ),
        ];
        for (src, code) in cases {
            assert_eq!(unsafe_codes(src), vec![*code], "{src}");
        }
        for safe in [
            "import keras\nkeras.models.load_model('m.keras')",
            "import keras\nkeras.models.load_model('m.keras', safe_mode=True)",
            "import yaml\nyaml.safe_load(s)",
            "import torch\ntorch.load(p, weights_only=True)",
            // Mentions in comments and strings are not calls.
            "# torch.jit.load(p) and ctypes.CDLL('x') are dangerous\nx = 1",
            "doc = 'call hydra.utils.instantiate(cfg) or yaml.full_load(s)'",
            "\"\"\"keras.config.enable_unsafe_deserialization()\"\"\"",
        ] {
            assert!(unsafe_codes(safe).is_empty(), "{safe}");
        }
    }
}

/// Issue 32: one table of dangerous callables. Every loader and download the code scanner
/// watches is known to the pickle and config judges too (a table entry, or a called name that
/// says it loads or downloads), so a loader added to [`LOADS`] or [`super::hub::DOWNLOADS`] without
/// its `knowledge` entry fails here.
#[cfg(test)]
mod one_table {
    use super::super::Callee;
    use crate::knowledge::{ExtraLists, Verdict, classify_global, judge_by_name};

    fn known_to_the_pickle_judge(qualified: &str) -> bool {
        let (module, name) = qualified
            .rsplit_once('.')
            .unwrap_or(("builtins", qualified));
        matches!(
            classify_global(module, name, &ExtraLists::default()),
            Verdict::Dangerous { .. }
        ) || judge_by_name(module, name).is_some()
    }

    fn names(callee: &Callee) -> Vec<String> {
        match callee {
            Callee::Name(n) | Callee::EndsWith(n) => vec![n.to_string()],
            // Class names are judged by their module (a constructor's name says nothing).
            Callee::Last(l) if l.starts_with(|c: char| c.is_ascii_uppercase()) => {
                vec![format!("sentence_transformers.{l}")]
            }
            Callee::Last(l) => vec![format!("any.module.{l}")],
            Callee::Product(modules, functions) => modules
                .iter()
                .flat_map(|m| functions.iter().map(move |f| format!("{m}.{f}")))
                .collect(),
        }
    }

    #[test]
    fn every_watched_loader_and_download_is_known_to_the_pickle_judge() {
        let loads = super::LOADS.iter().flat_map(|w| w.callees.iter());
        let downloads = super::super::hub::DOWNLOADS
            .iter()
            .flat_map(|w| w.callees.iter());
        let mut missing = Vec::new();
        for callee in loads.chain(downloads) {
            for name in names(callee) {
                // `pipeline` is the bare name after `from transformers import pipeline`.
                let name = if name == "pipeline" {
                    "transformers.pipeline".to_string()
                } else {
                    name
                };
                if !known_to_the_pickle_judge(&name) {
                    missing.push(name);
                }
            }
        }
        assert!(missing.is_empty(), "unknown to knowledge: {missing:?}");
    }
}

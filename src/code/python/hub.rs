//! Hub download calls: which repository a call fetches, whether its revision is pinned to a
//! commit, and `trust_remote_code`.

use tree_sitter::Node;

use super::calls::Callee::{self, Last, Name};
use super::calls::{Args, StrVal, Watched, dispatch};
use super::report::{ItemKind, RepoRef, RevisionState, TrustValue};
use super::scanner::Scanner;

/// Whether a string names a hub repository.
#[derive(Debug, PartialEq, Eq)]
enum RepoShape {
    Hub,
    NotHub,
}

/// `datasets` builders that read local or remote files rather than a hub dataset repository.
const PACKAGED_DATASET_BUILDERS: &[&str] = &[
    "arrow",
    "audiofolder",
    "cache",
    "csv",
    "generator",
    "imagefolder",
    "json",
    "pandas",
    "parquet",
    "spark",
    "sql",
    "text",
    "videofolder",
    "webdataset",
    "xml",
];

/// File extensions that make a name a local file, not a repository id.
const LOCAL_FILE_EXTENSIONS: &[&str] = &[
    ".bin",
    ".ckpt",
    ".gguf",
    ".h5",
    ".json",
    ".msgpack",
    ".npz",
    ".onnx",
    ".pkl",
    ".pt",
    ".pth",
    ".safetensors",
    ".yaml",
    ".yml",
];

/// The download APIs, each handled by its own arm of [`Scanner::hub_download`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    FromPretrained,
    FromConfig,
    HfHubDownload,
    SnapshotDownload,
    LoadDataset,
    Pipeline,
    SentenceTransformers,
    TorchHub,
    Timm,
    OpenClip,
}

/// The hub download calls, in dispatch order (the first row whose callee matches decides).
/// The pre-filter is built from this table: a callee added here is let through automatically.
pub(super) const DOWNLOADS: &[Watched<Api>] = &[
    row(&[Last("from_pretrained")], Api::FromPretrained),
    row(&[Last("from_config")], Api::FromConfig),
    row(&[Last("hf_hub_download")], Api::HfHubDownload),
    row(&[Last("snapshot_download")], Api::SnapshotDownload),
    row(&[Last("load_dataset")], Api::LoadDataset),
    row(
        &[Name("pipeline"), Name("transformers.pipeline")],
        Api::Pipeline,
    ),
    row(
        &[Last("SentenceTransformer"), Last("CrossEncoder")],
        Api::SentenceTransformers,
    ),
    row(&[Name("torch.hub.load")], Api::TorchHub),
    row(&[Name("timm.create_model")], Api::Timm),
    row(
        &[
            Name("open_clip.create_model"),
            Name("open_clip.create_model_and_transforms"),
            Name("open_clip.create_model_from_pretrained"),
        ],
        Api::OpenClip,
    ),
];

const fn row(callees: &'static [Callee], kind: Api) -> Watched<Api> {
    Watched {
        callees,
        keywords: &[],
        kind,
    }
}

impl<'s> Scanner<'s, '_> {
    pub(super) fn trust_value(&self, value: Node<'s>) -> Option<TrustValue> {
        match self.bool_value(value) {
            Some(false) => None,
            Some(true) if value.kind() == "true" => Some(TrustValue::Literal),
            Some(true) => Some(TrustValue::Constant {
                name: self.text(value).to_owned(),
            }),
            None => Some(TrustValue::Unverifiable {
                expr: self.excerpt(self.text(value)),
            }),
        }
    }

    pub(super) fn hub_download(&self, names: &[String], args: &Args<'s>) -> Option<ItemKind> {
        match dispatch(DOWNLOADS, names, args)? {
            Api::FromPretrained => {
                // PEFT adapters take the base model first and the adapter repository second.
                let peft = names.iter().any(|n| {
                    n.rsplit('.')
                        .nth(1)
                        .is_some_and(|o| o.contains("PeftModel"))
                });
                let repo = if peft {
                    args.arg(1, &["model_id"])
                } else {
                    args.arg(0, &["pretrained_model_name_or_path", "model_id"])
                };
                self.hub_item("from_pretrained", repo, args)
            }
            Api::FromConfig => {
                // Usually a config object; only a string names a repository.
                let repo = args.arg(0, &["pretrained_model_name_or_path", "config"])?;
                match self.string_value(repo) {
                    StrVal::Plain(_) | StrVal::Constant { .. } => {
                        self.hub_item("from_config", Some(repo), args)
                    }
                    _ => None,
                }
            }
            Api::HfHubDownload => self.hub_item("hf_hub_download", args.arg(0, &["repo_id"]), args),
            Api::SnapshotDownload => {
                self.hub_item("snapshot_download", args.arg(0, &["repo_id"]), args)
            }
            Api::LoadDataset => {
                let repo = args.arg(0, &["path"]);
                if let Some(r) = repo
                    && let StrVal::Plain(v) | StrVal::Constant { value: v, .. } =
                        self.string_value(r)
                    && PACKAGED_DATASET_BUILDERS.contains(&v.as_str())
                {
                    return None;
                }
                self.hub_item("load_dataset", repo, args)
            }
            Api::Pipeline => {
                // Without `model=` the pipeline uses transformers' own default, pinned there.
                let repo = args.arg(1, &["model"])?;
                self.hub_item("pipeline", Some(repo), args)
            }
            Api::SentenceTransformers => {
                let repo = args.arg(0, &["model_name_or_path", "model_name"]);
                self.hub_item("sentence_transformers", repo, args)
            }
            Api::TorchHub => self.torch_hub(args),
            Api::Timm => self.prefixed_hub("timm.create_model", args.arg(0, &["model_name"]), args),
            Api::OpenClip => {
                let model = args.arg(0, &["model_name"]);
                if let Some(item) = self.prefixed_hub("open_clip", model, args) {
                    return Some(item);
                }
                // A pretrained tag (`laion2b_s34b_b79k`) is fetched from the hub, unpinned.
                let tag = args.arg(1, &["pretrained"])?;
                self.hub_item("open_clip", Some(tag), args)
            }
        }
    }

    /// A download whose repository is `repo` and whose revision is `revision=`.
    fn hub_item(
        &self,
        api: &'static str,
        repo: Option<Node<'s>>,
        args: &Args<'s>,
    ) -> Option<ItemKind> {
        let repo = match repo {
            Some(node) => self.repo_ref(node)?,
            None => {
                let splat = args.splat?;
                RepoRef::Unverifiable {
                    expr: self.excerpt(self.text(splat)),
                }
            }
        };
        let revision = self.revision(args);
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api,
        })
    }

    /// The repository reference, or `None` when it is a local path.
    fn repo_ref(&self, node: Node<'s>) -> Option<RepoRef> {
        match self.string_value(node) {
            StrVal::Plain(value) => {
                (repo_shape(&value) == RepoShape::Hub).then_some(RepoRef::Literal { value })
            }
            StrVal::Constant { name, value } => {
                (repo_shape(&value) == RepoShape::Hub).then_some(RepoRef::Constant { name, value })
            }
            StrVal::FString { text, prefix } => (!looks_local(&prefix)).then(|| RepoRef::FString {
                text: self.excerpt(&text),
            }),
            StrVal::Other(expr) => Some(RepoRef::Unverifiable {
                expr: self.excerpt(&expr),
            }),
        }
    }

    fn revision(&self, args: &Args<'s>) -> RevisionState {
        let Some(value) = args.keyword("revision") else {
            return match args.splat {
                Some(splat) => RevisionState::Unverifiable {
                    expr: self.excerpt(self.text(splat)),
                },
                None => RevisionState::Missing,
            };
        };
        if value.kind() == "none" {
            return RevisionState::Missing;
        }
        match self.string_value(value) {
            StrVal::Plain(s) => classify_revision(s, None),
            StrVal::Constant { name, value } => classify_revision(value, Some(name)),
            StrVal::FString { text, .. } => RevisionState::Unverifiable {
                expr: self.excerpt(&text),
            },
            StrVal::Other(expr) => RevisionState::Unverifiable {
                expr: self.excerpt(&expr),
            },
        }
    }

    /// `torch.hub.load("owner/repo:ref", "entry")`: GitHub, with the ref after the colon.
    fn torch_hub(&self, args: &Args<'s>) -> Option<ItemKind> {
        if self.is_local_source(args) {
            return None;
        }
        let repo = args.arg(0, &["repo_or_dir"])?;
        let (repo, revision) = match self.string_value(repo) {
            StrVal::Plain(v) => split_ref(v, None, ':'),
            StrVal::Constant { name, value } => split_ref(value, Some(name), ':'),
            StrVal::FString { text, .. } => (
                RepoRef::FString {
                    text: self.excerpt(&text),
                },
                RevisionState::Unverifiable {
                    expr: self.excerpt(&text),
                },
            ),
            StrVal::Other(expr) => (
                RepoRef::Unverifiable {
                    expr: self.excerpt(&expr),
                },
                RevisionState::Unverifiable {
                    expr: self.excerpt(&expr),
                },
            ),
        };
        if let RepoRef::Literal { value } | RepoRef::Constant { value, .. } = &repo
            && repo_shape(value) == RepoShape::NotHub
        {
            return None;
        }
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api: "torch.hub.load",
        })
    }

    pub(super) fn is_local_source(&self, args: &Args<'s>) -> bool {
        args.keyword("source")
            .is_some_and(|s| matches!(self.string_value(s), StrVal::Plain(v) if v == "local"))
    }

    /// timm / open_clip model names `hf-hub:org/name[@revision]`.
    fn prefixed_hub(
        &self,
        api: &'static str,
        model: Option<Node<'s>>,
        args: &Args<'s>,
    ) -> Option<ItemKind> {
        let model = model?;
        let strip = |v: &str| {
            v.strip_prefix("hf-hub:")
                .or_else(|| v.strip_prefix("hf_hub:"))
                .map(str::to_owned)
        };
        let (repo, mut revision) = match self.string_value(model) {
            StrVal::Plain(v) => split_ref(strip(&v)?, None, '@'),
            StrVal::Constant { name, value } => split_ref(strip(&value)?, Some(name), '@'),
            StrVal::FString { text, prefix } => {
                strip(&prefix)?;
                (
                    RepoRef::FString {
                        text: self.excerpt(&text),
                    },
                    RevisionState::Unverifiable {
                        expr: self.excerpt(&text),
                    },
                )
            }
            StrVal::Other(_) => return None,
        };
        if matches!(revision, RevisionState::Missing) {
            revision = self.revision(args);
        }
        Some(ItemKind::HubDownload {
            repo,
            revision,
            api,
        })
    }
}

/// Splits `repo<sep>ref` into a repository and a classified revision.
fn split_ref(value: String, via: Option<String>, sep: char) -> (RepoRef, RevisionState) {
    let (repo, rev) = match value.split_once(sep) {
        Some((repo, rev)) => (repo.to_owned(), Some(rev.to_owned())),
        None => (value, None),
    };
    let revision = match rev {
        Some(rev) => classify_revision(rev, via.clone()),
        None => RevisionState::Missing,
    };
    let repo = match via {
        Some(name) => RepoRef::Constant { name, value: repo },
        None => RepoRef::Literal { value: repo },
    };
    (repo, revision)
}

/// Full 40-hex commit id, 7–39 hex digits, or anything else (a branch or tag).
fn classify_revision(value: String, via: Option<String>) -> RevisionState {
    let hex = !value.is_empty() && value.chars().all(|c| c.is_ascii_hexdigit());
    match value.len() {
        40 if hex => RevisionState::Pinned { sha: value, via },
        7..=39 if hex => RevisionState::ShortSha { value, via },
        _ => RevisionState::BranchOrTag { value, via },
    }
}

/// Prefixes that make a string a filesystem path or URL rather than a repository id.
fn looks_local(value: &str) -> bool {
    let v = value.trim();
    v.starts_with("./")
        || v.starts_with("../")
        || v.starts_with('/')
        || v.starts_with('~')
        || v.starts_with('\\')
        || v.starts_with(".\\")
        || v == "."
        || v == ".."
        || v.contains("://")
        || v.starts_with("file:")
        || v.chars().nth(1) == Some(':')
            && v.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Hub ids are `name` or `org/name` with `[A-Za-z0-9._-]`; paths, URLs and file names are not.
fn repo_shape(value: &str) -> RepoShape {
    if value.is_empty() || looks_local(value) || value.contains('\\') {
        return RepoShape::NotHub;
    }
    let segments: Vec<&str> = value.split('/').collect();
    if segments.len() > 2 {
        return RepoShape::NotHub;
    }
    let valid = segments.iter().all(|s| {
        !s.is_empty()
            && s.len() <= 96
            && !s.contains("..")
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    });
    if !valid {
        return RepoShape::NotHub;
    }
    let lower = value.to_ascii_lowercase();
    if LOCAL_FILE_EXTENSIONS.iter().any(|ext| lower.ends_with(ext)) {
        return RepoShape::NotHub;
    }
    RepoShape::Hub
}

/// Top-level folder names that training code writes its outputs to. A hub download whose id
/// starts with one of them is almost certainly meant as a local path.
const LOCAL_FOLDER_NAMES: &[&str] = &[
    "checkpoints",
    "checkpoint",
    "ckpt",
    "ckpts",
    "outputs",
    "output",
    "out",
    "models",
    "model",
    "saved_models",
    "saved_model",
    "trained_models",
    "runs",
    "results",
    "weights",
    "exp",
    "experiments",
    "artifacts",
    "logs",
    "local",
];

/// `namespace/name` as the hub spells repository ids: exactly one `/`, both parts made of
/// letters, digits, `-`, `_` and `.`, neither starting with `.` (so `./x/y`, `../x` and absolute
/// paths are local paths, not ids).
pub fn is_hub_id_shaped(value: &str) -> bool {
    let Some((ns, name)) = value.split_once('/') else {
        return false;
    };
    let part = |p: &str| {
        !p.is_empty()
            && !p.starts_with('.')
            && p.len() <= 96
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    part(ns) && part(name)
}

/// Whether a hub-id-shaped value starts with a folder name training code writes to.
pub fn is_local_folder_name(hub_id: &str) -> bool {
    hub_id
        .split_once('/')
        .is_some_and(|(ns, _)| LOCAL_FOLDER_NAMES.contains(&ns.to_ascii_lowercase().as_str()))
}

/// The SRC005 message, shared with the repository check that finds the folder in the tree.
pub fn model_confusion_message(callee: &str, hub_id: &str, where_: &str) -> String {
    format!(
        "`{callee}` loads `{hub_id}`{where_}, which looks like a local folder: when the folder is missing at run time the loader downloads the hub repository of that name instead; write `./{hub_id}` or an absolute path"
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;

    #[test]
    fn reports_every_download_api() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "m = AutoModel.from_pretrained('org/model')",
                "org/model",
                "from_pretrained",
            ),
            (
                "t = AutoTokenizer.from_pretrained('bert-base-uncased')",
                "bert-base-uncased",
                "from_pretrained",
            ),
            (
                "p = DiffusionPipeline.from_pretrained(pretrained_model_name_or_path='a/b')",
                "a/b",
                "from_pretrained",
            ),
            (
                "s = Sched.from_config('org/sched')",
                "org/sched",
                "from_config",
            ),
            (
                "from huggingface_hub import hf_hub_download\nf = hf_hub_download(repo_id='o/r', filename='x.bin')",
                "o/r",
                "hf_hub_download",
            ),
            (
                "import huggingface_hub as h\nh.snapshot_download('o/r')",
                "o/r",
                "snapshot_download",
            ),
            ("d = load_dataset('squad')", "squad", "load_dataset"),
            ("d = load_dataset(path='o/ds')", "o/ds", "load_dataset"),
            (
                "from transformers import pipeline\np = pipeline(model='o/m')",
                "o/m",
                "pipeline",
            ),
            (
                "p = pipeline('text-classification', 'o/m')",
                "o/m",
                "pipeline",
            ),
            (
                "m = SentenceTransformer('sentence-transformers/all-MiniLM-L6-v2')",
                "sentence-transformers/all-MiniLM-L6-v2",
                "sentence_transformers",
            ),
            (
                "m = PeftModel.from_pretrained(base, 'o/adapter')",
                "o/adapter",
                "from_pretrained",
            ),
        ];
        for (src, repo, api) in cases {
            let (r, rev, a) = one_download(src);
            assert_eq!(r, lit(repo), "{src}");
            assert_eq!(rev, RevisionState::Missing, "{src}");
            assert_eq!(a, *api, "{src}");
        }
    }

    #[test]
    fn reports_torch_hub_with_ref_as_revision() {
        let src = format!("import torch\nm = torch.hub.load('pytorch/vision:{SHA}', 'resnet50')");
        let (repo, rev, api) = one_download(&src);
        assert_eq!(repo, lit("pytorch/vision"));
        assert!(matches!(rev, RevisionState::Pinned { .. }));
        assert_eq!(api, "torch.hub.load");
        assert_eq!(unsafe_codes(&src), vec!["torch-hub-load"]);
        let (_, rev, _) = one_download("torch.hub.load('pytorch/vision:v0.10.0', 'resnet18')");
        assert!(matches!(rev, RevisionState::BranchOrTag { value, .. } if value == "v0.10.0"));
        let (_, rev, _) = one_download("torch.hub.load('pytorch/vision', 'resnet18')");
        assert_eq!(rev, RevisionState::Missing);
        assert!(downloads("torch.hub.load('./repo', 'm', source='local')").is_empty());
        assert!(unsafe_codes("torch.hub.load('./repo', 'm', source='local')").is_empty());
    }

    #[test]
    fn reports_timm_and_open_clip_hub_names() {
        let (repo, rev, api) =
            one_download("import timm\nm = timm.create_model('hf-hub:org/vit', pretrained=True)");
        assert_eq!(
            (repo, rev, api),
            (lit("org/vit"), RevisionState::Missing, "timm.create_model")
        );
        let src = format!(
            "from timm import create_model\ncreate_model('hf_hub:org/vit@{SHA}', pretrained=True)"
        );
        assert!(matches!(one_download(&src).1, RevisionState::Pinned { .. }));
        assert!(
            downloads("import timm\ntimm.create_model('resnet50', pretrained=True)").is_empty()
        );
        let (repo, _, api) = one_download(
            "import open_clip\nm, _, p = open_clip.create_model_and_transforms('hf-hub:laion/CLIP-ViT')",
        );
        assert_eq!((repo, api), (lit("laion/CLIP-ViT"), "open_clip"));
        let (repo, _, _) = one_download(
            "import open_clip\nopen_clip.create_model('ViT-B-32', pretrained='laion2b_s34b_b79k')",
        );
        assert_eq!(repo, lit("laion2b_s34b_b79k"));
        assert!(
            downloads(
                "import open_clip\nopen_clip.create_model('ViT-B-32', pretrained='/ckpt/x.pt')"
            )
            .is_empty()
        );
    }

    #[test]
    fn classifies_revisions() {
        let rev = |arg: &str| {
            one_download(&format!("AutoModel.from_pretrained('o/m', revision={arg})")).1
        };
        assert_eq!(
            rev(&format!("'{SHA}'")),
            RevisionState::Pinned {
                sha: SHA.to_owned(),
                via: None
            }
        );
        assert!(
            matches!(rev("'main'"), RevisionState::BranchOrTag { value, .. } if value == "main")
        );
        assert!(matches!(rev("'v1.0'"), RevisionState::BranchOrTag { .. }));
        assert!(
            matches!(rev("'abc1234'"), RevisionState::ShortSha { value, .. } if value == "abc1234")
        );
        assert!(matches!(rev("'abc'"), RevisionState::BranchOrTag { .. }));
        assert_eq!(rev("None"), RevisionState::Missing);
        assert!(
            matches!(rev("args.revision"), RevisionState::Unverifiable { expr } if expr == "args.revision")
        );
        assert!(matches!(rev("f'{x}'"), RevisionState::Unverifiable { .. }));
    }

    #[test]
    fn resolves_repo_arguments() {
        assert_eq!(
            one_download("MODEL = 'o/m'\nAutoModel.from_pretrained(MODEL)").0,
            RepoRef::Constant {
                name: "MODEL".into(),
                value: "o/m".into()
            }
        );
        assert!(matches!(
            one_download("AutoModel.from_pretrained(f'{org}/m')").0,
            RepoRef::FString { .. }
        ));
        assert!(matches!(
            one_download("AutoModel.from_pretrained(args.model)").0,
            RepoRef::Unverifiable { expr } if expr == "args.model"
        ));
        assert!(matches!(
            one_download("AutoModel.from_pretrained(**cfg)").0,
            RepoRef::Unverifiable { .. }
        ));
        assert_eq!(
            one_download("AutoModel.from_pretrained('o/' 'm')").0,
            lit("o/m")
        );
        // A config object is not a download.
        assert!(downloads("AutoModel.from_config(config)").is_empty());
    }

    #[test]
    fn ignores_local_paths() {
        for path in [
            "./out",
            "../models/m",
            "/abs/path",
            "~/m",
            "C:\\\\models",
            "out/checkpoints/final",
            "model.safetensors",
            "https://example.com/m",
            ".",
        ] {
            let src = format!("AutoModel.from_pretrained('{path}')");
            assert!(downloads(&src).is_empty(), "{path}");
        }
        assert!(downloads("AutoModel.from_pretrained(f'./runs/{name}')").is_empty());
        assert!(downloads("LOCAL = './x'\nAutoModel.from_pretrained(LOCAL)").is_empty());
        assert!(downloads("load_dataset('csv', data_files='a.csv')").is_empty());
        assert!(downloads("torch.hub.load('/tmp/repo', 'm')").is_empty());
    }

    #[test]
    fn reports_trust_remote_code() {
        let trust = |src: &str| -> Vec<TrustValue> {
            scan(src)
                .calls
                .into_iter()
                .filter_map(|c| match c.kind {
                    ItemKind::TrustRemoteCode { value } => Some(value),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            trust("AutoModel.from_pretrained(p, trust_remote_code=True)"),
            vec![TrustValue::Literal]
        );
        assert_eq!(
            trust("TRUST = True\nAutoConfig.from_pretrained(p, trust_remote_code=TRUST)"),
            vec![TrustValue::Constant {
                name: "TRUST".into()
            }]
        );
        assert!(trust("AutoModel.from_pretrained(p, trust_remote_code=False)").is_empty());
        assert!(trust("NO = False\nf(trust_remote_code=NO)").is_empty());
        assert!(matches!(
            trust("f(trust_remote_code=args.trust)").as_slice(),
            [TrustValue::Unverifiable { .. }]
        ));
        assert_eq!(
            trust("pipeline('x', model='o/m', model_kwargs={'trust_remote_code': True})"),
            vec![TrustValue::Literal]
        );
        let report = scan("f(**{'trust_remote_code': True})");
        assert_eq!(report.calls.first().map(|c| c.callee.as_str()), Some("f"));
    }
}

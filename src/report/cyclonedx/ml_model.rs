//! The `machine-learning-model` component of one model directory: its identity and origin,
//! licenses, model card, base models and datasets.

use super::*;

/// What a model component links to, as top-level components: its datasets, and the base
/// models an adapter needs at run time.
#[derive(Default)]
pub(super) struct Links {
    pub(super) datasets: Vec<Component>,
    pub(super) bases: Vec<Component>,
}

fn base_model_ref(id: &str) -> String {
    format!("base-model:{}", percent_encode_path(id))
}

/// The model is a parameter-efficient adapter (PEFT: LoRA, IA3, prefix tuning): it holds an
/// `adapter_config.json` next to its weights, or its card says `library_name: peft`. An adapter
/// is only the delta; loading it loads its base model, so the base is a run-time dependency.
fn is_adapter(dir: &ModelDir<'_>, files: &[&FileRecord]) -> bool {
    let config = if dir.path.is_empty() {
        "adapter_config.json".to_string()
    } else {
        format!("{}/adapter_config.json", dir.path)
    };
    files.iter().any(|f| f.path == config)
        || dir
            .card
            .and_then(|c| c.get("library_name"))
            .and_then(Value::as_str)
            .is_some_and(|l| l.eq_ignore_ascii_case("peft"))
}

fn dataset_ref(name: &str) -> String {
    format!("dataset:{}", percent_encode_path(name))
}

/// One model directory's component, and what it links to at the top level.
pub(super) fn model_component(
    dir: &ModelDir<'_>,
    files: &[&FileRecord],
    report: &Report,
    cx: &Cx<'_>,
) -> (Component, Links) {
    let origin = model_origin(dir, files, report);
    let mut links = Links::default();
    let mut c = identified_component(dir, files, report, cx, &origin);
    let mut props = vec![Property::new(prop::PATH, &sbom_text(&dir.path))];
    let empty = Map::new();
    let card = dir.card.unwrap_or(&empty);
    let config = dir.config.unwrap_or(&empty);

    if let Some(licenses) = card_licenses(card, cx) {
        c.licenses = Some(licenses);
    }

    if let Some(model_card) = model_card(card, config, cx, &mut links) {
        c.model_card = Some(model_card);
    }

    if let Some(pedigree) = pedigree(dir, files, card, cx, &mut links) {
        c.pedigree = Some(pedigree);
    }

    if let Some(url) = card_url(dir, files, &origin) {
        c.external_references = Some(ExternalReferences(vec![ExternalReference::new(
            ExternalReferenceType::ModelCard,
            Uri::new(&url),
        )]));
    }

    let mut hyper: Vec<(&String, &Value)> = config
        .get("hyperparameters")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    hyper.truncate(cx.limits.max_hyperparameters);
    for (k, v) in hyper {
        if let Some(v) = scalar(v) {
            props.push(cx.prop(&format!("modelgate:config:{}", cx.text(k)), &v));
        }
    }
    if !dir.path.is_empty() {
        cx.finding_props(&dir.path, &mut props);
    }
    c.properties = Some(Properties(props));
    let children: Vec<Component> = files.iter().map(|f| file_component(f, cx)).collect();
    if !children.is_empty() {
        c.components = Some(Components(children));
    }
    (c, links)
}

/// The component with the model's identity: name, group, supplier and version from where it
/// comes from (Hub repository, GitHub repository, folder), its purl and its digest.
fn identified_component(
    dir: &ModelDir<'_>,
    files: &[&FileRecord],
    report: &Report,
    cx: &Cx<'_>,
    origin: &Origin,
) -> Component {
    // The model's name is its repository's (plus the folder inside it), never a cache path.
    let base_name = match (&origin.hf, &origin.github) {
        (Some(hf), _) => hf.repo_id.rsplit('/').next().unwrap_or("").to_string(),
        (None, Some((_, repo))) => repo.clone(),
        (None, None) if origin.prefix.is_empty() => root_name(report, None),
        (None, None) => classify::basename(&origin.prefix).to_string(),
    };
    let name = if origin.subpath.is_empty() {
        base_name.clone()
    } else if origin.hf.is_none() && origin.github.is_none() && origin.prefix.is_empty() {
        origin.subpath.clone()
    } else {
        format!("{base_name}/{}", origin.subpath)
    };
    let mut c = new_component(
        Classification::MachineLearningModel,
        &cx.text(&name),
        Some(model_ref(&dir.path)),
    );
    let namespace = match (&origin.hf, &origin.github) {
        (Some(hf), _) => hf.repo_id.split_once('/').map(|(ns, _)| ns.to_string()),
        (None, Some((org, _))) => Some(org.clone()),
        _ => None,
    };
    if let Some(ns) = &namespace {
        c.group = Some(NormalizedString::new(ns));
        c.publisher = Some(NormalizedString::new(ns));
        let url = match &origin.hf {
            Some(_) => format!("https://huggingface.co/{ns}"),
            None => format!("https://github.com/{ns}"),
        };
        c.supplier = Some(organization(ns, Some(url)));
    } else {
        c.supplier = cx.supplier.clone();
    }
    let empty_card = Map::new();
    let card_version = dir
        .card
        .unwrap_or(&empty_card)
        .get("version")
        .and_then(scalar)
        .map(|v| cx.text(&v));
    let commit = origin
        .hf
        .as_ref()
        .and_then(|h| h.commit.clone())
        .or(origin.commit.clone());
    if let Some(v) = commit.clone().or(card_version) {
        c.version = Some(NormalizedString::new(&v));
    }
    let subpath = if origin.subpath.is_empty() {
        String::new()
    } else {
        format!("#{}", percent_encode_path(&origin.subpath))
    };
    let purl = source_purl(
        origin.hf.as_ref(),
        origin.github.as_ref(),
        origin.remote.as_deref(),
        commit.as_deref(),
        &base_name,
        &subpath,
    );
    c.purl = purl.as_deref().and_then(Purl::from_str_unchecked);
    if let Some(d) = model_digest(&dir.path, files) {
        c.hashes = Some(Hashes(vec![hash(HashAlgorithm::SHA_256, &d)]));
    }
    c
}

/// Licenses: the SPDX id when the card facts carry one, else the card's own words.
fn card_licenses(card: &Map<String, Value>, cx: &Cx<'_>) -> Option<Licenses> {
    let mut licenses = strings(card.get("license_spdx"), cx.limits.max_list);
    if licenses.is_empty() {
        licenses = strings(card.get("license"), cx.limits.max_list);
        if licenses.iter().any(|l| l == "other") {
            let names = strings(card.get("license_name"), cx.limits.max_list);
            if !names.is_empty() {
                licenses = names;
            }
        }
    }
    (!licenses.is_empty())
        .then(|| Licenses(licenses.iter().map(|l| license_choice(l, cx)).collect()))
}

/// The model card: task, architecture, datasets, input and output formats, metrics and
/// limitations, when the card or config names any of them. Named datasets also become
/// top-level components in `links`.
fn model_card(
    card: &Map<String, Value>,
    config: &Map<String, Value>,
    cx: &Cx<'_>,
    links: &mut Links,
) -> Option<ModelCard> {
    let task = card
        .get("pipeline_tag")
        .and_then(Value::as_str)
        .map(|s| cx.text(s));
    let family = config
        .get("model_type")
        .and_then(Value::as_str)
        .map(|s| cx.text(s));
    let archs = strings(config.get("architectures"), cx.limits.max_list);
    let architecture = (!archs.is_empty()).then(|| cx.text(&archs.join(",")));
    let dataset_names = strings(card.get("datasets"), cx.limits.max_datasets);
    let datasets: Vec<Dataset> = dataset_names
        .iter()
        .map(|d| {
            Dataset::Component(ComponentData {
                bom_ref: None,
                data_type: ComponentDataType::Dataset,
                name: Some(cx.text(d)),
                contents: None,
                // Only the name is known; readers such as lib4sbom require the field.
                classification: Some("unknown".to_string()),
                sensitive_data: None,
                graphics: None,
                description: None,
                governance: None,
            })
        })
        .collect();
    // Each named dataset is also a top-level `data` component the dependency graph points to
    // (the crate serialises `Dataset::Reference` as a bare string, which the schema rejects).
    for d in &dataset_names {
        links.datasets.push(dataset_component(d, cx));
    }
    let (inputs, outputs) = card
        .get("pipeline_tag")
        .and_then(Value::as_str)
        .and_then(task_io)
        .map(|(i, o)| {
            let p = |f: &str| MLParameter {
                format: Some(f.to_string()),
            };
            (Some(Inputs(vec![p(i)])), Some(Outputs(vec![p(o)])))
        })
        .unwrap_or((None, None));
    let metrics = performance_metrics(card, cx);
    // The crate's `Considerations` (0.8) has no fields: the card's limitations section is kept
    // as a model card property instead.
    let limitations = card
        .get("limitations")
        .and_then(Value::as_str)
        .map(|l| Property::new("modelgate:card:limitations", &cx.text(l)));
    if task.is_some()
        || family.is_some()
        || architecture.is_some()
        || !datasets.is_empty()
        || !metrics.is_empty()
        || limitations.is_some()
    {
        Some(ModelCard {
            bom_ref: None,
            model_parameters: Some(ModelParameters {
                approach: None,
                task,
                architecture_family: family,
                model_architecture: architecture,
                datasets: (!datasets.is_empty()).then_some(Datasets(datasets)),
                inputs,
                outputs,
            }),
            quantitative_analysis: (!metrics.is_empty()).then_some(QuantitativeAnalysis {
                performance_metrics: Some(PerformanceMetrics(metrics)),
                graphics: None,
            }),
            considerations: None,
            properties: limitations.map(|p| Properties(vec![p])),
        })
    } else {
        None
    }
}

/// The top-level `data` component of a dataset the card names, with its Hub purl, page and
/// supplier when the name is a Hub repository id.
fn dataset_component(d: &str, cx: &Cx<'_>) -> Component {
    let mut dc = new_component(Classification::Data, &cx.text(d), Some(dataset_ref(d)));
    if valid_repo_id(d) {
        dc.purl = Purl::from_str_unchecked(&format!(
            "pkg:huggingface/{}?repository_url={}",
            d.split('/').map(purl_segment).collect::<Vec<_>>().join("/"),
            purl_segment("https://huggingface.co/datasets")
        ));
        dc.external_references = Some(ExternalReferences(vec![ExternalReference::new(
            ExternalReferenceType::Distribution,
            Uri::new(&format!("https://huggingface.co/datasets/{d}")),
        )]));
        dc.supplier = Some(hub_supplier(d, "datasets/"));
    }
    dc
}

/// Base models are the model's ancestors in its `pedigree` (CycloneDX's "derived from"), with
/// purl and supplier. A fine-tuned model does not load its base at run time, so for it that
/// is all. An adapter does: its bases are also top-level components (one per base, however
/// many adapters name it: a `bom-ref` is unique) that the model depends on.
fn pedigree(
    dir: &ModelDir<'_>,
    files: &[&FileRecord],
    card: &Map<String, Value>,
    cx: &Cx<'_>,
    links: &mut Links,
) -> Option<Pedigree> {
    let bases = strings(card.get("base_model"), cx.limits.max_list);
    if bases.is_empty() {
        return None;
    }
    let adapter = is_adapter(dir, files);
    let ancestors = bases
        .iter()
        .map(|b| {
            let (group, name) = match b.split_once('/') {
                Some((ns, n)) if valid_repo_id(b) => (Some(ns), n),
                _ => (None, b.as_str()),
            };
            let mut a = new_component(Classification::MachineLearningModel, &cx.text(name), None);
            a.group = group.map(|g| NormalizedString::new(&cx.text(g)));
            if valid_repo_id(b) {
                a.purl = Purl::from_str_unchecked(&hf_purl(&HfRepo {
                    repo_id: b.clone(),
                    commit: None,
                    dataset: false,
                }));
                a.supplier = Some(hub_supplier(b, ""));
            }
            if adapter {
                let mut top = a.clone();
                top.bom_ref = Some(base_model_ref(b));
                links.bases.push(top);
            }
            a
        })
        .collect();
    Some(Pedigree {
        ancestors: Some(Components(ancestors)),
        descendants: None,
        variants: None,
        commits: None,
        patches: None,
        notes: None,
    })
}

/// The card: the hub page at the model's revision when the repository is known (the path
/// inside the repository, never the cache's `snapshots/<rev>/`), else the card's relative path.
fn card_url(dir: &ModelDir<'_>, files: &[&FileRecord], origin: &Origin) -> Option<String> {
    let card_file = files
        .iter()
        .find(|f| f.kind == Kind::ModelCard && dir_of(&f.path) == dir.path)
        .or_else(|| {
            files
                .iter()
                .find(|f| f.kind == Kind::ModelCard && under(&dir.path, dir_of(&f.path)))
        });
    match (&origin.hf, card_file) {
        (Some(hf), Some(f)) => {
            let in_repo = f
                .facts
                .fact(Fact::HfPath)
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| strip_root(&f.path, &origin.prefix).to_string());
            Some(format!(
                "https://huggingface.co/{}/blob/{}/{}",
                hf.repo_id,
                hf.commit.as_deref().unwrap_or("main"),
                percent_encode_path(&in_repo)
            ))
        }
        (None, Some(f)) => Some(percent_encode_path(&f.path)),
        (_, None) => None,
    }
}

/// The input and output formats a Hub `pipeline_tag` implies (the card's own statement of
/// the task); `None` for tags not listed here.
fn task_io(tag: &str) -> Option<(&'static str, &'static str)> {
    Some(match tag {
        "text-classification" | "token-classification" | "zero-shot-classification" => {
            ("text", "label")
        }
        "text-generation"
        | "text2text-generation"
        | "summarization"
        | "translation"
        | "question-answering"
        | "fill-mask"
        | "conversational" => ("text", "text"),
        "feature-extraction" | "sentence-similarity" => ("text", "embedding"),
        "image-classification" | "zero-shot-image-classification" => ("image", "label"),
        "object-detection" | "image-segmentation" => ("image", "annotations"),
        "image-to-text" => ("image", "text"),
        "text-to-image" => ("text", "image"),
        "image-to-image" => ("image", "image"),
        "automatic-speech-recognition" => ("audio", "text"),
        "audio-classification" => ("audio", "label"),
        "text-to-speech" | "text-to-audio" => ("text", "audio"),
        _ => return None,
    })
}

/// `quantitativeAnalysis.performanceMetrics` from the card's `model-index` results: the
/// metric's type (and name), its value, and the dataset, split and task as the slice.
fn performance_metrics(card: &Map<String, Value>, cx: &Cx<'_>) -> Vec<PerformanceMetric> {
    let Some(Value::Array(metrics)) = card.get("metrics") else {
        return Vec::new();
    };
    metrics
        .iter()
        .take(cx.limits.max_list)
        .filter_map(|m| {
            let field = |k: &str| m.get(k).and_then(Value::as_str).map(|v| cx.text(v));
            let kind = field("type")?;
            let value = field("value")?;
            let metric_type = match field("name") {
                Some(n) if n != kind => format!("{kind} ({n})"),
                _ => kind,
            };
            let slice: Vec<String> = [field("dataset"), field("split"), field("task")]
                .into_iter()
                .flatten()
                .collect();
            Some(PerformanceMetric {
                metric_type: Some(metric_type),
                value: Some(value),
                slice: (!slice.is_empty()).then(|| slice.join(" / ")),
                confidence_interval: None,
            })
        })
        .collect()
}

#!/usr/bin/env bash
# Transformers precision check (issue 30): real model code must pass. Lays out the model code of
# many families from a pinned transformers wheel as remote-code repositories -- one folder per
# family holding its modeling_*, configuration_*, tokenization_*, processing_*, image_processing_*
# and feature_extraction_* files exactly as the wheel has them (relative imports such as
# `from ...modeling_utils import PreTrainedModel` left as they are), a config.json whose
# `auto_map` points at those files (AutoConfig, AutoModel, AutoTokenizer in its [slow, fast] list
# form, AutoProcessor, AutoImageProcessor, AutoFeatureExtractor) on top of the family's own config
# document (issue 39: the literal defaults of its configuration class, read with `ast`, every
# sub-config nested, and an ordinary attention implementation -- sdpa, flash_attention_2, eager or
# flex_attention -- in each, so the config walker sees real config shapes) and a model card -- and scans each
# folder with the default policy. Every deny is a false alarm on ordinary model code: the script
# fails on any, and prints deny/warn counts per rule so noise can be compared before and after a
# change, plus every deny and every SRC006 finding with its file, line and evidence.
#
# The wheel is pinned by version, file name and the SHA-256 PyPI records for it, downloaded through
# PyPI's JSON API (PYPI_URL, default https://pypi.org) into the cache scripts/real-world.sh uses,
# ${XDG_CACHE_HOME:-~/.cache}/modelgate-real-world, and verified before use (a mismatch is an
# error, never silently refetched over). Nothing from the wheel is imported or run: class names for
# `auto_map` are read with Python's `ast` parser.
#
# Usage: scripts/transformers-precision.sh [path/to/modelgate]   (default: builds target/debug/modelgate)
# Environment: TRANSFORMERS_PRECISION_ONLY (a family name: lay out and scan just that one, or
# `all`: every family in the wheel, about 400, as a wider and slower measurement),
# TRANSFORMERS_PRECISION_KEEP (a directory to keep the laid-out folders and JSON reports in),
# TRANSFORMERS_PRECISION_REPORT (a Markdown file to write the deny and SRC006 list to).
# Exit 0 when nothing is denied, 1 on a deny, 2 when the download, digest or the tool fails.
# Meant for .ci/run under the same guard as the other interop scripts (python3 present,
# SKIP_INTEROP unset).
set -euo pipefail
cd "$(dirname "$0")/.."
# bin, cache, work (scripts/pinned-setup.sh)
. scripts/pinned-setup.sh "$@"

python3 - "$bin" "$cache" "$work" <<'PY'
import ast, collections, json, os, shutil, subprocess, sys, zipfile

binary, cache, work = sys.argv[1:4]
# name version file sha256 (PyPI's digest of that file): the last 4.x release, which the remote
# code on the Hub is written against.
PIN = ("transformers", "4.57.1", "transformers-4.57.1-py3-none-any.whl",
       "b10d05da8fa67dc41644dbbf9bc45a44cb86ae33da6f9295f5fbf5b7890bd267")
# Model families laid out (transformers/models/<name>/): decoder LLMs, MoE, encoders,
# encoder-decoders, speech, vision, vision-language, state-space models.
FAMILIES = """
    llama mistral mixtral gpt2 gpt_neox gptj codegen opt bloom falcon mpt qwen2 qwen2_moe qwen3
    gemma gemma2 gemma3 phi phi3 olmo2 cohere starcoder2 stablelm deepseek_v3 dbrx jamba
    bert roberta xlm_roberta deberta_v2 electra distilbert t5 bart
    whisper wav2vec2 clip siglip vit swin convnext detr sam
    blip llava qwen2_vl idefics2 mllama pixtral chameleon mamba mamba2
""".split()
PREFIXES = ("modeling_", "configuration_", "tokenization_", "processing_", "image_processing_",
            "feature_extraction_")
only = os.environ.get("TRANSFORMERS_PRECISION_ONLY")
keep = os.environ.get("TRANSFORMERS_PRECISION_KEEP")
report_md = os.environ.get("TRANSFORMERS_PRECISION_REPORT")
if only and only != "all":
    if only not in FAMILIES:
        sys.exit(f"TRANSFORMERS_PRECISION_ONLY={only}: not on the list")
    FAMILIES = [only]


sys.path.insert(0, "scripts")
from pinned_pypi import fetch as fetch_pinned  # noqa: E402


def fetch(name, version, filename, digest):
    """The pinned file from the cache (scripts/pinned_pypi.py), downloaded once."""
    return fetch_pinned(cache, name, version, filename, digest)


def classes(source):
    """(class name, base names) of the top-level classes, read with ast (never imported)."""
    out = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(b) for b in node.bases]
            out.append((node.name, bases))
    return out


def pick(files, prefix, want):
    """`module.Class` for the first class in a `prefix*` file whose name ends with one of want."""
    for fname in sorted(files):
        if not fname.startswith(prefix) or "_tf_" in fname or "_flax_" in fname:
            continue
        for suffix in want:
            for name, _ in files[fname]:
                if name.endswith(suffix):
                    return f"{fname[:-3]}.{name}"
    return None


def auto_map(files, family):
    m = {}
    if c := pick(files, "configuration_", ("Config",)):
        m["AutoConfig"] = c
    model = pick(files, "modeling_", ("ForCausalLM", "ForConditionalGeneration", "Model"))
    if model:
        m["AutoModel"] = model
    slow = fast = None
    for fname in sorted(files):
        if fname.startswith("tokenization_"):
            for name, _ in files[fname]:
                if name.endswith("TokenizerFast") and not fast:
                    fast = f"{fname[:-3]}.{name}"
                elif name.endswith("Tokenizer") and not slow:
                    slow = f"{fname[:-3]}.{name}"
    if slow or fast:
        m["AutoTokenizer"] = [slow, fast]
    for key, prefix, want in (
        ("AutoProcessor", "processing_", ("Processor",)),
        ("AutoImageProcessor", "image_processing_", ("ImageProcessorFast", "ImageProcessor")),
        ("AutoFeatureExtractor", "feature_extraction_", ("FeatureExtractor",)),
    ):
        if c := pick(files, prefix, want):
            m[key] = c
    return m


ORDINARY_ATTENTION = ("sdpa", "flash_attention_2", "eager", "flex_attention")


def jsonable(value):
    """A literal default as JSON would hold it (tuples as lists, sets and others dropped)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return None


def defaults(node):
    """The literal defaults of a configuration class: `__init__` keyword defaults, or (5.x
    dataclass style) annotated class attributes."""
    out = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            args = item.args
            positional = args.args[1:]
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                try:
                    out[arg.arg] = jsonable(ast.literal_eval(default))
                except (ValueError, TypeError, SyntaxError):
                    pass
            return out
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
            try:
                out[item.target.id] = jsonable(ast.literal_eval(item.value))
            except (ValueError, TypeError, SyntaxError):
                pass
    return out


def class_attr(node, name):
    for item in node.body:
        if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in item.targets):
            return item.value
    return None


def family_config(sources, index):
    """The main configuration class's document, sub-configs nested (depth 3), read with ast."""
    config_classes = {}
    for fname, source in sorted(sources.items()):
        if fname.startswith("configuration_"):
            for node in ast.parse(source).body:
                if isinstance(node, ast.ClassDef) and node.name.endswith("Config"):
                    config_classes[node.name] = node
    attention = ORDINARY_ATTENTION[index % len(ORDINARY_ATTENTION)]

    def build(node, depth):
        doc = {k: v for k, v in defaults(node).items() if v is not None and not k.endswith("_config")}
        model_type = class_attr(node, "model_type")
        if isinstance(model_type, ast.Constant) and isinstance(model_type.value, str):
            doc["model_type"] = model_type.value
        doc["attn_implementation"] = attention
        subs = class_attr(node, "sub_configs")
        if isinstance(subs, ast.Dict) and depth < 3:
            for key, value in zip(subs.keys, subs.values):
                if not isinstance(key, ast.Constant):
                    continue
                name = value.id if isinstance(value, ast.Name) else None
                sub = config_classes.get(name)
                doc[key.value] = build(sub, depth + 1) if sub is not None else {"model_type": "llama"}
                doc[key.value]["_attn_implementation_autoset"] = True
        return doc

    candidates = [n for n in config_classes.values() if class_attr(n, "sub_configs") is not None]
    main = candidates[0] if candidates else next(iter(config_classes.values()), None)
    return build(main, 0) if main is not None else {}


per_family, nested_configs = [], 0
wheel = fetch(*PIN)
layout = os.path.join(keep or work, "repos")
os.makedirs(layout, exist_ok=True)
per_rule = collections.defaultdict(collections.Counter)
denied, src006 = [], []
total_files = total_py = 0
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    if only == "all":
        FAMILIES = sorted({n.split("/")[2] for n in names if n.startswith("transformers/models/")
                           and n.count("/") == 3 and os.path.basename(n).startswith(PREFIXES)})
    print(f"{PIN[0]} {PIN[1]}: {len(FAMILIES)} families as remote-code repositories")
    print(f"{'family':<14} {'py':>4} {'bytes':>8} {'denied':>6} {'warned':>6}  SRC006")
    for family in FAMILIES:
        base = f"transformers/models/{family}/"
        members = sorted(n for n in names if n.startswith(base) and n.count("/") == 3
                         and n.endswith(".py") and os.path.basename(n).startswith(PREFIXES))
        if not members:
            sys.exit(f"{family}: no model code in {PIN[2]}")
        root = os.path.join(layout, family)
        os.makedirs(root)
        files, size, sources = {}, 0, {}
        for member in members:
            data = z.read(member)
            fname = os.path.basename(member)
            sources[fname] = data.decode("utf-8")
            with open(os.path.join(root, fname), "wb") as out:
                out.write(data)
            files[fname] = classes(data.decode("utf-8"))
            size += len(data)
        # The family's own config document (issue 39): its configuration class's literal
        # defaults with every sub-config nested, and an ordinary attention implementation in
        # each, under the keys the remote-code layout needs.
        config = family_config(sources, len(per_family))
        config.update({
            "architectures": [a.split(".")[1] for a in [auto_map(files, family).get("AutoModel")] if a],
            "auto_map": auto_map(files, family),
            "model_type": f"{family}_remote",
            "transformers_version": PIN[1],
        })
        per_family.append(family)
        nested_configs += sum(1 for v in config.values() if isinstance(v, dict) and "model_type" in v)
        with open(os.path.join(root, "config.json"), "w") as out:
            json.dump(config, out, indent=2)
        with open(os.path.join(root, "README.md"), "w") as out:
            out.write(f"---\nlicense: apache-2.0\nlibrary_name: transformers\ntags:\n- custom_code\n---\n\n"
                      f"# {family} (remote code)\n\nThe {family} code of transformers {PIN[1]}, shipped as custom code.\n")
        report = os.path.join(keep or work, f"{family}.json")
        run = subprocess.run([binary, "scan", "--no-git", "--format", "json", "-o", report, root],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode not in (0, 1):
            sys.stderr.write(run.stderr)
            sys.exit(f"{family}: modelgate exited {run.returncode}")
        with open(report) as f:
            r = json.load(f)
        d = w = 0
        s6 = []
        for finding in r["findings"]:
            per_rule[finding["rule"]][finding["action"]] += 1
            if finding["action"] == "deny":
                d += 1
                denied.append((family, finding))
            elif finding["action"] == "warn":
                w += 1
            if finding["rule"] == "SRC006":
                s6.append(finding)
                if finding["action"] != "deny":
                    src006.append((family, finding))
        caps = sorted({f.get("evidence", {}).get("capability", f["message"][:40]) for f in s6})
        total_files += len(r["files"])
        total_py += len(members)
        print(f"{family:<14} {len(members):>4} {size:>8} {d:>6} {w:>6}  {', '.join(caps)}")
        if not keep:
            shutil.rmtree(root)


def where(family, f):
    """One finding as `family/file:line RULE [severity/action]: message`, then its sites (SRC006
    lists every site it found: line, resolved call, severity) or else its evidence."""
    loc = f.get("location") or {}
    line = loc.get("line")
    col = loc.get("column")
    pos = f":{line}" + (f":{col}" if col else "") if line else ""
    out = f"{family}/{f['path']}{pos} {f['rule']} [{f['severity']}/{f['action']}]: {f['message']}"
    ev = f.get("evidence") or {}
    sites = ev.get("sites")
    if isinstance(sites, list) and sites:
        for site in sites:
            if isinstance(site, dict):
                out += (f"\n      - line {site.get('line')}: `{site.get('call')}` {site.get('detail', '')}"
                        f" [{site.get('severity')}, {site.get('when')}]")
    else:
        text = json.dumps(ev, sort_keys=True)
        out += "\n      evidence: " + (text[:600] + "..." if len(text) > 600 else text)
    return out


ndeny = sum(c["deny"] for c in per_rule.values())
nwarn = sum(c["warn"] for c in per_rule.values())
print(f"\n{len(FAMILIES)} families, {total_py} python files ({total_files} files scanned), "
      f"{ndeny} denied, {nwarn} warnings; config.json of each family from its configuration class "
      f"({nested_configs} nested sub-configs, attention {', '.join(ORDINARY_ATTENTION)})")
print("per rule (deny / warn / other):")
for rule, c in sorted(per_rule.items()):
    other = sum(v for k, v in c.items() if k not in ("deny", "warn"))
    print(f"  {rule:<8} {c['deny']:>5} {c['warn']:>5} {other:>5}")
if src006:
    print("SRC006 findings that are not denies (each one is noise to look at):")
    for family, f in src006:
        print("  " + where(family, f))
if denied:
    print("denied (each one is a false alarm on real model code):")
    for family, f in denied:
        print("  " + where(family, f))
if report_md:
    with open(report_md, "w") as out:
        out.write(f"# transformers {PIN[1]} precision: {len(FAMILIES)} families, {total_py} .py, "
                  f"{ndeny} denied, {nwarn} warnings\n\n| rule | deny | warn |\n|---|---|---|\n")
        for rule, c in sorted(per_rule.items()):
            out.write(f"| {rule} | {c['deny']} | {c['warn']} |\n")
        out.write("\n## Denies\n\n" + ("".join(f"- {where(fa, f)}\n" for fa, f in denied) or "none\n"))
        out.write("\n## SRC006 below deny\n\n" + ("".join(f"- {where(fa, f)}\n" for fa, f in src006) or "none\n"))
if denied:
    sys.exit(1)
PY

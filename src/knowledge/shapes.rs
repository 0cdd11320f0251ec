//! Names dangerous by their shape rather than by a table row: a mutating method of module
//! state (tampering) and the dunders and methods that reach namespaces, classes or code.

// ---- issue 32: tampering through traversal ----
// `torch.serialization` + `_safe_globals.clear` (or `.update`, `__setitem__`, ...) is a dotted
// name that reaches a mutating method of module state: calling it disarms a loader's or a
// scanner's safety list inside the loading process. Source: the issue-16 round-one note on
// `module._registry.clear`; fickling GHSA-5j3x-jp52-966f (dotted names reach any attribute).

/// Methods that change the object they are bound to (dict, list, set, deque, OrderedDict).
pub(super) const MUTATORS: &[&str] = &[
    "clear",
    "update",
    "pop",
    "popitem",
    "setdefault",
    "__setitem__",
    "__delitem__",
    "append",
    "extend",
    "insert",
    "remove",
    "discard",
    "add",
    "appendleft",
    "extendleft",
    "popleft",
    "sort",
    "reverse",
];

/// A dotted name whose last step is a mutating method of an attribute of the module
/// (`_registry.clear`, `_safe_globals.update`): the attribute is module state.
pub(super) fn tampers(name: &str) -> bool {
    let Some((attr, method)) = name.rsplit_once('.') else {
        return false;
    };
    !attr.is_empty() && MUTATORS.contains(&method)
}

/// Dunder names that are dangerous wherever they appear (as the name or as a component of a
/// dotted name): they reach namespaces, classes or code from a harmless starting object.
pub(super) const DANGEROUS_DUNDERS: &[&str] = &[
    "__builtins__",
    "__globals__",
    "__import__",
    "__loader__",
    "__spec__",
    "__subclasses__",
    "__code__",
    "__closure__",
    "__dict__",
    "__class__",
    "__base__",
    "__bases__",
    "__mro__",
    "__self__",
    "__func__",
    "__getattribute__",
    "__getattr__",
    "__setattr__",
    "__delattr__",
    "__reduce__",
    "__reduce_ex__",
];

/// Methods that read or write files when reached through a class in these modules with a
/// dotted name, e.g. `pathlib` + `Path.write_text` (protocol 4 getattr chain).
pub(super) const DANGEROUS_METHODS: &[(&str, &[&str])] = &[(
    "pathlib",
    &[
        "open",
        "write_text",
        "write_bytes",
        "read_text",
        "read_bytes",
        "unlink",
        "rmdir",
        "rename",
        "replace",
        "touch",
        "mkdir",
        "chmod",
        "symlink_to",
        "hardlink_to",
        "iterdir",
        "glob",
        "rglob",
    ],
)];

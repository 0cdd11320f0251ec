//! What shipped code does: the readers and judges of the code a model repository ships, beside
//! the format readers of [`crate::inspect`] and below them (`inspect` records their findings in a
//! scan; nothing here knows about scans).
//!
//! - [`python`]: Python source. Lexing (`literals`, `fstrings`), the byte-level pre-filter and
//!   statement selection, import bindings, the call rules (hub downloads SRC002/SRC003,
//!   `trust_remote_code` SRC005, code-executing loaders SRC004), the behaviour judge (SRC006)
//!   with its one evaluation budget per file, and the blob decoder.
//! - [`bytecode`]: Python bytecode. The marshal walker (`.pyc` files and marshalled code), the
//!   opcode tables of every CPython version, the resolver of imported and called names, and the
//!   `.pyc`-to-source match.
//! - [`notebook`]: Jupyter notebooks, cell by cell through [`python`].

pub mod bytecode;
pub mod notebook;
pub mod python;

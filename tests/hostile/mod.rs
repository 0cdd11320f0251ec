//! Hostile file systems and contents (issue 11); included from integration.rs.

#[allow(unused_imports)]
use crate::support::*;

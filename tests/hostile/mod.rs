//! Hostile file systems and contents (issue 11); included from integration.rs.

use crate::support::*;

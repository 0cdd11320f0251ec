//! The problem record every parser returns lives in the model ([`crate::model::problem`]); it is
//! re-exported here because the format inspectors are its main writers.

pub use crate::model::problem::*;

//! PaddlePaddle (issue 40): the `.pdmodel` program walk and the `.pdiparams` tensor records, on
//! the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::paddle::{
    Limits, inspect_params, inspect_program, is_program, starts_like_program,
};

fuzz_target!(|data: &[u8]| {
    let _ = is_program(data);
    let _ = starts_like_program(data);
    let mut r: &[u8] = data;
    let _ = inspect_program(&mut r, data.len() as u64, &Limits::default());
    let mut r: &[u8] = data;
    let _ = inspect_params(&mut r, data.len() as u64, &Limits::default());
});

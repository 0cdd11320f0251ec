//! Tree-model headers: XGBoost JSON/UBJSON, LightGBM text, CatBoost `.cbm` (first block only).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modelgate::classify;
use modelgate::inspect::trees;

fuzz_target!(|data: &[u8]| {
    let size = data.len() as u64;
    let _ = trees::is_xgboost_json(data);
    let _ = trees::xgboost(data, true, false);
    let _ = classify::is_xgboost_ubjson(data);
    let _ = trees::xgboost(data, true, true);
    let _ = trees::ubjson_len(data);
    let _ = trees::is_lightgbm(data);
    let _ = trees::lightgbm(data);
    if data.starts_with(b"CBM1") {
        let _ = trees::catboost(data, size);
    }
});

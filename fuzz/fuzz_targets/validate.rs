//! YAML text through everything `topospread validate` does with it
//! ([`topospread_k8s::fuzz::validate_pipeline`], which the `fuzz_smoke` test runs too).
//! Any panic is a bug: all of it reads user input.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    topospread_k8s::fuzz::validate_pipeline(text);
});

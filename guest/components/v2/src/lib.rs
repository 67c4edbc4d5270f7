//! A component for a contract this host does not implement
//! (`openkeel:magnum-driver@2.0.0`): the host must refuse it with the range
//! it supports.

wit_bindgen::generate!({
    path: "wit",
    world: "cluster-driver",
});

struct V2;

export!(V2);

impl exports::openkeel::magnum_driver::driver::Guest for V2 {
    fn describe() -> Vec<String> {
        vec!["v2".to_string()]
    }
}

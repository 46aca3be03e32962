//! Built-in drives.
use crate::DeviceModel;

/// Key figures of a preset.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PresetInfo {
    pub name: &'static str,
}

pub fn presets() -> Vec<PresetInfo> {
    Vec::new()
}

pub fn preset(_name: &str) -> Option<Box<dyn DeviceModel>> {
    None
}

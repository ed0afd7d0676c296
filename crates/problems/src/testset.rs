//! Reading the embedded published datasets (`datasets/*.json`, numbers kept as decimal
//! strings exactly as published). A malformed dataset is a build defect, reported as a
//! typed error naming the file and key rather than a panic.

use driftlab_core::ParamError;

/// The parsed JSON of an embedded dataset.
pub struct Dataset {
    name: &'static str,
    root: serde_json::Value,
}

impl Dataset {
    /// Parse `text` (from `include_str!`) of dataset `name`.
    pub fn parse(name: &'static str, text: &str) -> Result<Self, ParamError> {
        let root = serde_json::from_str(text).map_err(|e| bad(name, &e.to_string()))?;
        Ok(Self { name, root })
    }

    fn get(&self, path: &[&str]) -> Result<&serde_json::Value, ParamError> {
        let mut v = &self.root;
        for k in path {
            v = v
                .get(k)
                .ok_or_else(|| bad(self.name, &format!("missing key {}", path.join("."))))?;
        }
        Ok(v)
    }

    /// The number stored as a string at `path`.
    pub fn num(&self, path: &[&str]) -> Result<f64, ParamError> {
        let v = self.get(path)?;
        v.as_str()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .ok_or_else(|| {
                bad(
                    self.name,
                    &format!("{} is not a number string", path.join(".")),
                )
            })
    }

    /// The array of number strings at `path`.
    pub fn vec(&self, path: &[&str]) -> Result<Vec<f64>, ParamError> {
        let v = self.get(path)?;
        let arr = v
            .as_array()
            .ok_or_else(|| bad(self.name, &format!("{} is not an array", path.join("."))))?;
        arr.iter()
            .map(|x| {
                x.as_str()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or_else(|| {
                        bad(self.name, &format!("{} holds a non-number", path.join(".")))
                    })
            })
            .collect()
    }

    /// The text at `path`.
    pub fn text(&self, path: &[&str]) -> Result<String, ParamError> {
        Ok(self.get(path)?.as_str().unwrap_or_default().to_string())
    }
}

fn bad(name: &str, message: &str) -> ParamError {
    ParamError::Invalid {
        kind: "dataset",
        id: name.to_string(),
        message: message.to_string(),
    }
}

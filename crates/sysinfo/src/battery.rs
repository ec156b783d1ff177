//! Batteries, from `/sys/class/power_supply/*` entries whose `type` is `Battery`.

use std::path::Path;

use serde::Serialize;

use crate::probe::ProbeError;

/// One battery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Battery {
    /// Its name in `/sys/class/power_supply` (e.g. `BAT0`).
    pub name: String,
    /// Charge in percent, when the battery reports it.
    pub capacity_percent: Option<u8>,
    /// `Charging`, `Discharging`, `Full`, `Not charging`, … when reported.
    pub status: Option<String>,
    /// `System` for the machine's own battery, `Device` for a peripheral (mouse, headset), when
    /// reported.
    pub scope: Option<String>,
}

/// Every battery, sorted by name; an empty list when there is none (or no power-supply class).
pub(crate) fn batteries(root: &Path) -> Result<Vec<Battery>, ProbeError> {
    let class = root.join("sys/class/power_supply");
    let entries = match std::fs::read_dir(&class) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ProbeError::Unreadable {
                path: class,
                source,
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let dir = entry.path();
        let attr = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        };
        if attr("type").as_deref() != Some("Battery") {
            continue;
        }
        out.push(Battery {
            name: entry.file_name().to_string_lossy().into_owned(),
            capacity_percent: attr("capacity")
                .and_then(|c| c.parse::<u8>().ok())
                .filter(|c| *c <= 100),
            status: attr("status"),
            scope: attr("scope"),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

//! Temperatures and fans from hwmon (`/sys/class/hwmon/hwmon*`), what `sensors` reads: each
//! chip's `name`, then `tempN_input` (millidegrees Celsius) with its label, high and critical
//! limits, and `fanN_input` (RPM). A machine without sensor drivers has empty lists.

use std::path::Path;

use serde::Serialize;

use crate::machine::{attr, entries};

/// Every temperature and fan hwmon reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sensors {
    /// Temperatures, by chip then sensor number.
    pub temperatures: Vec<Temperature>,
    /// Fans, by chip then fan number.
    pub fans: Vec<Fan>,
}

/// One temperature sensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Temperature {
    /// The chip (`k10temp`, `coretemp`, `nvme`, `amdgpu`, `acpitz`).
    pub chip: String,
    /// Its label (`Tctl`, `Package id 0`, `Composite`), else `tempN`.
    pub sensor: String,
    /// Now, °C.
    pub celsius: f64,
    /// The chip's high limit, °C.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// The chip's critical limit, °C.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical: Option<f64>,
}

/// One fan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fan {
    /// The chip.
    pub chip: String,
    /// Its label, else `fanN`.
    pub fan: String,
    /// Now, revolutions per minute.
    pub rpm: u64,
}

pub fn sensors(root: &Path) -> Sensors {
    let mut temperatures = Vec::new();
    let mut fans = Vec::new();
    for (_, dir) in entries(&root.join("sys/class/hwmon")).unwrap_or_default() {
        let chip = attr(&dir, "name").unwrap_or_else(|| "unknown".into());
        let files: Vec<String> = entries(&dir)
            .unwrap_or_default()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        for f in &files {
            let milli = |name: String| {
                attr(&dir, &name)
                    .and_then(|v| v.parse::<i64>().ok())
                    .map(|m| m as f64 / 1000.0)
            };
            if let Some(n) = f
                .strip_prefix("temp")
                .and_then(|r| r.strip_suffix("_input"))
            {
                let Some(celsius) = milli(f.clone()) else {
                    continue;
                };
                temperatures.push(Temperature {
                    chip: chip.clone(),
                    sensor: attr(&dir, &format!("temp{n}_label"))
                        .unwrap_or_else(|| format!("temp{n}")),
                    celsius,
                    high: milli(format!("temp{n}_max")),
                    critical: milli(format!("temp{n}_crit")),
                });
            } else if let Some(n) = f.strip_prefix("fan").and_then(|r| r.strip_suffix("_input"))
                && let Some(rpm) = attr(&dir, f).and_then(|v| v.parse::<u64>().ok())
            {
                fans.push(Fan {
                    chip: chip.clone(),
                    fan: attr(&dir, &format!("fan{n}_label")).unwrap_or_else(|| format!("fan{n}")),
                    rpm,
                });
            }
        }
    }
    Sensors { temperatures, fans }
}

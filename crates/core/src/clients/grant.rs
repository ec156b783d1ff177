//! A client's grant: the preset and tool list in force for a name, from its `[clients.NAME]`
//! section and its stored record (`archgate clients add`), merged key by key.

use archgate_policy::{Grant, Preset};

use super::{ClientError, StoredClient};
use crate::config::Config;

/// A preset by the name `clients add` takes and the stored record keeps.
pub fn parse_preset(s: &str) -> Result<Preset, ClientError> {
    match s {
        "read-only" => Ok(Preset::ReadOnly),
        "desktop" => Ok(Preset::Desktop),
        "full" => Ok(Preset::Full),
        other => Err(ClientError::BadPreset(other.to_owned())),
    }
}

fn grant_of(preset: Preset, tools: Option<&[String]>) -> Grant {
    let g = Grant::preset(preset);
    match tools {
        Some(t) => g.with_tools(t.iter().cloned()),
        None => g,
    }
}

/// The grant of a named client: each key (`preset`, `tools`) from its `[clients.NAME]` section
/// when the section says it, else from the stored record (`archgate clients add`).
pub fn grant_for(name: &str, stored: Option<&StoredClient>, config: &Config) -> Grant {
    let (preset, tools) = grant_parts(name, stored, config);
    grant_of(preset, tools.as_deref())
}

/// The preset and tool list in force for a named client, merged key by key (class: *a missing
/// value means the widest*, attack 15 F2): a section that leaves out `preset` (one written only
/// to mark `trusted_relay`) keeps the stored preset — a section never replaces the stored grant
/// wholesale — and where neither says, a section's silence is the narrowest preset. Only a client
/// nobody configured at all (`local`, `default`, a client kind, with no section and no record)
/// has the built-in `full`, which `archgate setup` writes down as the person's choice.
pub fn grant_parts(
    name: &str,
    stored: Option<&StoredClient>,
    config: &Config,
) -> (Preset, Option<Vec<String>>) {
    let section = config.clients.get(name);
    // A stored preset is checked when `clients add` writes it; one spoiled since grants the
    // narrowest.
    let stored_preset = stored.map(|s| parse_preset(&s.preset).unwrap_or(Preset::ReadOnly));
    let preset = match (section.and_then(|c| c.preset), stored_preset) {
        (Some(p), _) => p,
        (None, Some(p)) => p,
        (None, None) if section.is_some() => Preset::ReadOnly,
        (None, None) => Preset::Full,
    };
    let tools = match section.and_then(|c| c.tools.as_ref()) {
        Some(t) => Some(t.iter().cloned().collect()),
        None => stored.and_then(|s| s.tools.clone()),
    };
    (preset, tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class: *a missing value means the widest* (attack 15 F2). A section that leaves a key
    /// out keeps the stored record's; with nothing stored its silence is the narrowest preset.
    #[test]
    fn a_section_without_a_preset_keeps_the_stored_grant_and_never_widens() {
        let stored = StoredClient {
            name: "phone".into(),
            token_sha256: String::new(),
            preset: "read-only".into(),
            tools: Some(vec!["pkg_search".into()]),
            created: String::new(),
        };
        let relay_only = crate::config::load_str("[clients.phone]\ntrusted_relay = true\n").config;
        assert_eq!(
            grant_parts("phone", Some(&stored), &relay_only),
            (Preset::ReadOnly, Some(vec!["pkg_search".to_owned()]))
        );
        let said = crate::config::load_str("[clients.phone]\npreset = \"desktop\"\n").config;
        assert_eq!(
            grant_parts("phone", Some(&stored), &said),
            (Preset::Desktop, Some(vec!["pkg_search".to_owned()]))
        );
        let bare = crate::config::load_str("[clients.cursor]\ntrusted_relay = true\n").config;
        assert_eq!(grant_parts("cursor", None, &bare), (Preset::ReadOnly, None));
        // Nobody configured it at all: the built-in grant `setup` writes down.
        assert_eq!(
            grant_parts("cursor", None, &Config::default()),
            (Preset::Full, None)
        );
    }
}

//! The tool catalogue: every tool archgate offers, each declared once.
//!
//! A tool is a type implementing `archgate_core::tool::Tool` in one of the family modules below.
//! Its `ToolSpec` gives the name, description, tier and annotations; its argument type's doc
//! comments become the JSON schema. tools/list, `archgate tools`, TOOLS.md and the policy tier all
//! derive from those definitions.

use archgate_core::config::Config;
use archgate_core::gate::Catalogue;
use archgate_core::paths::Paths;

mod system;

pub fn catalogue(_paths: &Paths, _config: &Config) -> Catalogue {
    let mut c = Catalogue::default();
    c.add(system::SystemStatus);
    c
}

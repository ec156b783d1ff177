//! Language variants: the ArchWiki names translations `Title (Autonym)`, e.g. `Pacman (Español)`.

/// ArchWiki language codes and the autonyms used in translated titles.
const LANGS: &[(&str, &str)] = &[
    ("ar", "العربية"),
    ("bg", "Български"),
    ("bs", "Bosanski"),
    ("ca", "Català"),
    ("cs", "Čeština"),
    ("da", "Dansk"),
    ("de", "Deutsch"),
    ("el", "Ελληνικά"),
    ("en", "English"),
    ("eo", "Esperanto"),
    ("es", "Español"),
    ("fa", "فارسی"),
    ("fi", "Suomi"),
    ("fr", "Français"),
    ("he", "עברית"),
    ("hr", "Hrvatski"),
    ("hu", "Magyar"),
    ("id", "Indonesia"),
    ("it", "Italiano"),
    ("ja", "日本語"),
    ("ko", "한국어"),
    ("lt", "Lietuvių"),
    ("nb", "Norsk Bokmål"),
    ("nl", "Nederlands"),
    ("pl", "Polski"),
    ("pt", "Português"),
    ("ro", "Română"),
    ("ru", "Русский"),
    ("sk", "Slovenčina"),
    ("sr", "Српски"),
    ("sv", "Svenska"),
    ("th", "ไทย"),
    ("tr", "Türkçe"),
    ("uk", "Українська"),
    ("zh-hans", "简体中文"),
    ("zh-hant", "正體中文"),
];

/// Normalizes a language argument (`ES`, `es`, `Español`, `zh_Hans`) to its code; `None` for English
/// or an empty argument. Unknown codes are passed through lower-cased.
pub fn lang_code(arg: Option<&str>) -> Option<String> {
    let a = arg?.trim();
    if a.is_empty() {
        return None;
    }
    let lower = a.to_lowercase().replace('_', "-");
    let code = LANGS
        .iter()
        .find(|(code, name)| *code == lower || name.to_lowercase() == lower)
        .map(|(code, _)| (*code).to_owned())
        .unwrap_or(lower);
    (code != "en").then_some(code)
}

/// The autonym of a language code.
pub fn autonym(code: &str) -> Option<&'static str> {
    LANGS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The ArchWiki title of a translation: `Pacman` + `es` → `Pacman (Español)`.
pub fn variant_title(title: &str, code: &str) -> String {
    match autonym(code) {
        Some(name) => format!("{title} ({name})"),
        None => title.to_owned(),
    }
}

/// The language of a title by its suffix: `Pacman (Español)` → `es`; English otherwise.
pub fn lang_of_title(title: &str) -> &'static str {
    let Some(open) = title.rfind(" (") else {
        return "en";
    };
    let Some(name) = title[open + 2..].strip_suffix(')') else {
        return "en";
    };
    LANGS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(c, _)| *c)
        .unwrap_or("en")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants() {
        assert_eq!(lang_code(Some("ES")).as_deref(), Some("es"));
        assert_eq!(lang_code(Some("Deutsch")).as_deref(), Some("de"));
        assert_eq!(lang_code(Some("zh_Hans")).as_deref(), Some("zh-hans"));
        assert_eq!(lang_code(Some("en")), None);
        assert_eq!(variant_title("Pacman", "es"), "Pacman (Español)");
        assert_eq!(lang_of_title("Pacman (Español)"), "es");
        assert_eq!(lang_of_title("Xorg (disambiguation)"), "en");
    }
}

//! Paths that hold credentials (keys, tokens, password stores, browser profiles) and
//! variables that carry them.

use super::super::Sink;
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word};

pub(super) fn secret(p: &str) -> Option<&'static str> {
    if p.starts_with("$pkgdir") || p.starts_with("$srcdir") || p.starts_with("$startdir") {
        return None;
    }
    let l = p.to_ascii_lowercase();
    const SECRETS: &[(&str, &str)] = &[
        ("/.ssh", "SSH keys"),
        (".ssh/", "SSH keys"),
        ("id_rsa", "an SSH private key"),
        ("id_ed25519", "an SSH private key"),
        ("id_ecdsa", "an SSH private key"),
        ("authorized_keys", "SSH authorized keys"),
        ("/.gnupg", "GnuPG keys"),
        (".gnupg/", "GnuPG keys"),
        ("/.mozilla", "a Firefox profile"),
        ("/.librewolf", "a browser profile"),
        ("/.zen", "a browser profile"),
        ("/.waterfox", "a browser profile"),
        ("/.floorp", "a browser profile"),
        ("/.thunderbird", "a mail profile"),
        (".config/google-chrome", "a Chrome profile"),
        (".config/chromium", "a Chromium profile"),
        (".config/bravesoftware", "a Brave profile"),
        (".config/vivaldi", "a Vivaldi profile"),
        (".config/opera", "an Opera profile"),
        (".config/microsoft-edge", "an Edge profile"),
        ("cookies.sqlite", "browser cookies"),
        ("login data", "saved browser passwords"),
        ("logins.json", "saved browser passwords"),
        ("key4.db", "the Firefox password store"),
        (".config/discord", "the Discord token store"),
        ("local storage/leveldb", "app tokens"),
        (".local/share/telegramdesktop", "the Telegram session"),
        (".config/signal", "the Signal database"),
        ("/.aws", "AWS credentials"),
        (".config/gcloud", "Google Cloud credentials"),
        ("/.azure", "Azure credentials"),
        ("/.kube", "Kubernetes credentials"),
        (".docker/config.json", "Docker registry credentials"),
        (".git-credentials", "git credentials"),
        ("/.netrc", "login credentials"),
        ("/.npmrc", "npm tokens"),
        ("/.pypirc", "PyPI tokens"),
        (".cargo/credentials", "crates.io tokens"),
        (".config/gh/", "GitHub CLI tokens"),
        (".config/hub", "GitHub tokens"),
        (".local/share/keyrings", "the desktop keyring"),
        (".password-store", "the pass password store"),
        ("wallet.dat", "a cryptocurrency wallet"),
        ("/.electrum", "a cryptocurrency wallet"),
        ("/.bitcoin", "a cryptocurrency wallet"),
        ("/.ethereum", "a cryptocurrency wallet"),
        ("/exodus", "a cryptocurrency wallet"),
        ("/etc/shadow", "the password hashes"),
        ("/etc/gshadow", "the password hashes"),
        ("/etc/sudoers", "the sudo rules"),
    ];
    let homeish = l.contains("$home")
        || l.contains("/home/")
        || l.contains("/root/")
        || l.contains("${home")
        || l.starts_with('.')
        || l.contains("/etc/");
    if !homeish && !l.contains("id_rsa") && !l.contains("id_ed25519") {
        return None;
    }
    SECRETS.iter().find(|(m, _)| l.contains(m)).map(|(_, w)| *w)
}

pub(super) fn credential_vars(cmd: &Cmd, sink: &mut Sink) {
    const VARS: &[&str] = &[
        "${GITHUB_TOKEN}",
        "${GH_TOKEN}",
        "${NPM_TOKEN}",
        "${AWS_SECRET_ACCESS_KEY}",
        "${AWS_ACCESS_KEY_ID}",
        "${OPENAI_API_KEY}",
        "${ANTHROPIC_API_KEY}",
        "${SSH_AUTH_SOCK}",
        "${GITLAB_TOKEN}",
        "${CARGO_REGISTRY_TOKEN}",
        "${PYPI_TOKEN}",
    ];
    // `ssh-agent -a "$SSH_AUTH_SOCK"` names the socket the agent creates (also under a
    // fork's name, `hpnssh-agent`): an agent started by a unit the package ships holds the keys
    // its person adds later, and reads none.
    let (prog, args) = names::program(cmd);
    let agent_socket = |w: &Word| {
        prog.ends_with("ssh-agent")
            && cmd.phase == Phase::Runtime
            && args
                .iter()
                .position(|a| std::ptr::eq(a, w))
                .is_some_and(|i| i > 0 && args[i - 1].text == "-a")
    };
    if let Some(w) = cmd
        .argv
        .iter()
        .find(|w| VARS.iter().any(|v| w.text.contains(v)) && !agent_socket(w))
    {
        sink.cmd(
            "AUR-SECRETS",
            Severity::High,
            cmd,
            format!(
                "reads a credential from the environment ({}): a build has no use for it",
                w.text
            ),
        );
    }
}

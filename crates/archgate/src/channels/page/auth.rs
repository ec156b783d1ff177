//! Who may use the approval page: one-time login links, session cookies, CSRF tokens, and the
//! Host/Origin checks that keep other web pages out.
//!
//! - A login link carries a random token that works once, within two minutes. It is handed out
//!   only over the control socket, never in a tool result or the audit log — and never on a
//!   command line: `archgate ui` gets a *login file* instead (`login-<random>.html`, 0600 in the
//!   0700 runtime directory, forwarding to the link) and gives the browser opener only its path,
//!   which every local user may read in `/proc/PID/cmdline` without learning anything. The file
//!   is removed when its link is used or expires. `archgate ui --print` shows a short one-time
//!   code for the login form at `/login` instead of a link (a few wrong guesses end every live
//!   code). Against another process of the same user none of this is a barrier — that is what
//!   person presence is for.
//! - Using it sets a session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other
//!   site's page sends it), named after the port (cookies do not separate ports, instances do).
//! - Every state change carries the session's CSRF token in `X-CSRF-Token`, compared in constant
//!   time; a foreign `Origin`, a cross-site `Sec-Fetch-Site`, or a foreign `Host` is refused.
//!
//! Secrets are kept as SHA-256 digests, so a lookup's timing says nothing about a token.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// A login link works this long.
pub const LINK_TTL: Duration = Duration::from_secs(120);
/// A session lasts this long.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// At most this many unused links and live sessions are kept; the oldest go first.
const MAX_LINKS: usize = 8;
const MAX_SESSIONS: usize = 16;

#[derive(Debug)]
struct Session {
    csrf: String,
    created: Instant,
}

/// An unused login link: when it was made, the login file that holds it, if any, and whether
/// it is a short code a person types (guessable in principle, so a few wrong guesses end every
/// live code).
#[derive(Debug)]
struct Link {
    at: Instant,
    file: Option<std::path::PathBuf>,
    short: bool,
}

/// Letters and digits a person reads and types without confusion (no 0/O, 1/I/L, U).
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTVWXYZ23456789";
/// A short code has this many characters (30^8: about 39 bits), shown as `XXXX-XXXX`.
const CODE_LEN: usize = 8;
/// This many wrong guesses (of anything) while short codes are live end all of them.
const MAX_WRONG: u32 = 5;

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(f) = &self.file {
            let _ = std::fs::remove_file(f);
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    links: HashMap<[u8; 32], Link>,
    wrong: u32,
    sessions: HashMap<[u8; 32], Session>,
}

/// Login links and sessions of one page.
#[derive(Debug)]
pub struct Auth {
    port: u16,
    inner: Mutex<Inner>,
}

/// A session that was just created: the cookie value and its CSRF token.
#[derive(Debug)]
pub struct NewSession {
    pub cookie_value: String,
}

fn digest(s: &str) -> [u8; 32] {
    Sha256::digest(s.as_bytes()).into()
}

/// 256 random bits, hex. `None` when the OS random number generator fails: then there is no
/// safe token, and none is made.
pub fn random_token() -> Option<String> {
    let mut b = [0u8; 32];
    match getrandom::fill(&mut b) {
        Ok(()) => Some(hex::encode(b)),
        Err(e) => {
            tracing::error!("the OS random number generator failed: {e}");
            None
        }
    }
}

impl Auth {
    pub fn new(port: u16) -> Auth {
        Auth {
            port,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn cookie_name(&self) -> String {
        format!("archgate_page_{}", self.port)
    }

    /// A new one-time login token.
    pub fn mint_link_token(&self) -> Option<String> {
        let t = random_token()?;
        self.keep_link(&t, None);
        Some(t)
    }

    /// A new one-time short code (`XXXX-XXXX`) for a person to type into the page's login form:
    /// what `archgate ui --print` shows, so no link usable by pasting leaves the terminal.
    pub fn mint_code(&self) -> Option<String> {
        let mut b = [0u8; CODE_LEN];
        getrandom::fill(&mut b).ok()?;
        // 256 is not a multiple of 30: redraw the few biased bytes.
        for x in b.iter_mut() {
            while *x >= 240 {
                let mut one = [0u8; 1];
                getrandom::fill(&mut one).ok()?;
                *x = one[0];
            }
        }
        let code: String = b
            .iter()
            .map(|x| CODE_ALPHABET[*x as usize % CODE_ALPHABET.len()] as char)
            .collect();
        self.keep_link_as(&code, None, true);
        Some(format!("{}-{}", &code[..4], &code[4..]))
    }

    /// A typed code as it was minted: letters upper-cased, anything but letters and digits
    /// (the dash, spaces) dropped.
    pub fn normalize_code(typed: &str) -> String {
        typed
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_uppercase())
            .take(64)
            .collect()
    }

    fn keep_link(&self, token: &str, file: Option<std::path::PathBuf>) {
        self.keep_link_as(token, file, false);
    }

    fn keep_link_as(&self, token: &str, file: Option<std::path::PathBuf>, short: bool) {
        let mut g = self.lock();
        g.links.retain(|_, l| l.at.elapsed() < LINK_TTL);
        if g.links.len() >= MAX_LINKS
            && let Some(oldest) = g.links.iter().min_by_key(|(_, l)| l.at).map(|(k, _)| *k)
        {
            g.links.remove(&oldest);
        }
        g.links.insert(
            digest(token),
            Link {
                at: Instant::now(),
                file,
                short,
            },
        );
    }

    /// A new one-time login, written as a login file in `dir` (0600; `dir` is the 0700 runtime
    /// directory): an HTML page that forwards the browser to the login link. Only the file's
    /// path needs to travel (to the browser opener); the token stays inside it. The file is
    /// removed when the link is used, replaced or expired (`sweep`).
    #[cfg(test)]
    pub fn mint_login_file(&self, dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        self.mint_login_file_to(dir, "")
    }

    /// A new one-time login file (see `mint_login_file`) whose link ends with `fragment` (empty,
    /// or "#call=ID" written by archgate, never by an agent): the browser keeps it across the
    /// login's redirect, so the page opens at that place.
    pub fn mint_login_file_to(
        &self,
        dir: &std::path::Path,
        fragment: &str,
    ) -> std::io::Result<std::path::PathBuf> {
        let no_random = || std::io::Error::other("the OS random number generator failed");
        let t = random_token().ok_or_else(no_random)?;
        let name = random_token().ok_or_else(no_random)?;
        let file = dir.join(format!("login-{}.html", &name[..24]));
        let link = format!("http://127.0.0.1:{}/login?t={t}{fragment}", self.port);
        let html = format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\">\n\
             <meta name=\"referrer\" content=\"no-referrer\">\n\
             <meta http-equiv=\"refresh\" content=\"0; url={link}\">\n\
             <title>archgate approval page</title></head>\n\
             <body><p>Opening the archgate approval page… \
             <a href=\"{link}\">continue</a> (works once, for two minutes).</p></body></html>\n"
        );
        archgate_core::paths::write_private_file(&file, html.as_bytes())?;
        self.keep_link(&t, Some(file.clone()));
        Ok(file)
    }

    /// Forgets expired links (and removes their login files).
    pub fn sweep(&self) {
        self.lock().links.retain(|_, l| l.at.elapsed() < LINK_TTL);
    }

    /// Uses a login link's token (`GET /login?t=…`, 256 bits): at most once, within its
    /// lifetime. A short code is not accepted here, and a wrong token is not counted: any web
    /// page the person's browser loads can send this request (a navigation, an iframe), so it
    /// must neither guess codes nor end them (attack 5a F2).
    pub fn redeem_link(&self, token: &str) -> Option<NewSession> {
        self.redeem(token, false)
    }

    /// Uses a short code typed into the page's own form (`POST /login`, same-origin only): at
    /// most once, within its lifetime. Wrong codes are counted while codes are live, and
    /// `MAX_WRONG` of them end every live code.
    pub fn redeem_code(&self, code: &str) -> Option<NewSession> {
        self.redeem(code, true)
    }

    fn redeem(&self, token: &str, typed: bool) -> Option<NewSession> {
        let mut g = self.lock();
        let key = digest(token);
        let link = match g.links.get(&key) {
            Some(l) if l.short == typed => g.links.remove(&key),
            _ => None,
        };
        let Some(link) = link else {
            if !typed {
                return None;
            }
            // Counted only while short codes are live: they are what guessing could find.
            if g.links.values().any(|l| l.short) {
                g.wrong += 1;
            }
            if g.wrong >= MAX_WRONG {
                g.links.retain(|_, l| !l.short);
                g.wrong = 0;
            }
            return None;
        };
        if link.at.elapsed() >= LINK_TTL {
            return None;
        }
        drop(link); // its login file goes with it
        g.sessions.retain(|_, s| s.created.elapsed() < SESSION_TTL);
        if g.sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = g
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.created)
                .map(|(k, _)| *k)
        {
            g.sessions.remove(&oldest);
        }
        let cookie_value = random_token()?;
        let csrf = random_token()?;
        g.sessions.insert(
            digest(&cookie_value),
            Session {
                csrf,
                created: Instant::now(),
            },
        );
        Some(NewSession { cookie_value })
    }

    /// The CSRF token of a live session, if the cookie names one.
    pub fn session_csrf(&self, cookie_value: &str) -> Option<String> {
        let g = self.lock();
        let s = g.sessions.get(&digest(cookie_value))?;
        (s.created.elapsed() < SESSION_TTL).then(|| s.csrf.clone())
    }

    /// The `Set-Cookie` value for a new session.
    pub fn set_cookie(&self, s: &NewSession) -> String {
        format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}",
            self.cookie_name(),
            s.cookie_value,
            SESSION_TTL.as_secs()
        )
    }

    /// The session cookie's value from a `Cookie` header.
    pub fn cookie_from(&self, header: Option<&str>) -> Option<String> {
        let name = self.cookie_name();
        header?.split(';').find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name).then(|| v.to_owned())
        })
    }

    pub fn allowed_hosts(&self) -> [String; 2] {
        [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ]
    }

    pub fn host_ok(&self, host: Option<&str>) -> bool {
        host.is_some_and(|h| {
            self.allowed_hosts()
                .iter()
                .any(|a| a.eq_ignore_ascii_case(h))
        })
    }

    /// No Origin (a top-level navigation) or this page's own.
    pub fn origin_ok(&self, origin: Option<&str>) -> bool {
        match origin {
            None => true,
            Some(o) => self
                .allowed_hosts()
                .iter()
                .any(|a| o.eq_ignore_ascii_case(&format!("http://{a}"))),
        }
    }
}

/// Constant-time equality for the CSRF token.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_works_once_and_makes_a_session() {
        let a = Auth::new(8766);
        let t = a.mint_link_token().unwrap();
        let s = a.redeem_link(&t).expect("first use");
        assert!(a.redeem_link(&t).is_none(), "second use");
        let csrf = a.session_csrf(&s.cookie_value).expect("session");
        assert_eq!(csrf.len(), 64);
        assert!(a.session_csrf("nonsense").is_none());
        let header = format!("x=1; {}={}", a.cookie_name(), s.cookie_value);
        assert_eq!(a.cookie_from(Some(&header)), Some(s.cookie_value.clone()));
        let cookie = a.set_cookie(&s);
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    }

    #[test]
    fn only_this_pages_host_and_origin() {
        let a = Auth::new(8766);
        assert!(a.host_ok(Some("127.0.0.1:8766")));
        assert!(a.host_ok(Some("localhost:8766")));
        assert!(!a.host_ok(Some("127.0.0.1:8765")));
        assert!(!a.host_ok(Some("evil.example:8766")));
        assert!(!a.host_ok(None));
        assert!(a.origin_ok(None));
        assert!(a.origin_ok(Some("http://127.0.0.1:8766")));
        assert!(!a.origin_ok(Some("http://127.0.0.1:8765")));
        assert!(!a.origin_ok(Some("https://evil.example")));
        assert!(!a.origin_ok(Some("null")));
    }

    #[test]
    fn a_login_file_is_private_holds_the_link_and_goes_when_used() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let a = Auth::new(8766);
        let f = a.mint_login_file(t.path()).unwrap();
        assert!(f.starts_with(t.path()));
        let name = f.file_name().unwrap().to_str().unwrap();
        let mode = std::fs::metadata(&f).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let html = std::fs::read_to_string(&f).unwrap();
        let token = html.split("/login?t=").nth(1).unwrap()[..64].to_owned();
        assert!(
            !name.contains(&token[..24]),
            "the path says nothing of the token"
        );
        assert!(html.contains("http-equiv=\"refresh\""));
        assert!(a.redeem_link(&token).is_some());
        assert!(!f.exists(), "used: removed");
        // Replaced links take their files along.
        let first = a.mint_login_file(t.path()).unwrap();
        for _ in 0..MAX_LINKS {
            a.mint_link_token();
        }
        assert!(!first.exists(), "given way: removed");
    }

    #[test]
    fn a_short_code_works_once_typed_loosely_and_guessing_ends_it() {
        let a = Auth::new(8766);
        let code = a.mint_code().unwrap();
        assert_eq!(code.len(), CODE_LEN + 1);
        assert!(
            code.chars()
                .all(|c| c == '-' || CODE_ALPHABET.contains(&(c as u8)))
        );
        let typed = format!(" {} ", code.to_lowercase().replace('-', " "));
        assert!(a.redeem_code(&Auth::normalize_code(&typed)).is_some());
        assert!(
            a.redeem_code(&Auth::normalize_code(&code)).is_none(),
            "once"
        );
        let code = a.mint_code().unwrap();
        let link = a.mint_link_token().unwrap();
        for _ in 0..MAX_WRONG {
            assert!(a.redeem_code("AAAAAAAA").is_none());
        }
        assert!(
            a.redeem_code(&Auth::normalize_code(&code)).is_none(),
            "guessing ended it"
        );
        assert!(
            a.redeem_link(&link).is_some(),
            "a 256-bit link is not a guess away"
        );
    }

    /// Attack 5a F2: any web page can make the browser request `/login?t=…` (hidden iframes);
    /// those tokens are never counted, so they cannot end the person's live code, and a short
    /// code is only taken from the page's own form, never from a link.
    #[test]
    fn wrong_link_tokens_neither_count_nor_redeem_a_code() {
        let a = Auth::new(8766);
        let code = Auth::normalize_code(&a.mint_code().unwrap());
        for i in 0..MAX_WRONG * 4 {
            assert!(a.redeem_link(&format!("guess{i}")).is_none());
        }
        assert!(a.redeem_link(&code).is_none(), "a code is not a link");
        assert!(
            a.redeem_code(&code).is_some(),
            "the person's code still works after any number of link requests"
        );
        let link = a.mint_link_token().unwrap();
        assert!(a.redeem_code(&link).is_none(), "a link is not a typed code");
        assert!(a.redeem_link(&link).is_some());
    }

    #[test]
    fn oldest_links_give_way() {
        let a = Auth::new(1);
        let first = a.mint_link_token().unwrap();
        for _ in 0..MAX_LINKS {
            a.mint_link_token();
        }
        assert!(a.redeem_link(&first).is_none());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
    }
}

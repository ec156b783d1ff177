//! `CommandSpec`: what to run, as written by the calling code.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::pin::ProgramPin;

/// A program and its arguments, plus the few things a caller may add: environment variables,
/// a timeout, bytes for stdin and a working directory. Built with chained calls:
///
/// ```
/// # use archgate_exec::CommandSpec;
/// let spec = CommandSpec::new("pacman").args(["-Q", "linux"]);
/// assert_eq!(spec.display(), "pacman -Q linux");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct CommandSpec {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) stdin: Option<Vec<u8>>,
    pub(crate) cwd: Option<PathBuf>,
    /// The file `program` named when the command was judged ([`crate::Executor::pin`]): what
    /// runs, checked unchanged just before it starts.
    pub(crate) pin: Option<Arc<ProgramPin>>,
    /// Whether archgate's own environment is the base (filtered by the table); see
    /// [`CommandSpec::clear_env`].
    pub(crate) inherit_env: bool,
    /// Whether the program's `PATH` holds root's directories only; see
    /// [`CommandSpec::root_path_only`].
    pub(crate) root_path_only: bool,
}

impl CommandSpec {
    /// A command running `program` (a bare name looked up in the search directories, or an
    /// absolute path inside one of them) with no arguments.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            timeout: None,
            stdin: None,
            cwd: None,
            pin: None,
            inherit_env: true,
            root_path_only: false,
        }
    }

    /// Append one argument, passed to the program literally.
    pub fn arg(mut self, a: impl Into<String>) -> Self {
        self.args.push(a.into());
        self
    }

    /// Append arguments, passed to the program literally.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, it: I) -> Self {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }

    /// Set an environment variable on top of the inherited ones (a later value for the same key
    /// wins). Only a name of [`crate::env::TABLE`] other than `PATH` may be set; another makes
    /// the run fail before anything starts. Values are never logged.
    pub fn env(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Start from nothing instead of archgate's own environment: the program receives only what
    /// [`env`](Self::env) sets (still under the table's rules) and the rebuilt `PATH`.
    pub fn clear_env(mut self) -> Self {
        self.inherit_env = false;
        self
    }

    /// The program's `PATH` holds only directories root's all the way (the person's search
    /// directories left out): for a program whose own children must be root's programs — the
    /// hand-off's terminal, whose notification and URL commands it finds on its `PATH` (attack
    /// 24 F3: the person's `notify-send` forked a process that kept a control connection and
    /// exec'd the real helper under it).
    pub fn root_path_only(mut self) -> Self {
        self.root_path_only = true;
        self
    }

    /// Whether archgate's own environment is the base ([`clear_env`](Self::clear_env) not called).
    pub fn inherits_env(&self) -> bool {
        self.inherit_env
    }

    /// Timeout for this command, overriding the permit's and the configured default.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }

    /// Bytes written to the program's stdin, which is then closed. Without it stdin is
    /// `/dev/null`. The bytes are never logged.
    pub fn stdin_bytes(mut self, b: Vec<u8>) -> Self {
        self.stdin = Some(b);
        self
    }

    /// Working directory of the program. Without it the program starts in `/`.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The program as written.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The arguments as written.
    pub fn arg_list(&self) -> &[String] {
        &self.args
    }

    /// The extra environment variables, in the order given.
    pub fn env_list(&self) -> &[(String, String)] {
        &self.env
    }

    /// The timeout given to this command, if any.
    pub fn timeout_value(&self) -> Option<Duration> {
        self.timeout
    }

    /// The working directory given to this command, if any.
    pub fn cwd_value(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref()
    }

    /// Whether `other` runs the same thing: the same program, arguments and stdin bytes (the
    /// environment, timeout and working directory are the caller's plumbing, not the command).
    pub fn same_command(&self, other: &CommandSpec) -> bool {
        self.program == other.program && self.args == other.args && self.stdin == other.stdin
    }

    /// The same command with `program` replaced (the gate pins a resolved program's path).
    pub fn with_program(mut self, program: impl Into<String>) -> Self {
        self.program = program.into();
        self
    }

    /// The file this command's program was pinned to when it was judged, if it was.
    pub fn pinned(&self) -> Option<&ProgramPin> {
        self.pin.as_deref()
    }

    /// The bytes given on stdin, if any.
    pub fn stdin_value(&self) -> Option<&[u8]> {
        self.stdin.as_deref()
    }

    /// The command as written, each word shell-quoted where needed, for records and questions to
    /// the person. Nothing ever runs this string: it is for reading (and pasting) only.
    pub fn display(&self) -> String {
        let mut out = quote(&self.program);
        for a in &self.args {
            out.push(' ');
            out.push_str(&quote(a));
        }
        out
    }
}

impl fmt::Debug for CommandSpec {
    /// Shows the command and the environment keys, never values or stdin contents.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env_keys: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("CommandSpec")
            .field("command", &self.display())
            .field("env_keys", &env_keys)
            .field("timeout", &self.timeout)
            .field("stdin_len", &self.stdin.as_ref().map(Vec::len))
            .field("cwd", &self.cwd)
            .field("pinned", &self.pin.as_ref().map(|p| p.path()))
            .finish()
    }
}

/// POSIX shell quoting: plain words stay as they are, anything else goes in single quotes.
pub(crate) fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b',' | b':' | b'+' | b'@' | b'%'
                )
        })
        && !word.starts_with('~');
    if plain {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_quotes_only_what_needs_it() {
        let spec = CommandSpec::new("printf").args([
            "%s\\n",
            "plain-word_1.2/x",
            "",
            "it's",
            "; touch X",
            "$(id)",
            "a\nb",
        ]);
        assert_eq!(
            spec.display(),
            "printf '%s\\n' plain-word_1.2/x '' 'it'\\''s' '; touch X' '$(id)' 'a\nb'"
        );
    }

    #[test]
    fn debug_hides_stdin_and_env_values() {
        let spec = CommandSpec::new("cat")
            .env("HOME", "secret-value")
            .stdin_bytes(b"secret-input".to_vec());
        let dbg = format!("{spec:?}");
        assert!(dbg.contains("HOME"));
        assert!(!dbg.contains("secret-value"));
        assert!(!dbg.contains("secret-input"));
        assert!(dbg.contains("stdin_len: Some(12)"));
    }
}

//! Client identities for HTTP: a name, a grant, and a token stored only as a hash.
//!
//! The token created on first run lives in `state/token` (0600) so `archgate client-config` can
//! print it; it belongs to the client `default`. Tokens of clients added later are printed once
//! and stored as SHA-256 hashes in `state/clients.json`. Every comparison is constant-time.
//! The stdio client is `local`; its grant comes from `[clients.local]` in config. What grant a
//! name has is `clients/grant.rs`'s; this file is the registry of names and tokens.

use arc_swap::ArcSwap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;
use subtle::ConstantTimeEq;

use crate::config::Config;
use crate::file_watch::FileWatch;
use crate::gate::{Client, Transport};
use crate::paths::write_private_file;

mod editing;
mod grant;
mod retired;

pub use crate::token_id::TokenId;
pub use grant::{grant_for, grant_parts, parse_preset};

pub const DEFAULT_CLIENT: &str = "default";
pub const LOCAL_CLIENT: &str = "local";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredClient {
    pub name: String,
    /// hex SHA-256 of the token.
    pub token_sha256: String,
    pub preset: String,
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    pub created: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("a client named {0:?} exists already")]
    Exists(String),
    #[error("no client named {0:?}")]
    NotFound(String),
    #[error("{0:?} is not a valid client name (letters, digits, '-', '_', at most 64)")]
    BadName(String),
    #[error("{0:?} is not a preset (read-only, desktop, full)")]
    BadPreset(String),
    #[error("cannot store clients at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the OS random generator failed: {0}")]
    Random(String),
    #[error("archgate's client store is not used: {0}")]
    Untrusted(String),
}

impl ClientError {
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::Exists(_) => "exists",
            ClientError::NotFound(_) => "not_found",
            ClientError::BadName(_) => "invalid_name",
            ClientError::BadPreset(_) => "invalid_preset",
            ClientError::Io { .. } => "io",
            ClientError::Random(_) => "random",
            ClientError::Untrusted(_) => "untrusted_state",
        }
    }
}

/// 256 random bits, hex-encoded.
pub fn new_token() -> Result<String, ClientError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).map_err(|e| ClientError::Random(e.to_string()))?;
    Ok(hex::encode(b))
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Constant-time equality of two secrets of possibly different lengths.
pub fn secrets_equal(a: &str, b: &str) -> bool {
    // Compare digests so the time does not depend on where the strings differ or their length.
    hash(a).ct_eq(&hash(b)).into()
}

#[derive(Debug)]
pub struct ClientStore {
    token_file: PathBuf,
    clients_file: PathBuf,
    /// What the two files held when last read; every request reads it, without a lock.
    loaded: ArcSwap<Loaded>,
    /// Held while this process changes the files (add, revoke, rename), so changes do not race.
    editing: Mutex<()>,
    /// Whether the files changed since they were read: see [`ClientStore::reload_if_changed`].
    changes: Changes,
    /// Names that were token clients and are no longer (`retired.rs`).
    retired: retired::Retired,
    /// Told the names a change adds before they authenticate ([`ClientStore::on_added`]).
    added_hook: OnceLock<AddedHook>,
    /// Told each rename a change makes ([`ClientStore::on_renamed`]).
    renamed_hook: OnceLock<RenamedHook>,
}

/// What runs when a token client's name changes: `(from, to)`.
type RenamedFn = dyn Fn(&str, &str) + Send + Sync;
struct RenamedHook(Box<RenamedFn>);

impl std::fmt::Debug for RenamedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RenamedHook")
    }
}

/// What runs when names become token clients.
type AddedFn = dyn Fn(&[String]) + Send + Sync;
struct AddedHook(Box<AddedFn>);

impl std::fmt::Debug for AddedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AddedHook")
    }
}

#[derive(Debug)]
struct Loaded {
    default_token: DefaultToken,
    clients: Vec<StoredClient>,
}

/// How a change to the files is noticed: by an inotify watch once the server starts one
/// ([`ClientStore::watch`]; a request then reads one counter), else by the files' `mtime`s.
#[derive(Debug)]
struct Changes {
    watch: OnceLock<FileWatch>,
    /// The watch's change count when the files were last read.
    seen: AtomicU64,
    /// Modification times of the two files when last read (when there is no watch).
    stamp: Mutex<(Option<SystemTime>, Option<SystemTime>)>,
}

/// The default client's token and its digest, taken once (every request is compared with it).
#[derive(Debug, Clone)]
struct DefaultToken {
    token: String,
    sha256: [u8; 32],
}

impl DefaultToken {
    fn new(token: String) -> DefaultToken {
        DefaultToken {
            sha256: hash(&token),
            token,
        }
    }
}

/// `paths::read_private_file` for this process's uid.
fn read_private_file(p: &Path) -> Result<Option<Vec<u8>>, String> {
    crate::paths::read_private_file(p, nix::unistd::getuid().as_raw())
}

/// The text of archgate's private file `p` (not UTF-8: as absent).
fn read_private_text(p: &Path) -> Result<Option<String>, ClientError> {
    Ok(read_private_file(p)
        .map_err(ClientError::Untrusted)?
        .and_then(|b| String::from_utf8(b).ok()))
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

impl ClientStore {
    /// Loads the store, creating the first-run token (0600) when there is none. A token or
    /// clients file that is not archgate's (`paths::read_private_file`: a link, another user's
    /// file, a directory another user controls) stops the start: its token would authenticate.
    pub fn open(token_file: &Path, clients_file: &Path) -> Result<ClientStore, ClientError> {
        let token = match read_private_text(token_file)? {
            Some(t) if t.trim().len() >= 32 => t.trim().to_owned(),
            _ => {
                let t = new_token()?;
                write_private_file(token_file, format!("{t}\n").as_bytes()).map_err(|source| {
                    ClientError::Io {
                        path: token_file.to_owned(),
                        source,
                    }
                })?;
                t
            }
        };
        let clients: Vec<StoredClient> = read_private_file(clients_file)
            .map_err(ClientError::Untrusted)?
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(ClientStore {
            token_file: token_file.to_owned(),
            clients_file: clients_file.to_owned(),
            loaded: ArcSwap::from_pointee(Loaded {
                default_token: DefaultToken::new(token),
                clients,
            }),
            editing: Mutex::new(()),
            changes: Changes {
                watch: OnceLock::new(),
                seen: AtomicU64::new(0),
                stamp: Mutex::new((mtime(token_file), mtime(clients_file))),
            },
            retired: retired::Retired::open(clients_file),
            added_hook: OnceLock::new(),
            renamed_hook: OnceLock::new(),
        })
    }

    /// Notices changes to the files by inotify from now on, instead of two `stat`s at each
    /// [`ClientStore::reload_if_changed`] (a server checks on every request). Whether a watch
    /// started; without one (no inotify here) the `stat`s go on. The first check after it
    /// re-reads the files once, so nothing changed before the watch began is missed.
    pub fn watch(&self) -> bool {
        if self.changes.watch.get().is_some() {
            return true;
        }
        match FileWatch::start(&[&self.token_file, &self.clients_file]) {
            Some(w) => {
                let _ = self.changes.watch.set(w);
                true
            }
            None => false,
        }
    }

    pub fn default_token(&self) -> String {
        self.loaded.load().default_token.token.clone()
    }

    /// Re-reads the files if either changed since the last read (the CLI changes them while a
    /// server runs). Returns whether anything was re-read. With a watch standing this reads one
    /// counter; without (none started, or lost), two `stat`s.
    pub fn reload_if_changed(&self) -> bool {
        if let Some(w) = self.changes.watch.get() {
            let now = w.changes();
            // Read before `active`: a watch lost after this still counted its loss as a change.
            if w.active() {
                if self.changes.seen.load(Ordering::Acquire) == now
                    || self.changes.seen.swap(now, Ordering::AcqRel) == now
                {
                    return false;
                }
                self.reload();
                return true;
            }
        }
        let now = (mtime(&self.token_file), mtime(&self.clients_file));
        let mut st = self.changes.stamp.lock().unwrap_or_else(|p| p.into_inner());
        if *st == now {
            return false;
        }
        *st = now;
        drop(st);
        self.reload();
        true
    }

    /// Re-reads clients.json and the token file (each kept as it was when it cannot be read, or
    /// is not archgate's: a token or client another user planted never authenticates).
    pub fn reload(&self) {
        let _editing = self.editing.lock().unwrap_or_else(|p| p.into_inner());
        self.reload_held();
    }

    /// Starts a change: held across archgate's processes (`clients/editing.rs`), from the files
    /// as they are now.
    fn edit(&self) -> Result<editing::Editing<'_>, ClientError> {
        let held = editing::take(&self.editing, &self.clients_file)?;
        self.reload_held();
        Ok(held)
    }

    /// [`ClientStore::reload`] with `editing` held by the caller.
    fn reload_held(&self) {
        let clients: Option<Vec<StoredClient>> = read_private_file(&self.clients_file)
            .inspect_err(|why| tracing::error!("clients not reloaded: {why}"))
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let token = read_private_text(&self.token_file)
            .inspect_err(|e| tracing::error!("token not reloaded: {e}"))
            .ok()
            .flatten()
            .map(|t| DefaultToken::new(t.trim().to_owned()));
        if clients.is_none() && token.is_none() {
            return;
        }
        let old = self.loaded.load();
        if let Some(new) = &clients {
            self.before_changing(&old.clients, new);
        }
        self.loaded.store(Arc::new(Loaded {
            default_token: token.unwrap_or_else(|| old.default_token.clone()),
            clients: clients.unwrap_or_else(|| old.clients.clone()),
        }));
    }

    pub fn list(&self) -> Vec<StoredClient> {
        self.loaded.load().clients.clone()
    }

    /// Runs `f` with the names each change makes token clients (added, or renamed to), before
    /// their token authenticates: what waits under such a name was asked by a stdio client of
    /// that name, and must not be answered as the token client's (attack 18 F6). Set once.
    pub fn on_added(&self, f: impl Fn(&[String]) + Send + Sync + 'static) {
        let _ = self.added_hook.set(AddedHook(Box::new(f)));
    }

    /// Runs `f` with each rename a change makes — `(from, to)`: the same token's digest under
    /// another name — before the new name authenticates, whichever process made it: what this
    /// process holds under the old name (a budget's counts) is to follow the token (attack 23
    /// F3: a rename by the CLI left the daemon's counts behind). Set once.
    pub fn on_renamed(&self, f: impl Fn(&str, &str) + Send + Sync + 'static) {
        let _ = self.renamed_hook.set(RenamedHook(Box::new(f)));
    }

    /// What a change from `old` to `new` means for the hooks, told before `new` is in force.
    fn before_changing(&self, old: &[StoredClient], new: &[StoredClient]) {
        if let Some(hook) = self.renamed_hook.get() {
            for n in new {
                if let Some(o) = old
                    .iter()
                    .find(|o| o.token_sha256 == n.token_sha256 && o.name != n.name)
                {
                    (hook.0)(&o.name, &n.name);
                }
            }
        }
        self.before_adding(old, new);
    }

    fn before_adding(&self, old: &[StoredClient], new: &[StoredClient]) {
        let Some(hook) = self.added_hook.get() else {
            return;
        };
        let added: Vec<String> = new
            .iter()
            .filter(|c| !old.iter().any(|o| o.name == c.name))
            .map(|c| c.name.clone())
            .collect();
        if !added.is_empty() {
            (hook.0)(&added);
        }
    }

    /// Whether `name` was a client of `archgate clients` once and is no longer (revoked, or
    /// renamed away): the person's trust given to it stays its token's (`retired.rs`).
    pub fn was_token_client(&self, name: &str) -> bool {
        self.retired.contains(name)
    }

    /// Whether the token `id` was taken from authenticates now (the default token, or a stored
    /// client's): a change that rotated or revoked it says no, whatever name it went by.
    pub fn holds(&self, id: &TokenId) -> bool {
        let loaded = self.loaded.load();
        let mut found: bool = id.0.ct_eq(&loaded.default_token.sha256).into();
        for c in loaded.clients.iter() {
            let mut stored = [0u8; 32];
            if hex::decode_to_slice(&c.token_sha256, &mut stored).is_ok() {
                found |= bool::from(id.0.ct_eq(&stored));
            }
        }
        found
    }

    /// The client a bearer token belongs to. Every stored hash is compared, in constant time.
    pub fn authenticate(&self, token: &str, config: &Config) -> Option<Client> {
        let mut found: Option<Client> = None;
        let h = hash(token);
        // As `secrets_equal`, with the token's digest taken once for every comparison.
        let loaded = self.loaded.load();
        let default: bool = h.ct_eq(&loaded.default_token.sha256).into();
        if default {
            found = Some(Client {
                name: DEFAULT_CLIENT.into(),
                grant: grant_for(DEFAULT_CLIENT, None, config),
                agent: None,
                transport: Transport::Http,
                token: Some(TokenId(h)),
            });
        }
        // Read in place: every request comes here, and the list need not be copied to be read.
        for c in loaded.clients.iter() {
            let mut stored = [0u8; 32];
            if hex::decode_to_slice(&c.token_sha256, &mut stored).is_err() {
                continue;
            }
            if bool::from(h.ct_eq(&stored)) {
                found = Some(Client {
                    name: c.name.clone(),
                    grant: grant_for(&c.name, Some(c), config),
                    agent: None,
                    transport: Transport::Http,
                    token: Some(TokenId(h)),
                });
            }
        }
        found
    }

    fn save(&self, list: &[StoredClient]) -> Result<(), ClientError> {
        let bytes = serde_json::to_vec_pretty(list).unwrap_or_default();
        write_private_file(&self.clients_file, &bytes).map_err(|source| ClientError::Io {
            path: self.clients_file.clone(),
            source,
        })
    }

    /// Adds a client and returns its token (shown once; only its hash is kept).
    pub fn add(
        &self,
        name: &str,
        preset: &str,
        tools: Option<Vec<String>>,
    ) -> Result<String, ClientError> {
        valid_name(name)?;
        parse_preset(preset)?;
        let _editing = self.edit()?;
        let mut list = self.loaded.load().clients.clone();
        if name == DEFAULT_CLIENT || name == LOCAL_CLIENT || list.iter().any(|c| c.name == name) {
            return Err(ClientError::Exists(name.to_owned()));
        }
        let token = new_token()?;
        list.push(StoredClient {
            name: name.to_owned(),
            token_sha256: hex::encode(hash(&token)),
            preset: preset.to_owned(),
            tools,
            created: crate::audit::now_rfc3339(),
        });
        self.save(&list)?;
        self.keep_clients(list);
        Ok(token)
    }

    pub fn revoke(&self, name: &str) -> Result<(), ClientError> {
        let _editing = self.edit()?;
        if name == DEFAULT_CLIENT {
            // Revoking the default client rotates its token.
            let t = new_token()?;
            write_private_file(&self.token_file, format!("{t}\n").as_bytes()).map_err(
                |source| ClientError::Io {
                    path: self.token_file.clone(),
                    source,
                },
            )?;
            let old = self.loaded.load();
            self.loaded.store(Arc::new(Loaded {
                default_token: DefaultToken::new(t),
                clients: old.clients.clone(),
            }));
            return Ok(());
        }
        let mut list = self.loaded.load().clients.clone();
        let before = list.len();
        list.retain(|c| c.name != name);
        if list.len() == before {
            return Err(ClientError::NotFound(name.to_owned()));
        }
        self.retired.add(name)?;
        self.save(&list)?;
        self.keep_clients(list);
        Ok(())
    }

    /// Keeps `list` as the clients in force (the caller holds `editing`).
    fn keep_clients(&self, list: Vec<StoredClient>) {
        let old = self.loaded.load();
        self.before_changing(&old.clients, &list);
        self.loaded.store(Arc::new(Loaded {
            default_token: old.default_token.clone(),
            clients: list,
        }));
    }

    pub fn rename(&self, from: &str, to: &str) -> Result<(), ClientError> {
        valid_name(to)?;
        let _editing = self.edit()?;
        let mut list = self.loaded.load().clients.clone();
        if to == DEFAULT_CLIENT || to == LOCAL_CLIENT || list.iter().any(|c| c.name == to) {
            return Err(ClientError::Exists(to.to_owned()));
        }
        let c = list
            .iter_mut()
            .find(|c| c.name == from)
            .ok_or_else(|| ClientError::NotFound(from.to_owned()))?;
        c.name = to.to_owned();
        self.retired.add(from)?;
        self.save(&list)?;
        self.keep_clients(list);
        Ok(())
    }
}

fn valid_name(name: &str) -> Result<(), ClientError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ClientError::BadName(name.to_owned()))
    }
}

#[cfg(test)]
mod tests;

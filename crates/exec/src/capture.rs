//! What a finished program left behind, and the head-and-tail output cap.
//!
//! Each stream is collected while the program runs into a head (the first `cap` bytes) and a
//! ring of the last `cap` bytes, so memory stays bounded however much a program writes. When the
//! program is done the cap is shared between stdout and stderr (a stream that needs less than
//! half leaves the rest to the other) and each stream is cut to its share, keeping its head and
//! tail around a marker that says how many bytes were left out.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// How the program ended: an exit code, or the signal that ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code, when the program exited by itself.
    pub code: Option<i32>,
    /// The signal number, when a signal ended the program.
    pub signal: Option<i32>,
}

impl From<ExitStatus> for ExitInfo {
    fn from(s: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Self {
            code: s.code(),
            signal: s.signal(),
        }
    }
}

/// The result of a program that ran to its end (any exit code).
#[derive(Debug, Clone)]
pub struct Output {
    /// The resolved file that ran.
    pub program: PathBuf,
    /// How it ended.
    pub status: ExitInfo,
    /// Its stdout, possibly cut (see `truncated`).
    pub stdout: Vec<u8>,
    /// Its stderr, possibly cut (see `truncated`).
    pub stderr: Vec<u8>,
    /// True when bytes were left out of stdout or stderr to respect the cap.
    pub truncated: bool,
    /// Wall time from start to the end of the process group.
    pub duration: Duration,
}

impl Output {
    /// Exit code 0.
    pub fn success(&self) -> bool {
        self.status.code == Some(0)
    }

    /// stdout as text, invalid UTF-8 replaced.
    pub fn stdout_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// stderr as text, invalid UTF-8 replaced.
    pub fn stderr_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// The marker put where bytes were left out.
pub(crate) fn marker(omitted: u64) -> String {
    format!("\n… [archgate: {omitted} bytes omitted] …\n")
}

/// Bounded collector for one stream: the first `cap` bytes and the last `cap` bytes.
#[derive(Debug)]
pub(crate) struct HeadTail {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl HeadTail {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.cap - self.head.len();
        if room > 0 {
            let n = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.is_empty() || self.cap == 0 {
            return;
        }
        if bytes.len() >= self.cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The stream cut to `keep` bytes (head and tail around a marker); `keep` must not exceed
    /// the collector's cap. Returns the bytes and whether anything was left out.
    pub(crate) fn finish(self, keep: usize) -> (Vec<u8>, bool) {
        if self.total <= keep as u64 {
            // Everything fits, and everything is in the head (total <= keep <= cap).
            return (self.head, false);
        }
        let mut head_len = keep / 2;
        while head_len > 0 && is_continuation(self.head[head_len]) && keep / 2 - head_len < 3 {
            head_len -= 1;
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        // The tail ring holds the last min(total, cap) bytes of the stream.
        let mut tail_start = tail.len() - (keep - keep / 2).min(tail.len());
        let first = tail_start;
        while tail_start < tail.len() && is_continuation(tail[tail_start]) && tail_start - first < 3
        {
            tail_start += 1;
        }
        let kept = head_len + (tail.len() - tail_start);
        let omitted = self.total - kept as u64;
        let mut out = Vec::with_capacity(kept + 48);
        out.extend_from_slice(&self.head[..head_len]);
        out.extend_from_slice(marker(omitted).as_bytes());
        out.extend_from_slice(&tail[tail_start..]);
        (out, true)
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0b1100_0000 == 0b1000_0000
}

/// Share `cap` bytes between two streams of the given sizes: each gets up to half, and what one
/// does not need goes to the other.
pub(crate) fn share(cap: usize, a: u64, b: u64) -> (usize, usize) {
    let fit = |n: u64, limit: usize| usize::try_from(n).map_or(limit, |n| n.min(limit));
    if a.saturating_add(b) <= cap as u64 {
        return (fit(a, cap), fit(b, cap));
    }
    let half = cap / 2;
    if a <= half as u64 {
        let a = fit(a, half);
        (a, cap - a)
    } else if b <= (cap - half) as u64 {
        let b = fit(b, cap - half);
        (cap - b, b)
    } else {
        (half, cap - half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(cap: usize, chunks: &[&[u8]]) -> HeadTail {
        let mut h = HeadTail::new(cap);
        for c in chunks {
            h.push(c);
        }
        h
    }

    #[test]
    fn small_output_is_kept_whole() {
        let h = collect(16, &[b"hello ", b"world"]);
        assert_eq!(h.finish(16), (b"hello world".to_vec(), false));
    }

    #[test]
    fn large_output_keeps_head_and_tail_with_marker() {
        let data: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let h = collect(100, &data.chunks(7).collect::<Vec<_>>());
        let (out, cut) = h.finish(100);
        assert!(cut);
        let m = marker(900);
        let mut expected = data[..50].to_vec();
        expected.extend_from_slice(m.as_bytes());
        expected.extend_from_slice(&data[950..]);
        assert_eq!(out, expected);
    }

    #[test]
    fn cut_respects_utf8_boundaries() {
        let text = "é".repeat(100); // 200 bytes, every char two bytes
        let h = collect(64, &[text.as_bytes()]);
        let (out, cut) = h.finish(21);
        assert!(cut);
        let s = String::from_utf8(out).expect("still valid UTF-8");
        assert!(s.starts_with("éééé"));
        assert!(s.ends_with("éééé"));
    }

    #[test]
    fn cap_is_shared_between_streams() {
        assert_eq!(share(100, 10, 500), (10, 90));
        assert_eq!(share(100, 500, 10), (90, 10));
        assert_eq!(share(100, 500, 500), (50, 50));
        assert_eq!(share(100, 30, 40), (30, 40));
        assert_eq!(share(0, 5, 5), (0, 0));
    }
}

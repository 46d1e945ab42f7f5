//! UTF-8 text handling: incremental decoding of a byte stream that arrives in arbitrary pieces,
//! one character at a time for hot paths that stop at the first one they cannot take
//! ([`decode_char`]), cutting text into bounded pieces on character boundaries ([`pieces`]), and
//! decoded chunks that several holders share without copying them ([`SharedText`]).
//!
//! A sequence split across reads is joined; each maximal invalid subpart becomes one U+FFFD (the
//! rule of [`String::from_utf8_lossy`], Unicode §3.9); nothing is dropped. Only the (at most three)
//! bytes of a cut-off sequence are carried over, so a chunk is never copied just to be decoded.

use std::sync::Arc;

/// A chunk of decoded output, shared by whoever needs it — the consumer it streams to, a
/// transcript keeping the recent past — without a copy each. Reads as a `&str`.
#[derive(Clone, Debug)]
pub struct SharedText(Arc<String>);

impl SharedText {
    /// Bytes of storage the text holds (at least its length).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        Self(Arc::new(text))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        Self::from(text.to_string())
    }
}

impl std::ops::Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decodes a byte stream chunk by chunk.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    /// The start of a sequence the previous chunk cut off (at most 3 bytes).
    pending: Vec<u8>,
}

impl Utf8Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, keeping an incomplete trailing sequence for the next call.
    pub fn decode(&mut self, mut bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len() + 4);
        // Complete the carried-over sequence one byte at a time: it needs at most 3 more.
        while !self.pending.is_empty() {
            let Some((&next, rest)) = bytes.split_first() else {
                return out;
            };
            self.pending.push(next);
            match std::str::from_utf8(&self.pending) {
                Ok(text) => {
                    out.push_str(text);
                    self.pending.clear();
                    bytes = rest;
                }
                Err(err) if err.error_len().is_none() => bytes = rest,
                Err(_) => {
                    // The carried bytes were a valid prefix, so `next` broke the sequence: the
                    // prefix is one maximal invalid subpart, and `next` starts afresh.
                    out.push(char::REPLACEMENT_CHARACTER);
                    self.pending.clear();
                }
            }
        }
        self.decode_fresh(bytes, &mut out);
        out
    }

    /// [`decode`](Self::decode) for a buffer the caller gives up: when nothing is carried over and
    /// the buffer holds no invalid bytes (most output), the buffer becomes the string as it is,
    /// without a copy; a sequence cut off at its end is carried over as usual.
    pub fn decode_owned(&mut self, bytes: Vec<u8>) -> String {
        if !self.pending.is_empty() {
            return self.decode(&bytes);
        }
        let error = match String::from_utf8(bytes) {
            Ok(text) => return text,
            Err(error) => error,
        };
        let valid = error.utf8_error().valid_up_to();
        let cut_off = error.utf8_error().error_len().is_none();
        let mut bytes = error.into_bytes();
        if !cut_off {
            return self.decode(&bytes);
        }
        self.pending.extend_from_slice(&bytes[valid..]);
        bytes.truncate(valid);
        // SAFETY: `valid_up_to` says the bytes before it are valid UTF-8.
        unsafe { String::from_utf8_unchecked(bytes) }
    }

    /// Advances over `bytes` whose text nobody needs, keeping only what the next
    /// [`decode`](Self::decode) depends on: the sequence cut off at the end. Costs a look at the
    /// last three bytes, whatever the length, and allocates nothing (it runs on every feed of the
    /// terminal's parser).
    pub fn skip(&mut self, bytes: &[u8]) {
        // A cut-off sequence is at most three bytes and starts with a lead byte, which no earlier
        // byte can claim, so the last three bytes decide it alone.
        let tail = if bytes.len() >= 3 {
            self.pending.clear();
            &bytes[bytes.len() - 3..]
        } else {
            bytes
        };
        let mut joined = [0u8; 6];
        let carried = self.pending.len();
        joined[..carried].copy_from_slice(&self.pending);
        joined[carried..carried + tail.len()].copy_from_slice(tail);
        let mut rest = &joined[..carried + tail.len()];
        self.pending.clear();
        // What `decode` would carry over: the end of the bytes, past every whole character and
        // every invalid subpart, when it is the start of a sequence.
        while let Err(error) = std::str::from_utf8(rest) {
            let after_valid = &rest[error.valid_up_to()..];
            match error.error_len() {
                Some(invalid) => rest = &after_valid[invalid..],
                None => {
                    self.pending.extend_from_slice(after_valid);
                    return;
                }
            }
        }
    }

    /// How many bytes of a cut-off sequence are carried over to the next call (0 to 3).
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Ends the stream: an incomplete trailing sequence becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }

    fn decode_fresh(&mut self, mut bytes: &[u8], out: &mut String) {
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    out.push_str(text);
                    return;
                }
                Err(err) => {
                    let (valid, after) = bytes.split_at(err.valid_up_to());
                    // `valid_up_to` guarantees this prefix is valid UTF-8.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match err.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            bytes = &after[bad..];
                        }
                        None => {
                            self.pending.extend_from_slice(after);
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// The character that `bytes` starts with as UTF-8 outside ASCII (RFC 3629: no overlong forms,
/// surrogates or values past U+10FFFF, as [`std::str::from_utf8`] decides) and its length; `None`
/// when it is ASCII, not UTF-8, or cut short. For a few characters at a time between ASCII, this
/// costs a fraction of validating them with `from_utf8` first.
#[inline]
pub fn decode_char(bytes: &[u8]) -> Option<(char, usize)> {
    let (len, least) = match *bytes.first()? {
        0xc2..=0xdf => (2, 0x80),
        0xe0..=0xef => (3, 0x800),
        0xf0..=0xf4 => (4, 0x1_0000),
        _ => return None,
    };
    let encoded = bytes.get(..len)?;
    let mut value = u32::from(encoded[0]) & (0x7f >> len);
    for &byte in &encoded[1..] {
        if byte & 0xc0 != 0x80 {
            return None;
        }
        value = value << 6 | u32::from(byte & 0x3f);
    }
    if value < least {
        return None;
    }
    char::from_u32(value).map(|c| (c, len))
}

/// `text` cut into pieces of at most `max` bytes, each ending on a character boundary. A `max`
/// below 4 (the longest UTF-8 sequence) is taken as 4, so every piece holds at least one character.
pub fn pieces(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let max = max.max(4);
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(max);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `bytes` read in pieces ending at `cuts`, each piece borrowed; checks that handing
    /// each piece over ([`Utf8Decoder::decode_owned`]) decodes the same.
    fn decode_in_pieces(bytes: &[u8], cuts: &[usize]) -> String {
        let mut borrowed = Utf8Decoder::new();
        let mut owned = Utf8Decoder::new();
        let (mut out, mut out_owned) = (String::new(), String::new());
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
            out += &borrowed.decode(&bytes[start..cut]);
            out_owned += &owned.decode_owned(bytes[start..cut].to_vec());
            start = cut;
        }
        out += &borrowed.finish();
        out_owned += &owned.finish();
        assert_eq!(out_owned, out, "decode_owned, cuts {cuts:?}");
        out
    }

    #[test]
    fn a_valid_buffer_becomes_the_string_without_a_copy() {
        let mut decoder = Utf8Decoder::new();
        let mut buffer = Vec::with_capacity(64);
        // "héllo " and the first two bytes of "€".
        buffer.extend_from_slice(b"h\xc3\xa9llo \xe2\x82");
        let address = buffer.as_ptr();
        let text = decoder.decode_owned(buffer);
        assert_eq!((text.as_str(), text.as_ptr()), ("héllo ", address));
        assert_eq!(decoder.decode_owned(vec![0xac]), "€");
    }

    #[test]
    fn joins_sequences_split_anywhere() {
        let text = "a€b😀c日本";
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                assert_eq!(decode_in_pieces(bytes, &[i, j]), text, "cuts {i},{j}");
            }
        }
        // One byte per read.
        let cuts: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(decode_in_pieces(bytes, &cuts), text);
    }

    #[test]
    fn invalid_bytes_match_from_utf8_lossy_however_they_are_cut() {
        let cases: [&[u8]; 8] = [
            b"\xff",
            b"a\xffb",
            b"\xe2\x82",
            b"\xe2\x82x",
            b"\xf0\x9f\x98",
            b"\xf0\x9f\x98\xe2\x82\xac",
            b"\xc3\xc3\xa9",
            b"\xed\xa0\x80z",
        ];
        for bytes in cases {
            let want = String::from_utf8_lossy(bytes).into_owned();
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    assert_eq!(
                        decode_in_pieces(bytes, &[i, j]),
                        want,
                        "{bytes:?} cut {i},{j}"
                    );
                }
            }
        }
    }

    #[test]
    fn skip_leaves_the_state_a_full_decode_would() {
        let bytes = "a€b😀c日本".as_bytes();
        for cut in 0..=bytes.len() {
            for split in 0..=cut {
                let mut skipped = Utf8Decoder::new();
                skipped.skip(&bytes[..split]);
                skipped.skip(&bytes[split..cut]);
                let mut full = Utf8Decoder::new();
                let _ = full.decode(&bytes[..cut]);
                assert_eq!(
                    skipped.pending_len(),
                    full.pending_len(),
                    "cut {split},{cut}"
                );
                assert_eq!(
                    skipped.decode(&bytes[cut..]),
                    full.decode(&bytes[cut..]),
                    "cut {split},{cut}"
                );
            }
        }
    }

    #[test]
    fn incomplete_tail_becomes_one_replacement_at_finish() {
        let mut decoder = Utf8Decoder::new();
        assert_eq!(decoder.decode(b"ok\xe2\x82"), "ok");
        assert_eq!(decoder.finish(), "\u{fffd}");
        assert_eq!(decoder.finish(), "");
    }

    #[test]
    fn characters_decode_as_from_utf8_decides() {
        // Every lead byte with every second byte, and the continuations that reach the edges of
        // each range (overlong, surrogate, past U+10FFFF) for the third and fourth.
        let edges = [
            0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff,
        ];
        for lead in 0x80..=0xffu8 {
            for second in 0..=0xffu8 {
                for third in edges {
                    for fourth in edges {
                        let bytes = [lead, second, third, fourth];
                        let standard = bytes.utf8_chunks().next().and_then(|chunk| {
                            let c = chunk.valid().chars().next()?;
                            Some((c, c.len_utf8()))
                        });
                        assert_eq!(decode_char(&bytes), standard, "{bytes:02x?}");
                        let cut = standard.map_or(1, |(_, len)| len - 1);
                        assert_eq!(decode_char(&bytes[..cut]), None, "{bytes:02x?} cut");
                    }
                }
            }
        }
        assert_eq!(decode_char(b"a"), None);
        assert_eq!(decode_char(b""), None);
    }

    #[test]
    fn pieces_end_on_character_boundaries_and_cover_the_text() {
        let text = "ab€dé😀xyz";
        let cut: Vec<&str> = super::pieces(text, 4).collect();
        assert_eq!(cut, ["ab", "€d", "é", "😀", "xyz"]);
        assert_eq!(super::pieces(text, 0).collect::<String>(), text);
        assert_eq!(super::pieces("", 4).count(), 0);
        assert_eq!(super::pieces(text, 1 << 16).collect::<Vec<_>>(), [text]);
    }
}

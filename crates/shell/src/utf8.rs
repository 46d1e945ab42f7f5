//! Incremental UTF-8 decoding for streamed output.
//!
//! Reads split multi-byte sequences anywhere, so each chunk is decoded with what the previous one
//! left over. Invalid sequences become U+FFFD — one per maximal invalid subpart, the same rule as
//! [`String::from_utf8_lossy`] (Unicode §3.9, "U+FFFD substitution of maximal subparts") — and
//! nothing is dropped.

/// Decodes a byte stream chunk by chunk.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    /// The start of a sequence that the last chunk cut off (at most 3 bytes).
    pending: Vec<u8>,
}

impl Utf8Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes`, keeping an incomplete trailing sequence for the next call.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let mut input = std::mem::take(&mut self.pending);
        input.extend_from_slice(bytes);
        let mut out = String::with_capacity(input.len());
        let mut rest = input.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    // SAFETY-free: `valid_up_to` guarantees this prefix is valid UTF-8.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match err.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(bytes: &[u8], cut: usize) -> String {
        let mut decoder = Utf8Decoder::new();
        let (a, b) = bytes.split_at(cut);
        let mut out = decoder.decode(a);
        out += &decoder.decode(b);
        out += &decoder.finish();
        out
    }

    #[test]
    fn joins_sequences_split_at_every_byte() {
        let text = "a€b😀c";
        for cut in 0..=text.len() {
            assert_eq!(decode_in_pieces(text.as_bytes(), cut), text, "cut at {cut}");
        }
    }

    #[test]
    fn replaces_invalid_bytes_like_from_utf8_lossy() {
        let cases: &[&[u8]] = &[
            b"a\xffb",
            b"\xe2\x82",
            b"\xe2\x82x",
            b"\xf0\x9f\x98",
            b"\xc0\xaf",
            b"ok\xed\xa0\x80",
        ];
        for bytes in cases {
            for cut in 0..=bytes.len() {
                assert_eq!(
                    decode_in_pieces(bytes, cut),
                    String::from_utf8_lossy(bytes),
                    "{bytes:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn an_unfinished_sequence_is_held_until_more_arrives() {
        let mut decoder = Utf8Decoder::new();
        assert_eq!(decoder.decode(b"x\xe2\x82"), "x");
        assert_eq!(decoder.decode(b"\xac"), "€");
        assert_eq!(decoder.finish(), "");
    }
}

//! Opening trace files: plain, gzip, zstd or xz, recognised by their first
//! bytes (not by the file name), read through one bounded buffer.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::TraceError;

/// Read buffer of a trace file (and of each decompressor's output).
const BUF_BYTES: usize = 1 << 20;

/// Longest line a trace may hold, without its line end: 64 KiB, a
/// hundred times the longest line of any supported format. A longer line
/// (a binary file, a file without line ends) is an error naming it, so a
/// reader never holds more than this of one line.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Most memory the xz decoder may take. `xz -9` needs 65 MiB; a header
/// asking for more (up to 4 GiB of dictionary) is refused, not allocated.
pub const XZ_MEMLIMIT_BYTES: u64 = 256 << 20;

/// Most memory a gzip decoder holds (its 32 KiB window and state).
const GZIP_STATE_BYTES: u64 = 64 << 10;

/// Most memory the zstd decoder holds: the largest window it accepts by
/// default (2^27 bytes; a frame asking for more is refused) and a block.
const ZSTD_STATE_BYTES: u64 = (1 << 27) + (256 << 10);

/// Most bytes reading one trace of compression `kind` holds at once,
/// whatever its length: the read buffer, a decompressor's state and output
/// buffer, and one line.
pub fn reading_bytes(kind: Compression) -> u64 {
    let file = BUF_BYTES as u64;
    let line = MAX_LINE_BYTES as u64 + 3;
    let decoder = match kind {
        Compression::None => 0,
        Compression::Gzip => BUF_BYTES as u64 + GZIP_STATE_BYTES,
        Compression::Zstd => BUF_BYTES as u64 + ZSTD_STATE_BYTES,
        Compression::Xz => BUF_BYTES as u64 + XZ_MEMLIMIT_BYTES,
    };
    file + decoder + line
}

/// Compression of a trace file, from its magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Plain text.
    None,
    /// gzip (`1f 8b`).
    Gzip,
    /// Zstandard (`28 b5 2f fd`).
    Zstd,
    /// xz (`fd 37 7a 58 5a 00`).
    Xz,
}

impl Compression {
    /// Recognises a compressed stream from its first bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Lowercase name for messages and reports.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }
}

/// Opens `path` for line reading, decompressing transparently.
pub(super) fn open_file(path: &Path, name: &str) -> Result<Lines<'static>, TraceError> {
    let io = |e: std::io::Error| TraceError::new(name, 0, "file", e.to_string());
    let mut file = BufReader::with_capacity(BUF_BYTES, File::open(path).map_err(io)?);
    let kind = Compression::sniff(file.fill_buf().map_err(io)?);
    Ok(Lines::new(wrap(file, kind, name)?, name, kind))
}

/// The compression of the file at `path`, from its first bytes.
pub(super) fn sniff_file(path: &Path, name: &str) -> Result<Compression, TraceError> {
    let io = |e: std::io::Error| TraceError::new(name, 0, "file", e.to_string());
    let mut head = [0u8; 6];
    let mut file = File::open(path).map_err(io)?;
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]).map_err(io)? {
            0 => break,
            k => n += k,
        }
    }
    Ok(Compression::sniff(&head[..n]))
}

/// Opens bytes held in memory for line reading, decompressing transparently.
pub(super) fn open_bytes<'a>(data: &'a [u8], name: &str) -> Result<Lines<'a>, TraceError> {
    let kind = Compression::sniff(data);
    Ok(Lines::new(wrap(data, kind, name)?, name, kind))
}

/// Wraps a raw byte reader in the decompressor `kind` names.
fn wrap<'a, R: BufRead + Send + 'a>(
    raw: R,
    kind: Compression,
    name: &str,
) -> Result<Box<dyn BufRead + Send + 'a>, TraceError> {
    let boxed = |r: Box<dyn Read + Send + 'a>| -> Box<dyn BufRead + Send + 'a> {
        Box::new(BufReader::with_capacity(BUF_BYTES, r))
    };
    Ok(match kind {
        Compression::None => Box::new(raw),
        Compression::Gzip => boxed(Box::new(flate2::bufread::MultiGzDecoder::new(raw))),
        Compression::Zstd => boxed(Box::new(
            zstd::stream::read::Decoder::with_buffer(raw)
                .map_err(|e| TraceError::new(name, 0, "file", format!("zstd: {e}")))?,
        )),
        Compression::Xz => {
            let stream = liblzma::stream::Stream::new_stream_decoder(
                XZ_MEMLIMIT_BYTES,
                liblzma::stream::CONCATENATED,
            )
            .map_err(|e| TraceError::new(name, 0, "file", format!("xz: {e}")))?;
            boxed(Box::new(liblzma::bufread::XzDecoder::new_stream(
                raw, stream,
            )))
        }
    })
}

/// One line: its 1-based number, its bytes without the line end, and
/// whether it ended with a newline.
pub(super) type Line<'l> = (u64, &'l [u8], bool);

/// Reads lines as bytes, without the `\n` (and a `\r` before it), with a
/// 1-based line counter. A corrupt compressed stream, a line longer than
/// [`MAX_LINE_BYTES`] and a carriage return inside a line (a file with
/// CR-only line ends, which no trace tool writes) become errors naming
/// the line.
pub(super) struct Lines<'a> {
    inner: Box<dyn BufRead + Send + 'a>,
    buf: Vec<u8>,
    lineno: u64,
    name: String,
    compression: Compression,
}

impl<'a> Lines<'a> {
    /// Line reader over `inner`; `name` is the file name used in errors.
    fn new(inner: Box<dyn BufRead + Send + 'a>, name: &str, compression: Compression) -> Self {
        Lines {
            inner,
            buf: Vec::with_capacity(256),
            lineno: 0,
            name: name.to_string(),
            compression,
        }
    }

    /// Lines read so far.
    pub(super) fn lineno(&self) -> u64 {
        self.lineno
    }

    /// The next line, its number and whether it ended with a newline
    /// (a UTF-8 byte order mark before the first line is dropped); `None`
    /// at the end.
    pub(super) fn next_line(&mut self) -> Result<Option<Line<'_>>, TraceError> {
        self.buf.clear();
        // At most the longest line, its `\r\n` and one byte more: enough to
        // tell a line that is too long without reading it whole.
        let bound = (MAX_LINE_BYTES + 3) as u64;
        let n = (&mut self.inner)
            .take(bound)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| {
                let what = match self.compression {
                    Compression::None => String::new(),
                    c => format!("corrupt {} stream: ", c.name()),
                };
                TraceError::new(&self.name, self.lineno + 1, "file", format!("{what}{e}"))
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.lineno += 1;
        let mut line = &self.buf[..];
        let complete = line.last() == Some(&b'\n');
        if complete {
            line = &line[..line.len() - 1];
        }
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        if line.contains(&b'\r') {
            return Err(TraceError::new(
                &self.name,
                self.lineno,
                "line",
                "carriage return inside the line: the file ends its lines with CR alone, \
                 which is not supported; end them with LF or CR LF (e.g. `tr '\\r' '\\n'`)",
            ));
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(TraceError::new(
                &self.name,
                self.lineno,
                "line",
                format!(
                    "longer than {MAX_LINE_BYTES} bytes, the longest line a trace may hold; \
                     is it a text trace?"
                ),
            ));
        }
        if self.lineno == 1 {
            if let Some(l) = line.strip_prefix(b"\xef\xbb\xbf") {
                line = l;
            }
        }
        Ok(Some((self.lineno, line, complete)))
    }
}

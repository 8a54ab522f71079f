//! Power cuts of an image drive: replaying the journal call by call, the
//! capacitor flush saved as one batch and applied.

use std::fs::File;
use std::os::unix::fs::FileExt;

use firmware_core::Error;

use super::file_medium::FileMedium;
use super::journal::{self, Call};
use super::layout::{HeaderSlots, State};
use super::recorded::Recorded;
use super::{io, ImageError};
use crate::engine::Engine;
use crate::interactive::PayloadHost;

/// What a power cut of an engine left.
pub(super) struct Cut<const B: usize> {
    pub file: FileMedium<B>,
    pub flush_ops: u64,
    pub redo_writes: u64,
}

/// The power fails on `eng` (replayed, or live and idle): the core's
/// capacitor flush runs against the in-memory medium with its file writes
/// held back; they are saved as one sealed batch at `end` of the capacitor
/// region, the header says `Redo` (then `next_mount` for power-on
/// `epoch + 1`), and they are applied. A kill at any point leaves either
/// the old state or `Redo`.
pub(super) fn cut_power<const B: usize>(
    mut eng: Engine<'_, Recorded<B>, PayloadHost<B>>,
    file: &File,
    hdr: &mut HeaderSlots,
    epoch: u64,
    end: u64,
    next_mount: bool,
    sync: bool,
) -> Result<Cut<B>, ImageError> {
    let base = hdr.cur.layout.cap_off;
    eng.nand.direct();
    eng.nand.file.defer();
    let flush_ops = eng.cut_power()?;
    let mut nand = eng.into_medium();
    let redo = nand.file.take_redo();
    if let Some(e) = nand.failure() {
        return Err(ImageError::Io(e));
    }
    let mut redo_writes = 0;
    if !redo.is_empty() {
        let mut blob = Vec::new();
        for (off, bytes) in &redo {
            blob.extend_from_slice(&off.to_le_bytes());
            blob.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            blob.extend_from_slice(bytes);
        }
        let len = journal::write_blob(file, base, end, epoch, &blob)?;
        hdr.write(
            file,
            State::Redo {
                epoch,
                mount: next_mount,
                off: end,
                len,
            },
            sync,
        )?;
        redo_writes = apply_redo(file, base, end, epoch)?;
        if sync {
            file.sync_data().map_err(io("syncing the applied flush"))?;
        }
    }
    Ok(Cut {
        file: nand.file,
        flush_ops,
        redo_writes,
    })
}

pub(super) fn diverged_error(d: &str) -> ImageError {
    ImageError::Invalid(format!(
        "the capacitor region does not replay ({d}); was the image written by another build of ftl?"
    ))
}

/// Applies one replayed call to the engine, as the live drive made it.
/// False when the engine failed (the live drive stopped there).
pub(super) fn apply<const B: usize>(
    eng: &mut Engine<'_, Recorded<B>, PayloadHost<B>>,
    call: Call,
) -> bool {
    match call {
        Call::Start { mount, initial_pe } => eng.start(mount, initial_pe).is_ok(),
        Call::Step => eng.step().is_ok(),
        Call::BeginPhase => {
            eng.begin_phase();
            true
        }
        Call::Submit {
            op,
            lpn,
            units,
            at_ns,
            data,
        } => {
            // A refused request (busy, out of range) was refused live too.
            eng.host_mut().set_incoming(data);
            !matches!(
                eng.submit(crate::workload::HostRequest {
                    time_ns: at_ns,
                    op,
                    lpn,
                    units,
                    idle_ns: 0,
                    window: 0,
                    placement: 0,
                }),
                Err(Error::Corrupt(_) | Error::NotReady)
            )
        }
    }
}

/// Applies the saved flush at `off` of the capacitor region; returns the
/// number of writes.
pub(super) fn apply_redo(file: &File, base: u64, off: u64, epoch: u64) -> Result<u64, ImageError> {
    let blob = journal::read_blob(file, base, off, epoch)?;
    let mut at = 0usize;
    let mut n = 0u64;
    let bad = || ImageError::Invalid("the saved capacitor flush is malformed".into());
    while at < blob.len() {
        let h = blob.get(at..at + 12).ok_or_else(bad)?;
        let mut o = [0u8; 8];
        o.copy_from_slice(&h[..8]);
        let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
        let bytes = blob.get(at + 12..at + 12 + len).ok_or_else(bad)?;
        file.write_all_at(bytes, u64::from_le_bytes(o))
            .map_err(io("applying the saved flush"))?;
        at += 12 + len;
        n += 1;
    }
    Ok(n)
}

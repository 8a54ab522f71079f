//! A drive kept in an image file, whose process may be killed at any
//! instant: a kill is a power cut.
//!
//! The file holds the medium (records and full-data pages, written through
//! in a crash-safe order: [`file_medium`]) and the capacitor-protected DRAM
//! as a journal of the current power-on ([`journal`]), written before every
//! change to the medium and before every reply ([`Device::sync`]). Opening
//! the image runs, in order:
//!
//! 1. a saved capacitor flush not yet applied (state `Redo`) is applied;
//! 2. the journal of the last power-on (state `Open`) is replayed: the
//!    engine and core are rebuilt call by call, the medium answering from
//!    the journal ([`recorded`]), so the core's DRAM is what it was at the
//!    kill; then the power fails on it and the core's capacitor flush runs,
//!    its writes collected, saved as one sealed batch (state `Redo`) and
//!    applied, so a kill during this step is harmless;
//! 3. a new power-on starts (state `Open`, next epoch): the core mounts
//!    (or formats again, when the last power-on was a format that never
//!    finished), and the drive is handed to the caller;
//! 4. when the journal has grown past [`ImageOptions::compact_bytes`] and
//!    the caller, idle, returns [`Served::Compact`], the power is cut on the
//!    live core as in step 2 and the next power-on starts (step 3).
//!
//! The layout is in [`layout`] and `docs/nbd.md`.

pub mod damage;
mod drive;
pub mod file_medium;
pub mod journal;
pub mod layout;
mod power;
pub mod recorded;

/// Scratch files and a tiny geometry for the unit tests of this module.
#[cfg(test)]
pub(crate) mod test_files {
    use std::fs::File;
    use std::path::PathBuf;

    use firmware_core::Geometry;

    /// A fresh read-write file in the temporary directory.
    pub fn temp(name: &str) -> (PathBuf, File) {
        let p = std::env::temp_dir().join(format!("ftl-image-unit-{}-{name}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        (p, f)
    }

    /// One plane of 4 blocks of 4 pages of two 4 KiB units.
    pub fn tiny_geo() -> Geometry {
        Geometry {
            channels: 1,
            dies_per_channel: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_bytes: 8192,
            pages_per_wordline: 1,
            units_per_page: 2,
        }
    }
}

use std::fs::{File, OpenOptions};
use std::path::Path;
use std::time::Instant;

use firmware_core::Error;

use crate::engine::{CoreStore, Engine};
use crate::interactive::{Device, Drive, PayloadHost};
use crate::sim::{Plan, FULL_DATA_UNIT_ERROR};
use drive::ImageDrive;
use file_medium::FileMedium;
use journal::Journal;
use layout::{HeaderSlots, Layout, State};
use power::{apply, apply_redo, cut_power, diverged_error};
use recorded::Recorded;

/// Why an image could not be opened or used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageError {
    /// The file is not a usable image for this configuration (truncated,
    /// corrupt, another geometry or configuration): an input error.
    Invalid(String),
    /// Reading or writing the file failed.
    Io(String),
    /// The core or engine failed.
    Core(Error),
}

impl std::fmt::Display for ImageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageError::Invalid(s) | ImageError::Io(s) => f.write_str(s),
            ImageError::Core(e) => write!(f, "{e}"),
        }
    }
}

impl From<Error> for ImageError {
    fn from(e: Error) -> Self {
        ImageError::Core(e)
    }
}

/// Options of an image drive.
#[derive(Clone, Copy, Debug, Default)]
pub struct ImageOptions {
    /// fdatasync the capacitor region and headers after every write (an
    /// operating-system crash then loses nothing acknowledged either; a
    /// killed process loses nothing without it).
    pub sync: bool,
    /// Once the capacitor region holds this many bytes, the drive asks for
    /// a compaction ([`Device::compact_due`]): when the front end is idle it
    /// returns [`Served::Compact`], the power is cut and the drive mounts
    /// again with an empty journal. 0: never.
    pub compact_bytes: u64,
}

/// What the caller's serving function returns for one power-on.
#[derive(Debug)]
pub enum Served<R> {
    /// Stopped for good, with the caller's result, as a power cut would
    /// stop it (what was in flight is torn; the next start replays the
    /// journal).
    Stopped(R),
    /// Shut down cleanly, with the caller's result: the power is cut while
    /// idle as for a compaction and the capacitor region is emptied, so the
    /// file at rest holds the medium alone (every byte of it checksummed).
    Shutdown(R),
    /// Idle and asked to compact: cut the power and serve the next power-on.
    Compact,
}

/// What opening the image did (printed by `ftl serve --image`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Recovery {
    /// Whether the file was created.
    pub created: bool,
    /// Power-on number now running.
    pub epoch: u64,
    /// Calls replayed from the last power-on's journal.
    pub replayed_calls: u64,
    /// Medium results replayed.
    pub replayed_results: u64,
    /// Bytes of journal replayed.
    pub journal_bytes: u64,
    /// Whether the last power-on had finished starting (a cut before that
    /// needs no flush).
    pub was_ready: bool,
    /// Operations of the capacitor flush run at this power-on.
    pub flush_ops: u64,
    /// Writes of the saved flush applied to the file.
    pub redo_writes: u64,
    /// Whether this power-on mounted (else formatted).
    pub mounted: bool,
    /// Wall seconds of the whole recovery and start.
    pub seconds: f64,
    /// Bytes of capacitor region a compaction emptied (0 at a start).
    pub compacted_bytes: u64,
    /// Damage found at open: medium entries and metadata pages that failed
    /// their checks, and capacitor-region payload units poisoned.
    pub detected_corruptions: u64,
    /// Pages of the medium marked damaged at open (they read as errors).
    pub damaged_pages: u64,
    /// Write-payload units of the capacitor region that failed their check
    /// (they read as errors once flushed).
    pub damaged_payload_units: u64,
}

/// A 64-bit FNV-1a hash of the configuration: an image is only reopened
/// with the configuration it was made for.
pub fn config_hash(plan: &Plan) -> u64 {
    let text = format!(
        "{:?}|{:?}|{:?}|{}",
        plan.core, plan.reliability, plan.faults, plan.initial_pe
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Opens (or creates) the image at `path` for `plan`, recovers it as the
/// [module documentation](self) says and lends the drive to `f`, once per
/// power-on: again after each compaction it asks for.
pub fn open<R>(
    plan: &Plan,
    path: &Path,
    opts: ImageOptions,
    mut f: impl FnMut(&mut dyn Device, &Recovery) -> Served<R>,
) -> Result<R, ImageError> {
    match plan.core.geometry.unit_bytes() {
        512 => open_with::<512, R>(plan, path, opts, &mut f),
        1024 => open_with::<1024, R>(plan, path, opts, &mut f),
        2048 => open_with::<2048, R>(plan, path, opts, &mut f),
        4096 => open_with::<4096, R>(plan, path, opts, &mut f),
        8192 => open_with::<8192, R>(plan, path, opts, &mut f),
        16384 => open_with::<16384, R>(plan, path, opts, &mut f),
        _ => Err(ImageError::Invalid(FULL_DATA_UNIT_ERROR.into())),
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> ImageError + '_ {
    move |e| ImageError::Io(format!("{what}: {e}"))
}

/// Opens `path`, creating a sparse image when it does not exist.
fn open_file(path: &Path, lay: Layout, hash: u64) -> Result<(File, HeaderSlots, bool), ImageError> {
    let created = !path.exists();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(created)
        .truncate(false)
        .open(path)
        .map_err(|e| ImageError::Invalid(format!("cannot open: {e}")))?;
    if created {
        file.set_len(lay.cap_off).map_err(io("sizing the image"))?;
        let mut hdr = HeaderSlots::fresh(lay, hash);
        hdr.write(&file, State::Fresh, false)?;
        return Ok((file, hdr, true));
    }
    let len = file.metadata().map_err(io("reading its size"))?.len();
    let hdr = HeaderSlots::read(&file, lay, hash).map_err(|e| match e {
        ImageError::Invalid(m) if len < lay.cap_off => ImageError::Invalid(format!(
            "{m} (truncated: {len} bytes, the configuration's image takes {} bytes)",
            lay.cap_off
        )),
        e => e,
    })?;
    // A truncated medium reads as zeros past the end, which no checksum
    // accepts: what was cut off reads as errors.
    Ok((file, hdr, false))
}

fn clone(file: &File) -> Result<File, ImageError> {
    file.try_clone().map_err(io("reopening the image"))
}

fn open_with<const B: usize, R>(
    plan: &Plan,
    path: &Path,
    opts: ImageOptions,
    f: &mut dyn FnMut(&mut dyn Device, &Recovery) -> Served<R>,
) -> Result<R, ImageError> {
    let mut t0 = Instant::now();
    let mut plan = *plan;
    plan.full_data = true;
    let lay = Layout::new(plan.core.geometry);
    let (file, mut hdr, created) = open_file(path, lay, config_hash(&plan))?;
    let mut rec = Recovery {
        created,
        ..Recovery::default()
    };
    let sync = opts.sync;
    // 1. A fresh image: write the medium's records, then say so.
    let mut medium = if hdr.cur.state == State::Fresh {
        let m = FileMedium::<B>::create(
            clone(&file)?,
            lay,
            plan.reliability,
            plan.faults,
            plan.initial_pe,
        )?;
        hdr.write(
            &file,
            State::Open {
                epoch: 1,
                mount: false,
            },
            sync,
        )?;
        Some(m)
    } else {
        None
    };
    // 2. A saved flush not applied yet.
    if let State::Redo {
        epoch,
        mount,
        off,
        len: _,
    } = hdr.cur.state
    {
        rec.redo_writes = apply_redo(&file, lay.cap_off, off, epoch)?;
        if sync {
            file.sync_data().map_err(io("syncing the applied flush"))?;
        }
        hdr.write(
            &file,
            State::Open {
                epoch: epoch + 1,
                mount,
            },
            sync,
        )?;
    }
    let file_medium = match medium.take() {
        Some(m) => m,
        None => FileMedium::<B>::load(clone(&file)?, lay, plan.reliability, plan.faults)?,
    };
    let State::Open { epoch, mount } = hdr.cur.state else {
        return Err(ImageError::Invalid("unexpected drive state".into()));
    };
    // 3. Replay the last power-on and run its capacitor flush.
    let parsed = journal::parse_units(&file, lay.cap_off, epoch, B)?;
    rec.damaged_pages = file_medium.damaged_pages() as u64;
    rec.damaged_payload_units = parsed.damaged_units;
    let journal_damage = parsed.damaged_units;
    rec.detected_corruptions = file_medium.detected_corruptions() + journal_damage;
    let (file_medium, next_mount) = if parsed.calls.is_empty() {
        (file_medium, mount)
    } else {
        rec.replayed_calls = parsed.calls.len() as u64;
        rec.replayed_results = parsed.results.len() as u64;
        rec.journal_bytes = parsed.end;
        let mut store = CoreStore::new(&plan.core)?;
        let nand = Recorded::replay(file_medium, parsed.results);
        let host = PayloadHost::<B>::reopened(plan.core.logical_units);
        let mut eng = Engine::unstarted(plan.core, &mut store, nand, plan.engine, host)?;
        let last = parsed.calls.len() - 1;
        for (i, (call, before)) in parsed.calls.into_iter().enumerate() {
            let (left, past_end, diverged) = eng.nand.replay_state();
            if let Some(d) = diverged {
                return Err(diverged_error(d));
            }
            if past_end > 0 || rec.replayed_results as usize - left != before {
                return Err(diverged_error(&format!(
                    "call {i} of {} does not line up with the recorded results",
                    last + 1
                )));
            }
            let ok = apply(&mut eng, call);
            while eng.host_mut().pop_done().is_some() {}
            if !ok {
                // The power-on stopped on this error; so does its replay.
                break;
            }
        }
        let (left, _, diverged) = eng.nand.replay_state();
        if let Some(d) = diverged {
            return Err(diverged_error(d));
        }
        if left > 0 {
            return Err(diverged_error(&format!(
                "{left} recorded results were not asked for"
            )));
        }
        rec.was_ready = eng.ftl.is_ready();
        let next_mount = mount || rec.was_ready;
        let cut = cut_power(eng, &file, &mut hdr, epoch, parsed.end, next_mount, sync)?;
        rec.flush_ops = cut.flush_ops;
        rec.redo_writes = cut.redo_writes;
        (cut.file, next_mount)
    };
    // 4. Power-ons, until the caller stops (each compaction is a power
    // cut while idle, taken as in step 3, and a new power-on).
    let (mut file_medium, mut next_mount, mut epoch) = (file_medium, next_mount, epoch);
    loop {
        epoch += 1;
        hdr.write(
            &file,
            State::Open {
                epoch,
                mount: next_mount,
            },
            sync,
        )?;
        rec.epoch = epoch;
        rec.mounted = next_mount;
        let journal = Journal::new(clone(&file)?, lay.cap_off, epoch, 0, 0, sync);
        let nand = Recorded::live(file_medium, journal);
        let mut store = CoreStore::new(&plan.core)?;
        let host = PayloadHost::<B>::reopened(plan.core.logical_units);
        let eng = Engine::unstarted(plan.core, &mut store, nand, plan.engine, host)?;
        let mut drive = ImageDrive {
            inner: Drive { eng, plan },
            compact_at: opts.compact_bytes,
            found_before: journal_damage,
        };
        drive.start(next_mount, plan.initial_pe)?;
        rec.seconds = t0.elapsed().as_secs_f64();
        let shutdown = match f(&mut drive, &rec) {
            Served::Stopped(r) => return Ok(r),
            Served::Shutdown(r) => Some(r),
            Served::Compact => None,
        };
        let t = Instant::now();
        let eng = drive.inner.eng;
        let end = eng.nand.journal.as_ref().map_or(0, Journal::end);
        let cut = cut_power(eng, &file, &mut hdr, epoch, end, true, sync)?;
        if let Some(r) = shutdown {
            // The next power-on's journal is empty: nothing to replay, and
            // the region can go.
            hdr.write(
                &file,
                State::Open {
                    epoch: epoch + 1,
                    mount: true,
                },
                sync,
            )?;
            file.set_len(lay.cap_off)
                .map_err(io("emptying the capacitor region"))?;
            return Ok(r);
        }
        rec = Recovery {
            compacted_bytes: end,
            flush_ops: cut.flush_ops,
            redo_writes: cut.redo_writes,
            was_ready: true,
            ..Recovery::default()
        };
        (file_medium, next_mount) = (cut.file, true);
        t0 = t;
    }
}

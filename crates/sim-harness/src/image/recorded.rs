//! The medium the engine sees in an image drive: the file medium with the
//! journal in front of it.
//!
//! * Live: every operation runs on the [`FileMedium`]; the journal is
//!   written (flushed) before any operation that changes the medium, and
//!   each result is appended to it.
//! * Replay: results come from the journal, in order, and the file is not
//!   touched; each must be for the operation the engine asks for, or the
//!   replay has diverged. Past the journal's end the medium answers with a
//!   placeholder and notes it: such an operation was in flight at the cut
//!   and its completion is never delivered.
//! * Direct: the file medium alone (the capacitor flush at power-on, whose
//!   writes the file medium defers).

use std::collections::VecDeque;

use firmware_core::{BlockId, Nand, NandError, NandResult, Ppn, Spare, UnitMask};
use nand_model::FullUnit;

use super::file_medium::FileMedium;
use super::journal::{Journal, OpKind, Outcome};
use crate::interactive::FullMedium;

/// Where results come from.
enum Mode {
    Live,
    Replay {
        results: VecDeque<Outcome>,
        /// Results asked for past the journal's end.
        past_end: u64,
        /// First mismatch between the journal and what the engine asked for.
        diverged: Option<String>,
    },
    Direct,
}

/// The file medium behind the journal. See the [module documentation](self).
pub struct Recorded<const B: usize> {
    /// The medium in the file.
    pub file: FileMedium<B>,
    /// The journal of this power-on (absent while replaying).
    pub journal: Option<Journal>,
    mode: Mode,
    /// First journal write error.
    failed: Option<String>,
}

impl<const B: usize> Recorded<B> {
    /// Live over `file`, recording into `journal`.
    pub fn live(file: FileMedium<B>, journal: Journal) -> Self {
        Recorded {
            file,
            journal: Some(journal),
            mode: Mode::Live,
            failed: None,
        }
    }

    /// Replaying `results` over `file`.
    pub fn replay(file: FileMedium<B>, results: Vec<Outcome>) -> Self {
        Recorded {
            file,
            journal: None,
            mode: Mode::Replay {
                results: results.into(),
                past_end: 0,
                diverged: None,
            },
            failed: None,
        }
    }

    /// From now on, operations go to the file medium alone.
    pub fn direct(&mut self) {
        self.mode = Mode::Direct;
    }

    /// While replaying: results left, results asked for past the end, and
    /// the first divergence.
    pub fn replay_state(&self) -> (usize, u64, Option<&str>) {
        match &self.mode {
            Mode::Replay {
                results,
                past_end,
                diverged,
            } => (results.len(), *past_end, diverged.as_deref()),
            _ => (0, 0, None),
        }
    }

    /// The first I/O error of the journal or the file medium.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .clone()
            .or_else(|| self.file.failure().map(str::to_string))
    }

    /// Writes the journal (before a change to the medium, or a reply).
    pub fn flush(&mut self) {
        if let Some(j) = &mut self.journal {
            if let Err(e) = j.flush() {
                self.failed.get_or_insert(e.to_string());
            }
        }
    }

    /// Runs one operation in the current mode. `run` executes it on the file
    /// medium; `meta` receives the bytes of a metadata read when replaying.
    fn op(
        &mut self,
        kind: OpKind,
        addr: u32,
        changes: bool,
        meta: Option<&mut [u8]>,
        run: impl FnOnce(&mut FileMedium<B>, Option<&mut [u8]>) -> NandResult,
    ) -> NandResult {
        match &mut self.mode {
            Mode::Direct => run(&mut self.file, meta),
            Mode::Replay {
                results,
                past_end,
                diverged,
            } => {
                let Some(o) = results.pop_front() else {
                    *past_end += 1;
                    return Err(NandError::DieFailed);
                };
                if (o.kind, o.addr) != (kind, addr) && diverged.is_none() {
                    *diverged = Some(format!(
                        "the journal has {:?} of {} where the drive asks for {kind:?} of {addr}",
                        o.kind, o.addr
                    ));
                }
                if let Some(m) = meta {
                    m.fill(0);
                    let n = o.meta.len().min(m.len());
                    m[..n].copy_from_slice(&o.meta[..n]);
                }
                o.result
            }
            Mode::Live => {
                if changes {
                    self.flush();
                }
                if self.failed.is_some() {
                    return Err(NandError::DieFailed);
                }
                let want_meta = kind == OpKind::ReadMeta;
                let mut saved = Vec::new();
                let r = match meta {
                    Some(m) => {
                        let r = run(&mut self.file, Some(&mut *m));
                        if want_meta {
                            saved = m.to_vec();
                        }
                        r
                    }
                    None => run(&mut self.file, None),
                };
                if let Some(j) = &mut self.journal {
                    j.result(&Outcome {
                        kind,
                        addr,
                        result: r,
                        meta: saved,
                    });
                }
                r
            }
        }
    }
}

impl<const B: usize> Nand for Recorded<B> {
    type Unit = FullUnit<B>;

    fn read(&mut self, page: Ppn, units: UnitMask, out: &mut [FullUnit<B>]) -> NandResult {
        // Replayed reads return zeros: only the host side looks at data.
        out.fill(FullUnit::default());
        self.op(OpKind::Read, page.0, false, None, |f, _| {
            f.read(page, units, out)
        })
    }

    fn program(&mut self, page: Ppn, data: &[FullUnit<B>], spare: &Spare) -> NandResult {
        self.op(OpKind::Program, page.0, true, None, |f, _| {
            f.program(page, data, spare)
        })
    }

    fn erase(&mut self, block: BlockId) -> NandResult {
        self.op(OpKind::Erase, block.0, true, None, |f, _| f.erase(block))
    }

    fn copyback(&mut self, src: Ppn, dst: Ppn, spare: &Spare) -> NandResult {
        self.op(OpKind::Copyback, dst.0, true, None, |f, _| {
            f.copyback(src, dst, spare)
        })
    }

    fn program_meta(&mut self, page: Ppn, bytes: &[u8], spare: &Spare) -> NandResult {
        self.op(OpKind::ProgramMeta, page.0, true, None, |f, _| {
            f.program_meta(page, bytes, spare)
        })
    }

    fn read_meta(&mut self, page: Ppn, out: &mut [u8]) -> NandResult {
        self.op(OpKind::ReadMeta, page.0, false, Some(out), |f, m| {
            f.read_meta(page, m.unwrap_or(&mut []))
        })
    }
}

impl<const B: usize> FullMedium<B> for Recorded<B> {
    fn counters(&self) -> nand_model::Stats {
        *self.file.inner().stats()
    }
}

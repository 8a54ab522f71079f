//! The DDT master/slave messages of seed 002 (Table I, Fig. 9) as the
//! whole-drive channel model ([`crate::gc_xway`]) exchanges them for every
//! cross-way DGCB copy: the master starts the source's read (`READ_INIT`),
//! the source reports its read busy (`READ_START`, `READ_END`), the master
//! prepares the destination (`PROG_INIT`), which reports when it can take
//! data (`DIN_READY`); with both `READ_END` and `DIN_READY` in, the master
//! starts the transfer (`DDT_BEGIN`), both slaves report its end
//! (`DDT_DONE`), the master sends `ERR_RETRANSMIT` when the ECC corrected
//! bytes, then `PROG_START`, and the destination reports `PROG_END`.
//! Each kind keeps its count and the time of its latest post.

/// A message of Table I.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DdtMsg {
    /// Initialization of read operation (master to source).
    ReadInit,
    /// Start of read busy (source to master).
    ReadStart,
    /// End of read busy, ready for data output (source to master).
    ReadEnd,
    /// Initialization of program operation (master to destination).
    ProgInit,
    /// Ready for data input (destination to master).
    DinReady,
    /// Error detected in read data, corrected data follow (master to destination).
    ErrRetransmit,
    /// Start program busy, confirmation command (master to destination).
    ProgStart,
    /// End of the program operation (destination to master).
    ProgEnd,
    /// Start of DDT (master to both slaves).
    DdtBegin,
    /// End of DDT (both slaves to master).
    DdtDone,
}

impl DdtMsg {
    /// Every kind, in Table I's order.
    pub const ALL: [DdtMsg; 10] = [
        DdtMsg::ReadInit,
        DdtMsg::ReadStart,
        DdtMsg::ReadEnd,
        DdtMsg::ProgInit,
        DdtMsg::DinReady,
        DdtMsg::ErrRetransmit,
        DdtMsg::ProgStart,
        DdtMsg::ProgEnd,
        DdtMsg::DdtBegin,
        DdtMsg::DdtDone,
    ];

    /// Table I's name.
    pub fn name(self) -> &'static str {
        match self {
            DdtMsg::ReadInit => "READ_INIT",
            DdtMsg::ReadStart => "READ_START",
            DdtMsg::ReadEnd => "READ_END",
            DdtMsg::ProgInit => "PROG_INIT",
            DdtMsg::DinReady => "DIN_READY",
            DdtMsg::ErrRetransmit => "ERR_RETRANSMIT",
            DdtMsg::ProgStart => "PROG_START",
            DdtMsg::ProgEnd => "PROG_END",
            DdtMsg::DdtBegin => "DDT_BEGIN",
            DdtMsg::DdtDone => "DDT_DONE",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Messages exchanged so far: per kind, how many and when the latest was
/// posted (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DdtLog {
    counts: [u64; 10],
    last: [u64; 10],
}

impl DdtLog {
    /// Posts `m` at `t`.
    pub fn post(&mut self, m: DdtMsg, t: u64) {
        let i = m.index();
        if let (Some(c), Some(l)) = (self.counts.get_mut(i), self.last.get_mut(i)) {
            *c += 1;
            *l = t;
        }
    }

    /// Messages of kind `m` posted so far.
    pub fn count(&self, m: DdtMsg) -> u64 {
        self.counts.get(m.index()).copied().unwrap_or(0)
    }

    /// When the latest message of kind `m` was posted (0: never).
    pub fn last(&self, m: DdtMsg) -> u64 {
        self.last.get(m.index()).copied().unwrap_or(0)
    }

    /// The counts by Table I name, for the report's `gc.ddt_messages`.
    pub fn to_json(&self) -> serde_json::Value {
        DdtMsg::ALL
            .iter()
            .map(|m| (m.name().to_string(), self.count(*m).into()))
            .collect::<serde_json::Map<_, _>>()
            .into()
    }
}

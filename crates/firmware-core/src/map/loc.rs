//! Where a logical unit lives (`Loc`) and how an L2P or P2L entry
//! encodes it.

use crate::medium::addr::Pun;
use crate::medium::nand::Slot;

pub(crate) const UNMAPPED: u32 = u32::MAX;

pub(crate) const LOST: u32 = u32::MAX - 1;

pub(crate) const BUFFER_FLAG: u32 = 0x8000_0000;

/// P2L value of a physical unit that holds no live data.
pub(crate) const P2L_NONE: u32 = u32::MAX;

/// The owner a P2L entry `w` names, if the unit is live.
#[inline(always)]
pub(crate) fn p2l_owner(w: u32) -> Option<crate::medium::addr::Lpn> {
    (w != P2L_NONE).then_some(crate::medium::addr::Lpn(w))
}

/// Where the current copy of a logical unit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Never written, or trimmed.
    Unmapped,
    /// Its data was lost (uncorrectable during relocation, or a failed die).
    Lost,
    /// In a buffer slot (not yet on flash).
    Buffer(Slot),
    /// On flash.
    Flash(Pun),
}

impl Loc {
    /// Encodes a location as one table word. Physical units stay below 2^31 (see
    /// [`crate::Geometry::validate`]), so the top bit marks buffer slots.
    #[inline]
    pub(crate) fn encode(self) -> u32 {
        match self {
            Loc::Unmapped => UNMAPPED,
            Loc::Lost => LOST,
            Loc::Buffer(s) => BUFFER_FLAG | u32::from(s.0),
            Loc::Flash(p) => p.0,
        }
    }

    /// Decodes a table word.
    #[inline]
    pub(crate) fn decode(w: u32) -> Loc {
        match w {
            UNMAPPED => Loc::Unmapped,
            LOST => Loc::Lost,
            // The mask keeps 16 bits, so the cast is exact.
            w if w & BUFFER_FLAG != 0 => Loc::Buffer(Slot((w & 0xffff) as u16)),
            w => Loc::Flash(Pun(w)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loc_round_trip() {
        for l in [
            Loc::Unmapped,
            Loc::Lost,
            Loc::Buffer(Slot(0)),
            Loc::Buffer(Slot(65535)),
            Loc::Flash(Pun(0)),
            Loc::Flash(Pun(0x7fff_ffff)),
        ] {
            assert_eq!(Loc::decode(l.encode()), l);
        }
    }
}

//! Typed errors of the core. Corruption and bad input end here, never in a panic.

/// The text of an error: a reference to a static string rather than the
/// string itself, so [`Error`] is two words and a `Result<(), Error>` comes
/// back in registers on a 32-bit controller (written `&"why"`). The wide
/// form cost about 5 KB of code in the firmware: every `?` copied three
/// words through memory.
pub type Reason = &'static &'static str;

/// Everything that can go wrong inside the FTL core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A configuration value is out of range; the text names it.
    InvalidConfig(Reason),
    /// A lent table is smaller than the configuration needs; the text names it.
    TableTooSmall(Reason),
    /// A logical unit beyond the exported capacity.
    LpnOutOfRange,
    /// A physical address outside the geometry.
    AddressOutOfRange,
    /// No buffer slot or operation slot is free now; retry after a completion.
    Busy,
    /// A completion named an operation that is not in flight.
    UnknownOp,
    /// Internal tables disagree (detected corruption).
    Corrupt(Reason),
    /// Not enough good blocks remain to keep the logical capacity.
    OutOfSpace,
    /// The device is not formatted or mounted yet.
    NotReady,
    /// A host command's arguments are inconsistent; the text says how.
    BadRequest(Reason),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::InvalidConfig(s) => write!(f, "invalid configuration: {s}"),
            Error::TableTooSmall(s) => write!(f, "lent table too small: {s}"),
            Error::LpnOutOfRange => f.write_str("logical unit out of range"),
            Error::AddressOutOfRange => f.write_str("physical address out of range"),
            Error::Busy => f.write_str("no free slot; retry after a completion"),
            Error::UnknownOp => f.write_str("completion for an operation not in flight"),
            Error::Corrupt(s) => write!(f, "internal corruption: {s}"),
            Error::OutOfSpace => f.write_str("not enough good blocks for the logical capacity"),
            Error::NotReady => f.write_str("device not formatted or mounted"),
            Error::BadRequest(s) => write!(f, "bad request: {s}"),
        }
    }
}

/// Passes `e` through, marking the path that calls it as one that runs
/// only on corruption or an address out of range. On the host the call is
/// cold, so the compiler lays those checks' error paths out of the hot
/// code: the loop a simulation spends its time in takes fewer instruction
/// cache lines. The firmware build inlines it to nothing.
#[cfg_attr(not(target_arch = "arm"), cold, inline(never))]
#[cfg_attr(target_arch = "arm", inline(always))]
pub(crate) fn rare(e: Error) -> Error {
    e
}

/// [`Option::ok_or`] for errors that mean corruption or a bad address:
/// the `None` arm goes through [`rare`].
pub(crate) trait OrRare<T> {
    /// `Ok(v)` for `Some(v)`, `Err(e)` on a path marked as never taken.
    fn or_rare(self, e: Error) -> Result<T, Error>;
}

impl<T> OrRare<T> for Option<T> {
    #[inline(always)]
    fn or_rare(self, e: Error) -> Result<T, Error> {
        match self {
            Some(v) => Ok(v),
            None => Err(rare(e)),
        }
    }
}

//! Configuration of the GC destination policy (kept in every build, so
//! every configuration parses; turning it on needs the `crossway` feature).

/// Where GC puts a victim's valid pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GcDestination {
    /// The GC active block of the victim's own plane (the baseline).
    #[default]
    Plane,
    /// The GC active block of the least busy other way on the victim's
    /// channel (same plane index), when that way has GC space to spare.
    Channel,
}

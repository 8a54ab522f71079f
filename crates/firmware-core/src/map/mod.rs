//! The map layer's data: logical-unit locations and their encodings, and
//! the buffer slots writes wait in.

pub mod loc;
pub mod slot;

//! Block I/O trace parsers.

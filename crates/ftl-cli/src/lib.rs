//! The library side of the `ftl` command: the parts reachable without a
//! terminal or a socket, so fuzz targets and other packages can drive them.

pub mod nbd;

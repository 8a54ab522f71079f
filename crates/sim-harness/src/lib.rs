//! Simulation harness: runs the FTL core against the NAND model with a
//! channel, die and DRAM-bus timing model, replays traces, and checks every
//! host read against an oracle.
#![warn(missing_docs)]

pub mod clip;
pub mod config;
pub mod copy_load;
pub mod crash;
pub mod ddt_msgs;
pub mod dedup_window;
pub mod engine;
pub mod flash_bus;
pub mod footprint;
pub mod gc_copy;
pub mod gc_merge;
mod gc_xway;
pub mod hist;
pub mod identify_time;
pub mod image;
pub mod interactive;
pub mod lifetime;
pub mod phased;
pub mod place;
pub mod precondition_fast;
pub mod profiles;
pub mod raid;
pub mod reparo;
pub mod reparo_space;
pub mod report;
pub mod series;
pub mod sim;
pub mod steady_model;
pub mod tenants;
pub mod timing;
pub mod trace;
pub mod workload;
pub mod zns_host;
pub mod zone_front;
pub mod zone_replay;

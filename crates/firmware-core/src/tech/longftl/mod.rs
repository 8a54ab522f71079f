//! longFTL / GuardedErase (seed 001 ch. 3): per-wordline low-stress erase,
//! gE(n) modes, BER-sorted weak-wordline lists, the WAF monitor and the mode
//! selector; BPM is its baseline.

pub mod config;
#[cfg(feature = "longftl")]
pub mod gerase;
#[cfg(feature = "longftl")]
pub mod gerase_select;
#[cfg(feature = "longftl")]
pub mod waf_monitor;
#[cfg(feature = "longftl")]
pub mod weak_wl;

//! longFTL / GuardedErase (seed 001 ch. 3): per-wordline low-stress erase,
//! gE(n) modes, BER-sorted weak-wordline lists, the WAF monitor and the mode
//! selector; BPM is its baseline.

pub mod gerase;
pub mod gerase_select;
pub mod waf_monitor;
pub mod weak_wl;

//! `ftl serve --nbd`: the simulated drive as a Network Block Device.
//!
//! One drive thread owns the drive ([`drive_loop`]); each connection has a
//! reader and a writer thread ([`conn`]) that speak the protocol
//! ([`handshake`], [`proto`]) and exchange operations and replies with the
//! drive thread over channels. Byte ranges become unit requests in
//! [`blocks`]. On shutdown the run report is printed as `replay` prints it.

mod blocks;
mod conn;
mod drive_loop;
mod handshake;
mod proto;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;
use sim_harness::interactive;

use crate::common::CommonOpts;
use crate::CliError;
use conn::{Counters, Shared, ToDrive};
use drive_loop::Pace;

/// Default NBD address (the IANA port of NBD, on loopback).
const DEFAULT_ADDR: &str = "127.0.0.1:10809";

/// How often the accept loop looks at the stop conditions.
const POLL: Duration = Duration::from_millis(20);

/// Options of `ftl serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Serve the drive over NBD on ADDR:PORT (port 0: any free port, printed on stderr).
    #[arg(long, value_name = "ADDR:PORT", num_args = 0..=1, default_value = DEFAULT_ADDR, default_missing_value = DEFAULT_ADDR)]
    pub nbd: String,
    /// Reply timing: `none` (as fast as the simulation runs) or `device` (modelled latency).
    #[arg(long, value_enum, default_value_t = Pace::None)]
    pub pace: Pace,
    /// Stop after this many connections have closed (for tests).
    #[arg(long, value_name = "N")]
    pub exit_after_disconnects: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub max_seconds: Option<f64>,
    #[command(flatten)]
    pub common: CommonOpts,
}

/// Runs `ftl serve`.
pub fn run(a: ServeArgs) -> Result<(), CliError> {
    if a.max_seconds.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        return Err(CliError::Input(
            "--max-seconds must be a positive number".into(),
        ));
    }
    let mut common = a.common.clone();
    common.set.push("nand.full_data=true".into());
    let (cfg, plan) = common.plan(None)?;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let size = u64::from(plan.core.logical_units) * unit;
    let listener =
        TcpListener::bind(&a.nbd).map_err(|e| CliError::Input(format!("--nbd {}: {e}", a.nbd)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::Run(format!("listener address: {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| CliError::Run(format!("listener: {e}")))?;

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        if let Err(e) = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed)) {
            eprintln!("warning: no SIGINT/SIGTERM handler: {e}");
        }
    }
    let start = Instant::now();
    let (to_drive, inbox) = mpsc::channel::<ToDrive>();
    let pace = a.pace;
    let drive = thread::spawn(move || {
        interactive::open(&plan, |dev| {
            let served = drive_loop::run(dev, &inbox, pace, start);
            let wall = start.elapsed().as_secs_f64();
            (served, dev.outcome(wall, wall))
        })
    });
    eprintln!("listening on {addr}");
    let counters = Arc::new(Counters::default());
    let shared = Shared {
        to_drive: to_drive.clone(),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
        size,
    };
    let deadline = a.max_seconds.map(Duration::from_secs_f64);
    loop {
        if stop.load(Ordering::Relaxed)
            || drive.is_finished()
            || deadline.is_some_and(|d| start.elapsed() >= d)
            || a.exit_after_disconnects
                .is_some_and(|n| counters.disconnects.load(Ordering::Relaxed) >= n)
        {
            break;
        }
        match listener.accept() {
            Ok((s, _)) => {
                if s.set_nonblocking(false).is_ok() {
                    conn::spawn(s, shared.clone());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => thread::sleep(POLL),
            Err(e) => eprintln!("warning: accept: {e}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    drop(listener);
    let _ = to_drive.send(ToDrive::Shutdown);
    drop(shared);
    drop(to_drive);
    let (served, out) = drive
        .join()
        .map_err(|_| CliError::Run("the drive thread panicked".into()))??;
    served?;
    let out = out?;
    let c = &counters;
    let n = |x: &std::sync::atomic::AtomicU64| x.load(Ordering::Relaxed);
    let input = json!({
        "listen": addr.to_string(),
        "pace": format!("{:?}", a.pace).to_lowercase(),
        "export_bytes": size,
        "connections": n(&c.connections),
        "disconnects": n(&c.disconnects),
        "read_commands": n(&c.reads),
        "write_commands": n(&c.writes),
        "flush_commands": n(&c.flushes),
        "zero_commands": n(&c.zeroes),
        "error_replies": n(&c.errors),
        "protocol_errors": n(&c.protocol_errors),
        "bytes_read": n(&c.bytes_read),
        "bytes_written": n(&c.bytes_written),
    });
    let v = a.common.report(&cfg, &out, "nbd", input);
    let header = format!(
        "nbd serve on {addr} ({} connections, {} commands) on preset {}\n",
        n(&c.connections),
        n(&c.reads) + n(&c.writes) + n(&c.flushes) + n(&c.zeroes),
        a.common.preset
    );
    a.common.emit(&v, &header, &out)
}

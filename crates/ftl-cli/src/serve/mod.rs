//! `ftl serve --nbd`: the simulated drive as a Network Block Device.
//!
//! One drive thread owns the drive ([`drive_loop`]); each connection has a
//! reader and a writer thread ([`conn`]) that speak the protocol
//! (`ftl_cli::nbd`) and exchange operations and replies with the
//! drive thread over channels. Byte ranges become unit requests in
//! [`blocks`]. On shutdown the run report is printed as `replay` prints it.

mod blocks;
mod conn;
mod drive_loop;

use ftl_cli::nbd::{handshake, proto};

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;
use sim_harness::{image, interactive};

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
    /// Most connections served at once; further ones are closed at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_connections: u64,
    /// Most request and reply bytes one connection may have queued (bytes,
    /// or with K, M, G); further requests wait until the client reads replies.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = crate::mem_limit::parse_size)]
    pub max_queued_bytes: u64,
    /// Seconds a client may take from connecting to the end of its handshake.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub handshake_timeout: f64,
    /// Keep the drive in FILE (created if missing): the medium, and the
    /// capacitor-protected DRAM as a journal written before every reply, so
    /// killing the server is a power cut; the next start runs the capacitor
    /// flush and mounts (docs/nbd.md, "Image files").
    #[arg(long, value_name = "FILE")]
    pub image: Option<std::path::PathBuf>,
    /// With --image: fdatasync the capacitor region before every reply and
    /// medium write (also survives an operating-system crash; slower).
    #[arg(long, requires = "image")]
    pub image_sync: bool,
    /// With --image: once the capacitor region (the journal of the current
    /// power-on) holds SIZE bytes, cut the power and mount again at the
    /// next idle moment, so it and the next start's replay stay bounded
    /// (bytes, or with K, M, G; 0: never).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::mem_limit::parse_size, requires = "image")]
    pub image_compact: u64,
    #[command(flatten)]
    pub common: CommonOpts,
}

/// Longest `--max-seconds` and `--handshake-timeout`: about 31.7 years.
const MAX_SECONDS: f64 = 1e9;
/// Most `--max-connections` (each takes two threads).
const MAX_CONNECTIONS: u64 = 4096;
/// Smallest `--max-queued-bytes`: one request of the largest payload.
const MIN_QUEUED_BYTES: u64 = proto::MAX_PAYLOAD as u64;

/// Checks the serve flags, before the configuration is loaded or the port bound.
fn check_args(a: &ServeArgs) -> Result<(), CliError> {
    let seconds = |s: f64| s.is_finite() && s > 0.0 && s <= MAX_SECONDS;
    if a.max_seconds.is_some_and(|s| !seconds(s)) {
        return Err(CliError::Input(format!(
            "--max-seconds must be a positive number of at most {MAX_SECONDS}"
        )));
    }
    if !seconds(a.handshake_timeout) {
        return Err(CliError::Input(format!(
            "--handshake-timeout: {} is not a positive number of at most {MAX_SECONDS} seconds",
            a.handshake_timeout
        )));
    }
    if !(1..=MAX_CONNECTIONS).contains(&a.max_connections) {
        return Err(CliError::Input(format!(
            "--max-connections: {} is not in 1 to {MAX_CONNECTIONS}",
            a.max_connections
        )));
    }
    if a.max_queued_bytes < MIN_QUEUED_BYTES {
        return Err(CliError::Input(format!(
            "--max-queued-bytes: {} is below {MIN_QUEUED_BYTES}, one request of the largest payload",
            a.max_queued_bytes
        )));
    }
    Ok(())
}

/// Starts the drive thread over the image at `path` and waits until the
/// image is recovered and mounted (a bad image is an input error, exit 2).
fn image_drive(
    path: &std::path::Path,
    opts: image::ImageOptions,
    plan: sim_harness::sim::Plan,
    inbox: mpsc::Receiver<ToDrive>,
    pace: Pace,
    start: Instant,
) -> Result<thread::JoinHandle<DriveResult>, CliError> {
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), CliError>>();
    let owned = path.to_path_buf();
    let name = path.display().to_string();
    let handle = thread::spawn(move || {
        let r = image::open(&plan, &owned, opts, |dev, rec| {
            if rec.compacted_bytes > 0 {
                eprintln!(
                    "image {}: power-on {} after compacting {:.1} MiB of capacitor region \
                     (capacitor flush {} operations, mounted in {:.2} s)",
                    owned.display(),
                    rec.epoch,
                    rec.compacted_bytes as f64 / 1048576.0,
                    rec.flush_ops,
                    rec.seconds
                );
            } else {
                eprintln!(
                    "image {}: power-on {}{}; {} calls and {} results replayed ({:.1} MiB), \
                     capacitor flush {} operations, {}; recovery {:.2} s",
                    owned.display(),
                    rec.epoch,
                    if rec.created { " (created)" } else { "" },
                    rec.replayed_calls,
                    rec.replayed_results,
                    rec.journal_bytes as f64 / 1048576.0,
                    rec.flush_ops,
                    if rec.mounted { "mounted" } else { "formatted" },
                    rec.seconds
                );
            }
            if rec.detected_corruptions > 0 {
                eprintln!(
                    "image {}: damage detected: {} pages of the medium and {} write-payload \
                     units of the capacitor region failed their checksums ({} checks failed); \
                     what they held reads as an I/O error until rewritten",
                    owned.display(),
                    rec.damaged_pages,
                    rec.damaged_payload_units,
                    rec.detected_corruptions
                );
            }
            let _ = ready_tx.send(Ok(()));
            match drive_loop::run(dev, &inbox, pace, start) {
                Ok(true) => image::Served::Compact,
                Ok(false) => {
                    // A clean stop: the capacitor region is emptied.
                    let wall = start.elapsed().as_secs_f64();
                    image::Served::Shutdown((Ok(()), dev.outcome(wall, wall)))
                }
                served => {
                    let wall = start.elapsed().as_secs_f64();
                    image::Served::Stopped((served.map(|_| ()), dev.outcome(wall, wall)))
                }
            }
        });
        r.map_err(|e| {
            let e = match e {
                image::ImageError::Invalid(m) => CliError::Input(format!("--image {name}: {m}")),
                e => CliError::Run(format!("--image {name}: {e}")),
            };
            let _ = ready_tx.send(Err(e));
            firmware_core::Error::NotReady
        })
    });
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(handle),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(CliError::Run(
            "the drive thread ended during recovery".into(),
        )),
    }
}

/// What the drive thread gives back: the serve result and the report.
type DriveResult = Result<
    (
        Result<(), firmware_core::Error>,
        Result<sim_harness::sim::Outcome, firmware_core::Error>,
    ),
    firmware_core::Error,
>;

/// Runs `ftl serve`.
pub fn run(a: ServeArgs) -> Result<(), CliError> {
    check_args(&a)?;
    let mut common = a.common.clone();
    common.set.push("nand.full_data=true".into());
    if a.image.is_some() && common.load_unchecked()?.ftl.map_entries_per_page == 0 {
        // A drive that survives power cuts persists its mapping.
        let set = format!(
            "ftl.map_entries_per_page={}",
            crate::crash::DEFAULT_MAP_ENTRIES
        );
        eprintln!("note: --image turns mapping persistence on: --set {set}");
        common.set.push(set);
    }
    let (cfg, plan) = common.plan(None)?;
    let unit = u64::from(plan.core.geometry.unit_bytes());
    let size = u64::from(plan.core.logical_units) * unit;
    // An image is recovered (or refused) before the port is bound.
    let start = Instant::now();
    let (to_drive, inbox) = mpsc::channel::<ToDrive>();
    let pace = a.pace;
    let drive = match &a.image {
        None => thread::spawn(move || {
            interactive::open(&plan, |dev| {
                let served = drive_loop::run(dev, &inbox, pace, start).map(|_| ());
                let wall = start.elapsed().as_secs_f64();
                (served, dev.outcome(wall, wall))
            })
        }),
        Some(path) => {
            let opts = image::ImageOptions {
                sync: a.image_sync,
                compact_bytes: a.image_compact,
            };
            image_drive(path, opts, plan, inbox, pace, start)?
        }
    };
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
    eprintln!("listening on {addr}");
    let counters = Arc::new(Counters::default());
    let shared = Shared {
        to_drive: to_drive.clone(),
        counters: Arc::clone(&counters),
        stop: Arc::clone(&stop),
        size,
        limits: conn::Limits {
            max_queued_bytes: a.max_queued_bytes,
            handshake_timeout: Duration::from_secs_f64(a.handshake_timeout),
        },
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
            Ok((s, _)) if counters.open() >= a.max_connections => {
                counters.refused.fetch_add(1, Ordering::Relaxed);
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
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
        "refused_connections": n(&c.refused),
        "handshake_timeouts": n(&c.handshake_timeouts),
        "peak_queued_bytes": n(&c.peak_queued_bytes),
        "max_connections": a.max_connections,
        "max_queued_bytes": a.max_queued_bytes,
        "handshake_timeout_s": a.handshake_timeout,
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

//! `cargo xtask nbd`: acceptance of `ftl serve --nbd` with real NBD clients.
//!
//! Installs what is missing (Debian packages `fio`, `qemu-utils`,
//! `libnbd-bin`), builds `ftl` in release, starts `ftl serve --nbd
//! 127.0.0.1:0 --preset default` and runs, each under a timeout:
//!
//! 1. fio through its `nbd` engine (`--ioengine=nbd --uri=nbd://...`):
//!    sequential and random writes with `--verify=crc32c` from several jobs
//!    at once, then a separate `--verify_only` pass reading everything back;
//!    fio's exit status and every job's `error` in its JSON output must be 0;
//! 2. `qemu-img convert` of a 64 MiB raw image of deterministic pseudo-random
//!    bytes into the export and back out: identical SHA-256;
//! 3. `qemu-io` patterns at unaligned offsets: writes, reads, write-zeroes
//!    and discards (discarded ranges read as zeros);
//!
//! then stops the server with SIGINT and checks its report: no read returned
//! other data than last written. The server is killed on every exit path.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use test_kit::rng::{XorShift64Star, GOLDEN_GAMMA};

use crate::ci;
use crate::qemu::ensure_apt;

/// Longest any one client step may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest the server may take to listen, and to report after SIGINT.
const SERVER_TIMEOUT: Duration = Duration::from_secs(60);
/// Size of the image `qemu-img` copies in and out.
const IMAGE_BYTES: usize = 64 << 20;
/// Where that image goes in the export (clear of fio's region).
const IMAGE_OFFSET: u64 = 256 << 20;
/// Where the qemu-io patterns go.
const QEMU_IO_BASE: u64 = 512 << 20;

/// The running server; killed when dropped.
pub struct Server {
    /// The `ftl serve` process.
    pub child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Scratch directory for images, logs and the report.
fn work_dir() -> Result<PathBuf, String> {
    let dir = ci::root().join("target").join("nbd-acceptance");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// Starts `ftl serve` on a free loopback port and waits for its address.
fn start_server(ftl: &Path, dir: &Path) -> Result<Server, String> {
    let out = dir.join("server");
    let out_s = out.to_string_lossy().into_owned();
    let args = [
        "serve",
        "--nbd",
        "127.0.0.1:0",
        "--preset",
        "default",
        "--max-seconds",
        "170",
        "--quiet",
        "--out",
        &out_s,
    ];
    serve(ftl, &args, &dir.join("server.stdout"), true)
}

/// Runs `ftl ARGS` (a `serve --nbd 127.0.0.1:0` command line), its stdout
/// to `stdout` and its stderr to `stdout` with extension `stderr`, and
/// waits until it prints its port; `echo` shows the command and copies its
/// stderr to ours.
pub fn serve(ftl: &Path, args: &[&str], stdout: &Path, echo: bool) -> Result<Server, String> {
    if echo {
        eprintln!("+ {} {}", ftl.display(), args.join(" "));
    }
    let log = File::create(stdout).map_err(|e| e.to_string())?;
    let mut child = Command::new(ftl)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", ftl.display()))?;
    let Some(err) = child.stderr.take() else {
        let _ = child.kill();
        return Err("no stderr from the server".into());
    };
    let (tx, rx) = mpsc::channel();
    let mut err_log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(stdout.with_extension("stderr"))
        .map_err(|e| e.to_string())?;
    thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if echo {
                eprintln!("    serve| {line}");
            }
            let _ = writeln!(err_log, "{line}");
            if let Some(p) = line.strip_prefix("listening on 127.0.0.1:") {
                let _ = tx.send(p.trim().parse::<u16>().ok());
            }
        }
    });
    let mut server = Server { child, port: 0 };
    match rx.recv_timeout(SERVER_TIMEOUT) {
        Ok(Some(port)) => {
            server.port = port;
            Ok(server)
        }
        _ => Err("the server did not print `listening on 127.0.0.1:PORT`".into()),
    }
}

/// Runs a client command under [`STEP_TIMEOUT`] in `dir` (so whatever it
/// leaves behind stays out of the working tree); its output goes to
/// `dir/<name>.log`, which is returned. Fails on a non-zero exit or timeout.
fn step(dir: &Path, name: &str, program: &str, args: &[&str]) -> Result<String, String> {
    eprintln!("+ {program} {}", args.join(" "));
    let log_path = dir.join(format!("{name}.log"));
    let log = File::create(&log_path).map_err(|e| e.to_string())?;
    let log2 = log.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > STEP_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{name}: killed after {}s", STEP_TIMEOUT.as_secs()));
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("{name}: {e}")),
        }
    };
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    eprintln!(
        "xtask nbd: {name}: {status} after {:.1}s",
        start.elapsed().as_secs_f64()
    );
    if status.success() {
        Ok(text)
    } else {
        Err(format!("{name} failed with {status}:\n{text}"))
    }
}

/// The fio workload: sequential 128 KiB writes from two jobs and random
/// 4 KiB writes from four jobs, each region its own, every block verified
/// with CRC32C. With `verify_only` nothing is written: the blocks the same
/// jobs wrote are read back and checked. fio's verify state files
/// (`<job>-<n>-verify.state`) go to `aux`.
fn fio_args(uri: &str, json: &str, aux: &str, verify_only: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "--ioengine=nbd",
        "--output-format=json",
        "--verify=crc32c",
        "--do_verify=1",
        "--iodepth=16",
        "--group_reporting=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--uri={uri}"));
    a.push(format!("--output={json}"));
    a.push(format!("--aux-path={aux}"));
    if verify_only {
        a.push("--verify_only".into());
    }
    for (name, rw, bs, numjobs, offset) in [
        ("seqwrite", "write", "128k", 2, 0u64),
        ("randwrite", "randwrite", "4k", 4, 64 << 20),
    ] {
        a.extend([
            format!("--name={name}"),
            format!("--rw={rw}"),
            format!("--bs={bs}"),
            format!("--numjobs={numjobs}"),
            format!("--offset={offset}"),
            "--size=16m".into(),
            "--offset_increment=16m".into(),
        ]);
    }
    a
}

/// Where the iolog round trip writes (clear of the other steps' regions).
const IOLOG_OFFSET: u64 = 768 << 20;

/// `fio --write_iolog` of a mixed random job against the server, then
/// `ftl replay` of that log: the replay must count exactly the requests
/// fio issued, with the same read/write split.
fn iolog_round_trip(dir: &Path, uri: &str, ftl: &Path) -> Result<String, String> {
    let log = dir.join("mix.iolog");
    let json = dir.join("fio-iolog.json");
    let args = [
        "--ioengine=nbd".to_string(),
        format!("--uri={uri}"),
        "--name=mix".into(),
        "--rw=randrw".into(),
        "--rwmixread=30".into(),
        "--bs=4k".into(),
        "--size=32m".into(),
        format!("--offset={IOLOG_OFFSET}"),
        "--iodepth=8".into(),
        format!("--write_iolog={}", log.display()),
        "--output-format=json".into(),
        format!("--output={}", json.display()),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    step(dir, "fio-iolog", "fio", &args)?;
    let text = fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text[text.find('{').unwrap_or(0)..])
        .map_err(|e| format!("fio JSON: {e}"))?;
    let ios = |dir: &str| v["jobs"][0][dir]["total_ios"].as_u64().unwrap_or(0);
    let (reads, writes) = (ios("read"), ios("write"));
    let log_s = log.to_string_lossy();
    let ftl_s = ftl.to_string_lossy();
    let out = step(
        dir,
        "replay-iolog",
        &ftl_s,
        &["replay", "--json", "--quiet", &log_s],
    )?;
    let r: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("replay JSON: {e}"))?;
    let got = (
        r["host"]["requests"].as_u64(),
        r["trace"]["reads"].as_u64(),
        r["trace"]["writes"].as_u64(),
    );
    if got != (Some(reads + writes), Some(reads), Some(writes)) {
        return Err(format!(
            "fio issued {reads} reads and {writes} writes, the replay of its iolog counted {got:?}"
        ));
    }
    Ok(format!(
        "fio issued {} requests ({reads} reads, {writes} writes), ftl replay of the iolog: the same",
        reads + writes
    ))
}

/// Checks fio's JSON: every job reports error 0 and read (verified) bytes.
fn check_fio_json(path: &Path, want_writes: bool) -> Result<String, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    // fio may print notes before the JSON object.
    let json = text.get(text.find('{').unwrap_or(0)..).unwrap_or("");
    let jobs = json.matches("\"jobname\"").count();
    let errors: Vec<&str> = json
        .lines()
        .filter(|l| l.trim_start().starts_with("\"error\""))
        .filter(|l| !l.contains(": 0"))
        .collect();
    let io_bytes: Vec<u64> = json
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"io_bytes\" : "))
        .filter_map(|v| v.trim_end_matches(',').parse().ok())
        .collect();
    // Per job: read io_bytes then write io_bytes (then trim).
    let reads: u64 = io_bytes.iter().step_by(3).sum();
    let writes: u64 = io_bytes.iter().skip(1).step_by(3).sum();
    if jobs != 6 || !errors.is_empty() || reads == 0 || (want_writes && writes == 0) {
        return Err(format!(
            "fio JSON {}: {jobs} jobs (want 6), errors {errors:?}, read {reads} B, written {writes} B",
            path.display()
        ));
    }
    // A verify_only pass writes nothing, though fio still counts the writes it skipped.
    let written = if want_writes {
        format!("{} MiB written, ", writes >> 20)
    } else {
        String::new()
    };
    Ok(format!(
        "{jobs} jobs, error 0 everywhere, {written}{} MiB read back and verified",
        reads >> 20
    ))
}

/// Runs the fio workload (or its `verify_only` read-back) and checks its
/// JSON. fio's state files go to a temporary directory removed afterwards.
fn fio(dir: &Path, uri: &str, verify_only: bool) -> Result<String, String> {
    let name = if verify_only {
        "fio-verify"
    } else {
        "fio-write"
    };
    let json = dir.join(format!("{name}.json"));
    let aux = std::env::temp_dir().join(format!("ftl-nbd-fio-{}", std::process::id()));
    fs::create_dir_all(&aux).map_err(|e| format!("{}: {e}", aux.display()))?;
    let args = fio_args(
        uri,
        &json.to_string_lossy(),
        &aux.to_string_lossy(),
        verify_only,
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let done = step(dir, name, "fio", &args);
    let _ = fs::remove_dir_all(&aux);
    done?;
    check_fio_json(&json, !verify_only)
}

/// A deterministic pseudo-random image (xorshift64*).
fn write_image(path: &Path) -> Result<(), String> {
    let mut rng = XorShift64Star(GOLDEN_GAMMA);
    let mut data = Vec::with_capacity(IMAGE_BYTES);
    while data.len() < IMAGE_BYTES {
        data.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    fs::write(path, data).map_err(|e| format!("{}: {e}", path.display()))
}

/// `sha256sum` of a file.
fn sha256(path: &Path) -> Result<String, String> {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .map_err(|e| format!("sha256sum: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .map(str::to_string)
        .ok_or_else(|| format!("sha256sum {} printed nothing", path.display()))
}

/// The qemu-io commands: unaligned writes and reads, write-zeroes and
/// discards over partial and whole units, each region checked after.
fn qemu_io_commands() -> Vec<String> {
    let b = QEMU_IO_BASE;
    [
        format!("write -P 0xab {} 5000", b + 1000),
        format!("read -P 0xab {} 5000", b + 1000),
        format!("read -P 0 {b} 1000"),
        format!("write -P 0xcd {} 2", b + 4095),
        format!("read -P 0xab {} 3095", b + 1000),
        format!("read -P 0xcd {} 2", b + 4095),
        format!("read -P 0xab {} 1903", b + 4097),
        format!("write -z {} 700", b + 2000),
        format!("read -P 0 {} 700", b + 2000),
        format!("read -P 0xab {} 1000", b + 1000),
        format!("write -P 0x5a {} 131072", b + 65536),
        format!("discard {} 131072", b + 65536),
        format!("read -P 0 {} 131072", b + 65536),
        format!("write -P 0x77 {} 70000", b + 200_003),
        format!("discard {} 5000", b + 210_000),
        format!("read -P 0x77 {} 9997", b + 200_003),
        format!("read -P 0 {} 5000", b + 210_000),
        format!("read -P 0x77 {} 55003", b + 215_000),
        "flush".to_string(),
    ]
    .into_iter()
    .collect()
}

/// Sends SIGINT and waits for the server to write its report.
fn stop_server(mut server: Server, dir: &Path) -> Result<String, String> {
    // The shell's builtin kill: a minimal Debian has no kill binary (procps).
    let kill = format!("kill -INT {}", server.child.id());
    ci::run_cmd("sh", &["-c", &kill])?;
    let start = Instant::now();
    loop {
        match server.child.try_wait() {
            Ok(Some(s)) if s.success() => break,
            Ok(Some(s)) => return Err(format!("ftl serve exited with {s}")),
            Ok(None) if start.elapsed() > SERVER_TIMEOUT => {
                return Err("ftl serve did not stop after SIGINT".into())
            }
            Ok(None) => thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let path = dir.join("server").join("report.json");
    let report = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let figure = |key: &str| {
        report
            .lines()
            .find_map(|l| l.trim().strip_prefix(&format!("\"{key}\": ")))
            .map(|v| v.trim_end_matches(',').to_string())
    };
    let checks = figure("read_checks").unwrap_or_default();
    match (
        figure("mismatches").as_deref(),
        figure("uncorrectable_reads").as_deref(),
    ) {
        (Some("0"), Some("0")) => Ok(format!(
            "server report: {checks} unit reads checked, 0 mismatches, 0 uncorrectable"
        )),
        (m, u) => Err(format!(
            "server report {}: mismatches {m:?}, uncorrectable {u:?}",
            path.display()
        )),
    }
}

/// `cargo xtask nbd`.
pub fn run() -> Result<(), String> {
    let t0 = Instant::now();
    ensure_apt("fio", "fio")?;
    ensure_apt("qemu-img", "qemu-utils")?;
    ensure_apt("qemu-io", "qemu-utils")?;
    ensure_apt("nbdinfo", "libnbd-bin")?;
    ci::run_cmd("cargo", &["build", "--release", "-p", "ftl-cli"])?;
    let ftl = ci::root().join("target").join("release").join("ftl");
    let dir = work_dir()?;
    let _ = fs::remove_dir_all(dir.join("server"));
    let server = start_server(&ftl, &dir)?;
    let port = server.port;
    let uri = format!("nbd://127.0.0.1:{port}");
    let mut summary = Vec::new();

    let info = step(&dir, "nbdinfo", "nbdinfo", &["--size", &uri])?;
    summary.push(format!("nbdinfo: export of {} bytes", info.trim()));

    summary.push(format!("fio write+verify: {}", fio(&dir, &uri, false)?));
    summary.push(format!("fio verify_only: {}", fio(&dir, &uri, true)?));
    summary.push(format!(
        "fio iolog round trip: {}",
        iolog_round_trip(&dir, &uri, &ftl)?
    ));

    let src = dir.join("image-in.raw");
    let back = dir.join("image-out.raw");
    write_image(&src)?;
    let opts = format!(
        "driver=raw,offset={IMAGE_OFFSET},size={IMAGE_BYTES},file.driver=nbd,file.host=127.0.0.1,file.port={port}"
    );
    let (src_s, back_s) = (src.to_string_lossy(), back.to_string_lossy());
    step(
        &dir,
        "qemu-img-in",
        "qemu-img",
        &[
            "convert",
            "-n",
            "-f",
            "raw",
            &src_s,
            "--target-image-opts",
            &opts,
        ],
    )?;
    step(
        &dir,
        "qemu-img-out",
        "qemu-img",
        &["convert", "--image-opts", &opts, "-O", "raw", &back_s],
    )?;
    let (h_in, h_out) = (sha256(&src)?, sha256(&back)?);
    if h_in != h_out {
        return Err(format!(
            "qemu-img round trip differs: in {h_in}, out {h_out}"
        ));
    }
    summary.push(format!(
        "qemu-img convert in and out of 64 MiB: sha256 {h_in} both ways"
    ));

    let cmds = qemu_io_commands();
    let mut args: Vec<&str> = vec!["-f", "raw"];
    for c in &cmds {
        args.extend(["-c", c.as_str()]);
    }
    args.push(&uri);
    let out = step(&dir, "qemu-io", "qemu-io", &args)?;
    if out.contains("failed") || out.contains("error") {
        return Err(format!("qemu-io reported a failure:\n{out}"));
    }
    summary.push(format!(
        "qemu-io: {} commands at unaligned offsets, every pattern matched",
        cmds.len()
    ));

    summary.push(stop_server(server, &dir)?);
    for s in &summary {
        eprintln!("xtask nbd: {s}");
    }
    eprintln!("xtask nbd: OK in {:.0}s", t0.elapsed().as_secs_f64());
    Ok(())
}

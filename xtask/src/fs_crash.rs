//! `cargo xtask fs-crash [--cuts N] [--seed S]`: ext4 on `ftl serve
//! --image` through power cuts.
//!
//! The drive (`default` preset, 64 blocks per plane: 1 GiB raw, 890 MiB
//! exported) is served from an image file and reaches the kernel through
//! `nbdfuse` (FUSE, Debian's `libnbd-bin`; the nbd kernel module is not
//! needed) and a loop device; ext4 goes on it. Then, N times:
//!
//! 1. a file workload runs on the mounted file system: new files (random
//!    size and content, `fsync` of the file and its directory), replacements
//!    by write-fsync-rename-fsync, deletions; what was made durable is
//!    recorded as it completes, what was in progress as pending;
//! 2. after a random 0.3-2.5 s the server gets SIGKILL: a power cut (the
//!    server also compacts its capacitor region every 16 MiB, when idle,
//!    by a power cut of its own and a mount, so kills land around those
//!    too);
//! 3. the stack is torn down and the server restarted on the image (it runs
//!    the capacitor flush from its capacitor region and mounts);
//! 4. ext4 is mounted (journal replay) and unmounted, `fsck.ext4 -fn` must
//!    exit 0, and after a second mount every recorded file must hold exactly
//!    its recorded content (a pending one its old or new state; a file never
//!    fsynced anything, and it is removed).
//!
//! Each cut passes or fails; the run stops at the first failure and ends
//! with `N passed, M failed`. Needs root, FUSE and loop devices; installs
//! `libnbd-bin` and `e2fsprogs` with apt when missing.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use test_kit::rng::{XorShift64Star, GOLDEN_GAMMA};

use crate::ci;
use crate::nbd::{serve, Server};
use crate::qemu::ensure_apt;

/// The drive's configuration (beside `--preset default`).
const DRIVE_SET: &str = "geometry.blocks_per_plane=64";
/// Capacitor-region size that makes the server cut the power and mount
/// again when idle: small, so kills also land in and around compactions.
const COMPACT: &str = "16M";
/// Longest any one command may take.
const CMD_TIMEOUT: Duration = Duration::from_secs(120);
/// Directories the workload spreads its files over.
const DIRS: u64 = 4;
/// Files kept at most (older ones are deleted), so the file system never fills.
const MAX_FILES: usize = 400;
/// Largest file, bytes.
const MAX_FILE: u64 = 256 << 10;

/// What a file holds: nothing, or `len` bytes generated from `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Content {
    Absent,
    File { id: u64, len: usize },
}

/// The state a file may be found in after a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// Nothing in progress: exactly `now`.
    None,
    /// `now` or this.
    Or(Content),
    /// Never made durable: anything (the file is removed after the check).
    Any,
}

/// One file of the model.
#[derive(Clone, Copy, Debug)]
struct Entry {
    now: Content,
    pending: Pending,
}

/// What the workload made durable, by path relative to the mount point.
type Model = BTreeMap<String, Entry>;

/// The bytes of content `id`.
fn bytes_of(id: u64, len: usize) -> Vec<u8> {
    let mut r = XorShift64Star(id.wrapping_mul(GOLDEN_GAMMA) | 1);
    // Eight bytes per draw; the tail of the last draw is cut off.
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Runs `program args` quietly under [`CMD_TIMEOUT`]; its output on failure.
fn cmd(program: &str, args: &[&str]) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > CMD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{program} {}` timed out", args.join(" ")));
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("{program}: {e}")),
        }
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{program}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "`{program} {}` failed with {}:\n{text}",
            args.join(" "),
            out.status
        ))
    }
}

/// Paths of one run.
struct Paths {
    ftl: PathBuf,
    dir: PathBuf,
    image: PathBuf,
    fuse: PathBuf,
    mnt: PathBuf,
}

/// The server, nbdfuse and the loop device over the image.
struct Stack {
    server: Server,
    fuse: Child,
    loop_dev: String,
}

impl Stack {
    /// Starts the server on the image, nbdfuse and a loop device.
    fn up(p: &Paths) -> Result<Stack, String> {
        let image = p.image.to_string_lossy().into_owned();
        let args = [
            "serve",
            "--nbd",
            "127.0.0.1:0",
            "--image",
            &image,
            "--preset",
            "default",
            "--set",
            DRIVE_SET,
            "--image-compact",
            COMPACT,
            "--quiet",
        ];
        let server = serve(&p.ftl, &args, &p.dir.join("server.stdout"), false)?;
        let uri = format!("nbd://127.0.0.1:{}", server.port);
        let fuse = Command::new("nbdfuse")
            .arg(&p.fuse)
            .arg(&uri)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start nbdfuse: {e}"))?;
        let node = p.fuse.join("nbd");
        let t0 = Instant::now();
        while !node.exists() {
            if t0.elapsed() > Duration::from_secs(20) {
                return Err("nbdfuse did not show the export".into());
            }
            thread::sleep(Duration::from_millis(10));
        }
        let node_s = node.to_string_lossy().into_owned();
        let loop_dev = cmd("losetup", &["-f", "--show", "--direct-io=on", &node_s])
            .or_else(|_| cmd("losetup", &["-f", "--show", &node_s]))?
            .trim()
            .to_string();
        Ok(Stack {
            server,
            fuse,
            loop_dev,
        })
    }

    /// Detaches the loop device and unmounts nbdfuse (the server is left
    /// to its owner).
    fn down(&mut self, p: &Paths) {
        let _ = cmd("losetup", &["-d", &self.loop_dev]);
        let fuse = p.fuse.to_string_lossy().into_owned();
        if cmd("umount", &[&fuse]).is_err() {
            let _ = cmd("umount", &["-l", &fuse]);
        }
        let t0 = Instant::now();
        while matches!(self.fuse.try_wait(), Ok(None)) {
            if t0.elapsed() > Duration::from_secs(5) {
                let _ = self.fuse.kill();
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.fuse.wait();
    }
}

fn mount(dev: &str, mnt: &Path) -> Result<(), String> {
    cmd("mount", &["-t", "ext4", dev, &mnt.to_string_lossy()]).map(|_| ())
}

fn umount(mnt: &Path) -> Result<(), String> {
    let m = mnt.to_string_lossy().into_owned();
    match cmd("umount", &[&m]) {
        Ok(_) => Ok(()),
        Err(e) => {
            thread::sleep(Duration::from_millis(200));
            cmd("umount", &[&m]).map(|_| ()).map_err(|_| e)
        }
    }
}

/// Removes any mount or loop device a failed earlier run left on `p`.
fn clean_up(p: &Paths) {
    let _ = cmd("umount", &["-l", &p.mnt.to_string_lossy()]);
    if let Ok(list) = cmd("losetup", &["-j", &p.fuse.join("nbd").to_string_lossy()]) {
        for dev in list.lines().filter_map(|l| l.split(':').next()) {
            let _ = cmd("losetup", &["-d", dev]);
        }
    }
    let _ = cmd("umount", &["-l", &p.fuse.to_string_lossy()]);
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

fn write_file(path: &Path, c: Content) -> std::io::Result<()> {
    let Content::File { id, len } = c else {
        return Ok(());
    };
    let mut f = File::create(path)?;
    f.write_all(&bytes_of(id, len))?;
    f.sync_all()
}

/// The workload: runs until `stop` or an I/O error (the power went).
/// Returns the number of durable steps it recorded.
fn workload(mnt: &Path, model: &Mutex<Model>, stop: &AtomicBool, seed: u64) -> u64 {
    let mut r = XorShift64Star(seed.wrapping_mul(GOLDEN_GAMMA) | 1);
    let mut done = 0u64;
    let set = |name: &str, e: Entry| {
        if let Ok(mut m) = model.lock() {
            m.insert(name.to_string(), e);
        }
    };
    while !stop.load(Ordering::Relaxed) {
        let files: Vec<(String, Content)> = match model.lock() {
            Ok(m) => m
                .iter()
                .filter(|(n, e)| !n.ends_with(".tmp") && matches!(e.now, Content::File { .. }))
                .map(|(n, e)| (n.clone(), e.now))
                .collect(),
            Err(_) => return done,
        };
        let id = r.next_u64();
        let len = 1 + r.below(MAX_FILE) as usize;
        let new = Content::File { id, len };
        let roll = r.below(100);
        let step = if files.len() >= MAX_FILES || (roll < 20 && !files.is_empty()) {
            // Delete a file.
            let (name, now) = files[r.below(files.len() as u64) as usize].clone();
            let path = mnt.join(&name);
            set(
                &name,
                Entry {
                    now,
                    pending: Pending::Or(Content::Absent),
                },
            );
            fs::remove_file(&path)
                .and_then(|_| sync_dir(path.parent().unwrap_or(mnt)))
                .map(|_| (name, Content::Absent))
        } else if roll < 40 && !files.is_empty() {
            // Replace a file: a temporary copy, fsynced, renamed over it.
            let (name, now) = files[r.below(files.len() as u64) as usize].clone();
            let path = mnt.join(&name);
            let tmp = format!("{name}.tmp");
            let tmp_path = mnt.join(&tmp);
            set(
                &tmp,
                Entry {
                    now: Content::Absent,
                    pending: Pending::Any,
                },
            );
            let res = write_file(&tmp_path, new).and_then(|_| {
                set(
                    &tmp,
                    Entry {
                        now: new,
                        pending: Pending::Or(Content::Absent),
                    },
                );
                set(
                    &name,
                    Entry {
                        now,
                        pending: Pending::Or(new),
                    },
                );
                fs::rename(&tmp_path, &path)?;
                sync_dir(path.parent().unwrap_or(mnt))
            });
            if res.is_ok() {
                set(
                    &tmp,
                    Entry {
                        now: Content::Absent,
                        pending: Pending::None,
                    },
                );
            }
            res.map(|_| (name, new))
        } else {
            // A new file.
            let name = format!("d{}/f{:016x}", id % DIRS, id);
            let path = mnt.join(&name);
            set(
                &name,
                Entry {
                    now: Content::Absent,
                    pending: Pending::Any,
                },
            );
            write_file(&path, new)
                .and_then(|_| sync_dir(path.parent().unwrap_or(mnt)))
                .map(|_| (name, new))
        };
        match step {
            Ok((name, c)) => {
                set(
                    &name,
                    Entry {
                        now: c,
                        pending: Pending::None,
                    },
                );
                done += 1;
            }
            Err(_) => return done,
        }
    }
    done
}

/// What a file holds on disk.
fn read_content(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn matches(found: &Option<Vec<u8>>, c: Content) -> bool {
    match (found, c) {
        (None, Content::Absent) => true,
        (Some(b), Content::File { id, len }) => b.len() == len && *b == bytes_of(id, len),
        _ => false,
    }
}

/// Checks every file of the model against the disk, then makes the model
/// exact again (pending states resolved, never-durable files removed).
/// Returns the number of paths checked and of files there now.
fn check(mnt: &Path, model: &mut Model) -> Result<(usize, usize), String> {
    let mut checked = 0;
    let mut gone = Vec::new();
    for (name, e) in model.iter_mut() {
        let path = mnt.join(name);
        let found = read_content(&path)?;
        checked += 1;
        match e.pending {
            Pending::None if !matches(&found, e.now) => {
                return Err(format!(
                    "{name}: fsynced as {:?}, found {} bytes",
                    e.now,
                    found.as_ref().map_or(0, Vec::len)
                ));
            }
            Pending::Or(c) if !matches(&found, e.now) && !matches(&found, c) => {
                return Err(format!(
                    "{name}: neither its fsynced state {:?} nor the pending {c:?} (found {} bytes)",
                    e.now,
                    found.as_ref().map_or(0, Vec::len)
                ));
            }
            Pending::Or(c) if matches(&found, c) => e.now = c,
            Pending::Any => {
                if found.is_some() {
                    fs::remove_file(&path).map_err(|x| format!("{name}: {x}"))?;
                }
                e.now = Content::Absent;
            }
            _ => {}
        }
        e.pending = Pending::None;
        if e.now == Content::Absent {
            gone.push(name.clone());
        }
    }
    for n in gone {
        model.remove(&n);
    }
    let present = model.len();
    for d in 0..DIRS {
        sync_dir(&mnt.join(format!("d{d}"))).map_err(|e| format!("d{d}: {e}"))?;
    }
    Ok((checked, present))
}

/// Parses `--cuts N` and `--seed S`.
fn parse(args: &[String]) -> Result<(u32, u64), String> {
    let (mut cuts, mut seed) = (200u32, 1u64);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        match a.as_str() {
            "--cuts" => {
                cuts = v
                    .parse()
                    .map_err(|_| format!("--cuts: {v} is not a count"))?
            }
            "--seed" => {
                seed = v
                    .parse()
                    .map_err(|_| format!("--seed: {v} is not a number"))?
            }
            _ => return Err(format!("unknown option {a} (--cuts N, --seed S)")),
        }
    }
    if cuts == 0 {
        return Err("--cuts must be at least 1".into());
    }
    Ok((cuts, seed))
}

/// Runs `cargo xtask fs-crash`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (cuts, seed) = parse(args)?;
    let t0 = Instant::now();
    ensure_apt("nbdfuse", "libnbd-bin")?;
    ensure_apt("mkfs.ext4", "e2fsprogs")?;
    ci::run_cmd("cargo", &["build", "--release", "-p", "ftl-cli"])?;
    let dir = ci::root().join("target").join("fs-crash");
    let p = Paths {
        ftl: ci::root().join("target").join("release").join("ftl"),
        image: dir.join("drive.img"),
        fuse: dir.join("fuse"),
        mnt: dir.join("mnt"),
        dir,
    };
    clean_up(&p);
    let _ = fs::remove_dir_all(&p.dir);
    for d in [&p.dir, &p.fuse, &p.mnt] {
        fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let result = cycle(&p, cuts, seed);
    clean_up(&p);
    let (passed, failed) = match &result {
        Ok(n) => (*n, 0),
        Err((n, _)) => (*n, 1),
    };
    eprintln!(
        "xtask fs-crash: {cuts} cuts asked, seed {seed}, wall {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    println!("{passed} passed, {failed} failed");
    result.map(|_| ()).map_err(|(_, e)| e)
}

/// Formats, then runs the cuts; the number passed, or with the failure.
fn cycle(p: &Paths, cuts: u32, seed: u64) -> Result<u32, (u32, String)> {
    let fail0 = |e: String| (0, e);
    let mut stack = Stack::up(p).map_err(fail0)?;
    cmd("mkfs.ext4", &["-q", "-F", &stack.loop_dev]).map_err(fail0)?;
    mount(&stack.loop_dev, &p.mnt).map_err(fail0)?;
    for d in 0..DIRS {
        fs::create_dir_all(p.mnt.join(format!("d{d}"))).map_err(|e| fail0(e.to_string()))?;
    }
    sync_dir(&p.mnt).map_err(|e| fail0(e.to_string()))?;
    let mut model = Model::new();
    let mut rng = XorShift64Star(seed.wrapping_mul(GOLDEN_GAMMA) | 1);
    let mut compacted = 0usize;
    for cut in 1..=cuts {
        let passed = cut - 1;
        let fail = |e: String| (passed, format!("cut {cut}: {e}"));
        // The workload, and the power cut at a random moment.
        let shared = Arc::new(Mutex::new(std::mem::take(&mut model)));
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let (shared, stop, mnt) = (Arc::clone(&shared), Arc::clone(&stop), p.mnt.clone());
            let s = rng.next_u64();
            thread::spawn(move || workload(&mnt, &shared, &stop, s))
        };
        let delay = Duration::from_millis(300 + rng.below(2200));
        thread::sleep(delay);
        let _ = stack.server.child.kill();
        let _ = stack.server.child.wait();
        stop.store(true, Ordering::Relaxed);
        let steps = worker
            .join()
            .map_err(|_| fail("the workload panicked".into()))?;
        model = match Arc::try_unwrap(shared) {
            Ok(m) => m.into_inner().map_err(|_| fail("model poisoned".into()))?,
            Err(_) => return Err(fail("model still shared".into())),
        };
        // Tear down what the cut left, and power on again.
        if umount(&p.mnt).is_err() {
            let _ = cmd("umount", &["-l", &p.mnt.to_string_lossy()]);
        }
        stack.down(p);
        stack = Stack::up(p).map_err(fail)?;
        let log = fs::read_to_string(p.dir.join("server.stderr")).unwrap_or_default();
        let recovery = log
            .lines()
            .rev()
            .find(|l| l.starts_with("image ") && !l.contains("after compacting"))
            .unwrap_or_default()
            .to_string();
        let total = log.matches("after compacting").count();
        let compactions = total - compacted;
        compacted = total;
        // Journal replay, fsck, then every durable file.
        mount(&stack.loop_dev, &p.mnt).map_err(fail)?;
        umount(&p.mnt).map_err(fail)?;
        cmd("fsck.ext4", &["-fn", &stack.loop_dev])
            .map_err(|e| fail(format!("fsck.ext4 -fn: {e}")))?;
        mount(&stack.loop_dev, &p.mnt).map_err(fail)?;
        let (paths, files) = check(&p.mnt, &mut model).map_err(fail)?;
        let flush = recovery.split_once("; ").map_or("", |x| x.1);
        eprintln!(
            "cut {cut}/{cuts}: SIGKILL after {:.2} s, {steps} durable steps, {compactions} compactions; restart: {flush}; \
             ext4 journal replayed, fsck clean, {paths} paths checked, {files} files intact",
            delay.as_secs_f64()
        );
    }
    let _ = umount(&p.mnt);
    stack.down(p);
    let _ = Command::new("kill")
        .args(["-INT", &stack.server.child.id().to_string()])
        .status();
    let _ = stack.server.child.wait();
    Ok(cuts)
}

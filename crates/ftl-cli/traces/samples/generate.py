#!/usr/bin/env python3
"""Writes the format samples in this directory from the publishers'
documented field layouts (see docs/traces.md). Deterministic: the same
files every run. Addresses stay within 2 GiB per device so every sample
fits the default drive after merging a few devices."""

import hashlib
import random

N = 2000
GIB = 1 << 30


def rng(name):
    return random.Random(name)


def sizes(r, unit):
    return unit * r.choice([1, 1, 1, 2, 2, 4, 8, 16])


def write(name, lines):
    with open(name, "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


def alibaba():
    r = rng("alibaba")
    out, t = [], 1577808000000000
    for _ in range(N):
        t += r.randint(0, 400)
        out.append(f"{r.choice([3, 17, 42])},{r.choice('RWW')},{r.randrange(0, 2 * GIB, 4096)},{sizes(r, 4096)},{t}")
    write("alibaba.csv", out)


def tencent():
    r = rng("tencent")
    out, t = [], 1538323200
    for i in range(N):
        t += 1 if i % 40 == 39 else 0
        out.append(f"{t},{r.randrange(0, 2 * GIB // 512, 8)},{sizes(r, 8)},{r.choice('011')},{r.choice([1063, 2077])}")
    write("tencent.csv", out)


def systor():
    r = rng("systor")
    out, t = ["Timestamp,Response,IOType,LUN,Offset,Size"], 1487155725.0
    for i in range(N):
        t += r.randint(1, 3000) / 1e6
        resp = "" if i % 97 == 5 else f"{r.randint(50, 5000) / 1e6:.6f}"
        out.append(f"{t:.6f},{resp},{r.choice('RW')},{r.choice([0, 4])},{r.randrange(0, 2 * GIB, 4096)},{sizes(r, 4096)}")
    write("systor.csv", out)


def fiu():
    r = rng("fiu")
    out, t = [], 89966527861383
    for _ in range(N):
        t += r.randint(1000, 2000000)
        blk = r.randrange(0, 1 << 18) * 8
        content = r.randrange(0, 600)  # few contents: duplicates happen
        md5 = hashlib.md5(str(content).encode()).hexdigest()
        out.append(f"{t} {r.choice([4421, 4430, 5003])} {r.choice(['dovecot', 'exim4', 'pdflush'])} {blk} 8 {r.choice('RWW')} 8 0 {md5}")
    write("fiu.txt", out)


def spc():
    r = rng("spc")
    out, t = [], 0.0
    for _ in range(N):
        t += r.randint(0, 20000) / 1e6
        out.append(f"{r.choice([0, 1, 2])},{r.randrange(0, 2 * GIB // 512)},{sizes(r, 512)},{r.choice('rww')},{t:.6f}")
    write("spc.csv", out)


def fio(version):
    r = rng(f"fio{version}")
    dev = "/dev/nbd0"
    pre = (lambda ts: f"{ts} ") if version == 3 else (lambda ts: "")
    out, t = [f"fio version {version} iolog"], 0
    out += [f"{pre(0)}{dev} add", f"{pre(0)}{dev} open"]
    for i in range(N):
        t += r.randint(5, 300)
        if version == 2 and i % 100 == 99:
            out.append(f"{dev} wait {r.randint(100, 1000)} 0")
        op = r.choice(["read", "write", "write", "trim"]) if i % 50 else "sync"
        if op == "sync":
            out.append(f"{pre(t)}{dev} sync 0 0")
        else:
            out.append(f"{pre(t)}{dev} {op} {r.randrange(0, 2 * GIB, 4096)} {sizes(r, 4096)}")
    out.append(f"{pre(t)}{dev} close")
    write(f"fio-v{version}.iolog", out)


def blkparse_custom():
    r = rng("blkcustom")
    out, t = [], 0
    for _ in range(N // 2):
        t += r.randint(1000, 900000)
        sector, n, rw = r.randrange(0, 2 * GIB // 512, 8), sizes(r, 8), r.choice(["R", "W", "WS", "RA"])
        s = f"{t // 10**9}.{t % 10**9:09d}"
        out.append(f"8,16 {s} Q {rw} {sector} {n}")
        out.append(f"8,16 {s} D {rw} {sector} {n}")
    write("blkparse-custom.txt", out)


def msr():
    r = rng("msr")
    out, t = [], 128166372003061629
    for _ in range(N):
        t += r.randint(0, 200000)
        out.append(f"{t},hm,{r.choice([0, 1])},{r.choice(['Read', 'Write', 'Write'])},{r.randrange(0, 2 * GIB, 4096)},{sizes(r, 4096)},{r.randint(100, 90000)}")
    write("msr.csv", out)


def vscsi():
    r = rng("vscsi")
    out, t = ["version,time,op,size,lbn"], 5633898368802
    for _ in range(N):
        t += r.randint(0, 3000)
        out.append(f"1,{t},{r.choice(['28', '2a', '2a'])},{sizes(r, 4096)},{r.randrange(0, 2 * GIB // 512, 8)}")
    write("vscsi.csv", out)


def native():
    r = rng("ftl")
    out, t = ["# ftl trace"], 0
    for i in range(N):
        t += r.randint(100, 50000)
        off, n = r.randrange(0, GIB, 4096), sizes(r, 4096)
        op = r.choice("RWWT") if i % 20 else "C"
        if op == "C":
            out.append(f"{t} C {off} {n} {off + GIB}")
        else:
            out.append(f"{t} {op} {off} {n}")
    write("ftl.trace", out)


ZONE = 16 << 20  # the default drive's zone: one erase block in each of its 16 planes
UNIT = 4096


def zns():
    """A log-structured writer on zones 0..11 of the default zone size:
    three streams write at their zones' pointers and append, read back
    what they wrote, finish, close and reopen zones, and reset the full
    zone with the least recent data when no zone is empty. Every command
    is valid (a model of the zone states runs beside it)."""
    r = rng("zns")
    cap = ZONE // UNIT
    wp = [0] * 12
    full = [False] * 12
    stream = [None, None, None]
    out, t = ["# ftl trace: zone commands (host.interface = zns, 16 MiB zones)"], 0
    filled = []
    opened = set()  # zones open or closed (an empty zone cannot be closed)

    def take(s):
        free = [z for z in range(12) if wp[z] == 0 and not full[z] and z not in stream]
        if not free:
            z = filled.pop(0)
            out.append(f"{t} ZR {z * ZONE}")
            wp[z], full[z] = 0, False
            free = [z]
        z = free[0]
        stream[s] = z
        if r.random() < 0.5:
            out.append(f"{t} ZO {z * ZONE}")
            opened.add(z)

    def done(s):
        z = stream[s]
        full[z] = True
        filled.append(z)
        opened.discard(z)
        stream[s] = None

    while len(out) < N:
        t += r.randint(1000, 60000)
        s = r.randrange(3)
        if stream[s] is None:
            take(s)
        z = stream[s]
        k = r.random()
        if k < 0.55 or k < 0.75:
            n = min(r.choice([16, 16, 32, 64]), cap - wp[z])
            if k < 0.55:
                out.append(f"{t} W {z * ZONE + wp[z] * UNIT} {n * UNIT}")
            else:
                out.append(f"{t} A {z * ZONE} {n * UNIT}")
            wp[z] += n
            opened.add(z)
            if wp[z] == cap:
                done(s)
        elif k < 0.93:
            data = [y for y in range(12) if wp[y] > 0]
            if data:
                y = r.choice(data)
                at = r.randrange(wp[y])
                n = min(r.choice([1, 4, 16]), wp[y] - at)
                out.append(f"{t} R {y * ZONE + at * UNIT} {n * UNIT}")
        elif k < 0.96:
            out.append(f"{t} ZF {z * ZONE}")
            done(s)
        elif z in opened:
            out.append(f"{t} ZC {z * ZONE}")
    write("zns.trace", out)


def fdp():
    """Two tenants with placement identifiers (host.interface = fdp,
    fdp.handles = 4): a hot one over 64 MiB on identifier 0, a cold one
    over 1 GiB spread over identifiers 1-3, and reads of both."""
    r = rng("fdp")
    out, t = ["# ftl trace: writes with FDP placement identifiers"], 0
    for _ in range(N):
        t += r.randint(1000, 60000)
        hot = r.random() < 0.7
        off = r.randrange(0, 64 << 20, UNIT) if hot else (64 << 20) + r.randrange(0, GIB, UNIT)
        if r.random() < 0.25:
            out.append(f"{t} R {off} {UNIT}")
        else:
            out.append(f"{t} W {off} {UNIT} {0 if hot else r.randint(1, 3)}")
    write("fdp.trace", out)


def blkparse_default():
    r = rng("blkdefault")
    out, t, seq = [], 0, 0
    for _ in range(N // 2):
        t += r.randint(1000, 900000)
        sector, n, rw = r.randrange(0, 2 * GIB // 512, 8), sizes(r, 8), r.choice(["R", "W", "WS"])
        s = f"{t // 10**9:5d}.{t % 10**9:09d}"
        for act in ("Q", "D"):
            seq += 1
            out.append(f"  8,16   0 {seq:8d} {s}  1234  {act} {rw:3} {sector} + {n} [fio]")
    write("blkparse.txt", out)


if __name__ == "__main__":
    alibaba(); tencent(); systor(); fiu(); spc(); fio(2); fio(3)
    blkparse_custom(); blkparse_default(); msr(); vscsi(); native(); zns(); fdp()

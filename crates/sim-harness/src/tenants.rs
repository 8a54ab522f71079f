//! Tenants sharing a drive: each writes single units to its own region,
//! at random or as a sequential log, at its own rate, tagged with its own
//! placement identifier. The mix starts by filling every region once in
//! order (the tenants' data exists before they overwrite it), then draws
//! each request's tenant by weight.

use crate::workload::{HostOp, HostRequest, RequestSource, Rng};

/// One tenant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tenant {
    /// First unit of its region.
    pub base: u32,
    /// Units of its region.
    pub units: u32,
    /// A sequential log writer (wraps around its region), else random.
    pub sequential: bool,
    /// Share of the requests, relative to the other tenants' weights.
    pub weight: u32,
    /// Placement identifier of its writes (the stream under ZNS).
    pub placement: u8,
}

/// The tenants' requests: the fill, then `requests` mixed writes.
pub struct Tenants {
    t: Vec<Tenant>,
    cursor: Vec<u32>,
    rng: Rng,
    fill_left: u64,
    fill_tenant: usize,
    left: u64,
    total: u64,
}

impl Tenants {
    /// The tenants `t` (at least one, weights not all 0) for `requests`
    /// mixed writes after the fill.
    pub fn new(t: Vec<Tenant>, requests: u64, seed: u64) -> Self {
        let fill: u64 = t.iter().map(|x| u64::from(x.units)).sum();
        Tenants {
            cursor: vec![0; t.len()],
            rng: Rng::new(seed),
            fill_left: fill,
            fill_tenant: 0,
            left: requests,
            total: fill + requests,
            t,
        }
    }

    /// Requests of the fill (one per unit of every region).
    pub fn fill_requests(&self) -> u64 {
        self.t.iter().map(|x| u64::from(x.units)).sum()
    }

    fn write(&self, i: usize, off: u32) -> HostRequest {
        let t = self.t[i];
        HostRequest {
            time_ns: 0,
            op: HostOp::Write,
            lpn: t.base + off,
            units: 1,
            placement: t.placement,
            idle_ns: 0,
            window: 0,
        }
    }
}

impl RequestSource for Tenants {
    fn next_request(&mut self) -> Option<HostRequest> {
        if self.fill_left > 0 {
            while self.cursor[self.fill_tenant] >= self.t[self.fill_tenant].units {
                self.cursor[self.fill_tenant] = 0;
                self.fill_tenant += 1;
            }
            let i = self.fill_tenant;
            let off = self.cursor[i];
            self.fill_left -= 1;
            self.cursor[i] += 1;
            if self.fill_left == 0 {
                self.cursor.fill(0);
            }
            return Some(self.write(i, off));
        }
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let sum: u64 = self.t.iter().map(|x| u64::from(x.weight)).sum();
        let mut pick = self.rng.below(sum.max(1));
        let i = self
            .t
            .iter()
            .position(|x| {
                let w = u64::from(x.weight);
                if pick < w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .unwrap_or(0);
        let units = self.t[i].units.max(1);
        let off = if self.t[i].sequential {
            let c = self.cursor[i] % units;
            self.cursor[i] = c + 1;
            c
        } else {
            self.rng.below(u64::from(units)) as u32
        };
        Some(self.write(i, off))
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_then_mix_by_weight_within_regions() {
        let t = vec![
            Tenant {
                base: 0,
                units: 10,
                sequential: false,
                weight: 1,
                placement: 0,
            },
            Tenant {
                base: 10,
                units: 30,
                sequential: true,
                weight: 3,
                placement: 1,
            },
        ];
        let mut src = Tenants::new(t, 4000, 1);
        assert_eq!(src.fill_requests(), 40);
        let fill: Vec<u32> = (0..40).map(|_| src.next_request().unwrap().lpn).collect();
        assert_eq!(fill, (0..40).collect::<Vec<_>>());
        let mut per = [0u32; 2];
        let mut last_seq = None;
        while let Some(r) = src.next_request() {
            let i = usize::from(r.placement);
            per[i] += 1;
            if i == 0 {
                assert!(r.lpn < 10);
            } else {
                assert!((10..40).contains(&r.lpn));
                if let Some(l) = last_seq {
                    assert_eq!(r.lpn, if l == 39 { 10 } else { l + 1 });
                }
                last_seq = Some(r.lpn);
            }
        }
        assert_eq!(per[0] + per[1], 4000);
        assert!(per[1] > 2 * per[0] && per[1] < 4 * per[0], "{per:?}");
    }
}

//! Reparo's space-utilisation arithmetic (seed 001, Sec. 5.4.2, Eq. 5.4,
//! Tables 8 and 9): the exact `alpha` and the utilisation of the victim and
//! the helpers before and after a die failure, as fractions in lowest terms
//! so they compare exactly with the paper's tables.
//!
//! This is evaluation arithmetic over a [`Cdr`] adjustment, not something the
//! drive computes at run time (the controller only needs `floor(alpha)` and
//! the redirection in `firmware_core::tech::reparo::handler`), so it lives on
//! the host side, with its wide integers.

use firmware_core::tech::reparo::handler::Cdr;

/// A non-negative fraction `num / den` kept in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    /// Numerator.
    pub num: u128,
    /// Denominator (never zero).
    pub den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while let Some(r) = a.checked_rem(b) {
        a = b;
        b = r;
    }
    a
}

impl Ratio {
    /// `num / den` in lowest terms; `None` when `den` is zero.
    pub fn new(num: u128, den: u128) -> Option<Ratio> {
        let g = gcd(num, den);
        Some(Ratio {
            num: num.checked_div(g)?,
            den: den.checked_div(g).filter(|&d| d != 0)?,
        })
    }

    /// The value as a float (for printing).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The value in hundredths of a per cent, rounded half up (`1/15` gives
    /// 667, i.e. 6.67 %): the precision of Tables 8 and 9.
    pub fn percent_hundredths(self) -> Option<u128> {
        let twice = self.num.checked_mul(20_000)?.checked_add(self.den)?;
        twice.checked_div(self.den.checked_mul(2)?)
    }

    /// Relative growth `(self - before) / before`, or `None` when `self` is
    /// smaller than `before`, `before` is zero or the products overflow.
    pub fn growth_over(self, before: Ratio) -> Option<Ratio> {
        let a = self.num.checked_mul(before.den)?;
        let b = before.num.checked_mul(self.den)?;
        Ratio::new(a.checked_sub(b)?, b)
    }
}

/// The utilisations around one die failure, for a CDR adjustment.
pub trait Utilisation {
    /// Exact `alpha = |LS_h| / (D_ssd - 1)` of Eq. 5.4.
    fn alpha(&self) -> Ratio;
    /// Every core's utilisation before the failure, `|LS_i| / (D_i * cap)`.
    fn utilisation_before(&self) -> Ratio;
    /// The victim's utilisation under `reparo_IDR` (no adjustment): the same
    /// logical space on one die less.
    fn victim_utilisation_idr(&self) -> Ratio;
    /// A helper's utilisation after the CDR adjustment (integer `floor(alpha)`).
    fn helper_utilisation_after(&self) -> Ratio;
    /// The victim's utilisation after the CDR adjustment (integer `floor(alpha)`).
    fn victim_utilisation_after(&self) -> Ratio;
}

/// `D_ssd / N`, the dies of one core before the failure.
fn dies_per_core(c: &Cdr) -> u64 {
    let s = c.shape();
    u64::from(s.dies) / u64::from(s.cores.max(1))
}

/// `logical / (dies * die_capacity)`.
fn utilisation(c: &Cdr, logical: u64, dies: u64) -> Ratio {
    let phys = u128::from(dies) * u128::from(c.shape().die_capacity);
    Ratio::new(u128::from(logical), phys).unwrap_or(Ratio { num: 0, den: 1 })
}

impl Utilisation for Cdr {
    fn alpha(&self) -> Ratio {
        let unit = u64::from(self.shape().dies).saturating_sub(1);
        Ratio::new(u128::from(self.logical_per_core()), u128::from(unit))
            .unwrap_or(Ratio { num: 0, den: 1 })
    }

    fn utilisation_before(&self) -> Ratio {
        utilisation(self, self.logical_per_core(), dies_per_core(self))
    }

    fn victim_utilisation_idr(&self) -> Ratio {
        let dies = dies_per_core(self).saturating_sub(1);
        utilisation(self, self.logical_per_core(), dies)
    }

    fn helper_utilisation_after(&self) -> Ratio {
        utilisation(self, self.helper_logical_after(), dies_per_core(self))
    }

    fn victim_utilisation_after(&self) -> Ratio {
        let dies = dies_per_core(self).saturating_sub(1);
        utilisation(self, self.victim_logical_after(), dies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firmware_core::tech::reparo::handler::SsdShape;

    fn ratio(num: u128, den: u128) -> Ratio {
        Ratio::new(num, den).unwrap()
    }

    /// Fig. 30: 4 cores, 16 dies, 60 LBAs, victim core 3.
    #[test]
    fn figure_30() {
        let shape = SsdShape {
            cores: 4,
            dies: 16,
            logical: 60,
            die_capacity: 6,
        };
        let c = Cdr::new(shape, 3).unwrap();
        assert_eq!(c.alpha(), ratio(1, 1));
        assert_eq!(c.utilisation_before(), ratio(5, 8)); // 0.625
        assert_eq!(c.helper_utilisation_after(), ratio(2, 3)); // 0.667
        assert_eq!(c.victim_utilisation_after(), ratio(2, 3));
        assert_eq!(c.victim_utilisation_idr(), ratio(5, 6)); // 0.83
        let grow = c
            .helper_utilisation_after()
            .growth_over(c.utilisation_before());
        assert_eq!(grow.unwrap().percent_hundredths(), Some(667));
        let idr = c
            .victim_utilisation_idr()
            .growth_over(c.utilisation_before());
        assert_eq!(idr.unwrap().percent_hundredths(), Some(3333));
    }

    /// Tables 8 and 9 for 4 to 128 dies per core. PM1643 has four flash
    /// cores (Sec. 5.6), which Table 9 assumes: its increase is
    /// `1 / (4 x - 1)` for `x` dies per core.
    #[test]
    fn tables_8_and_9() {
        let per_core_dies = [4u32, 8, 16, 32, 64, 128];
        let table8_victim = [3333u128, 1429, 667, 323, 159, 79];
        let table9 = [667u128, 323, 159, 79, 39, 20];
        for ((x, t8), t9) in per_core_dies.into_iter().zip(table8_victim).zip(table9) {
            let dies = 4 * x;
            // A logical space of whole redirection units, U = 0.9 as in Sec. 5.6.
            let logical = 4 * u64::from(dies - 1) * 9;
            let cap = logical / u64::from(dies) * 10 / 9;
            let shape = SsdShape {
                cores: 4,
                dies,
                logical,
                die_capacity: cap.max(1),
            };
            for victim in 0..4 {
                let c = Cdr::new(shape, victim).unwrap();
                let before = c.utilisation_before();
                let pct = |after: Ratio| after.growth_over(before).unwrap().percent_hundredths();
                assert_eq!(pct(c.victim_utilisation_idr()), Some(t8), "x = {x}");
                assert_eq!(pct(before), Some(0), "IDR helper, x = {x}");
                assert_eq!(pct(c.victim_utilisation_after()), Some(t9), "x = {x}");
                assert_eq!(pct(c.helper_utilisation_after()), Some(t9), "x = {x}");
                assert_eq!(
                    c.alpha(),
                    ratio(u128::from(logical / 4), u128::from(dies - 1))
                );
            }
        }
    }
}

//! Monitors: they observe queues, links and flows and never steer the simulation.

pub mod class;
pub mod flow;
pub mod histogram;
pub mod queue;
pub mod timeavg;

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²); 1 when all equal, 1/n when one takes all.
/// Returns NaN for an empty slice and 1 when every value is zero.
pub fn jain_index(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        1.0
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_index(&[3.0, 3.0, 3.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        // (1+2)^2 / (2*(1+4)) = 0.9
        assert!((jain_index(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }
}

//! Failure injection: per function and chip, a return code from call N or in a time window, and
//! latency per call (fixed, random, or a "hang" that blocks for `simulation.hang_ms`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::function::Function;

/// `[[inject]]`: one rule, in the topology or in the overlay file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InjectionRule {
    /// C symbol of the function, e.g. "dcmi_get_device_health", or "*" for every function.
    pub function: String,
    /// Only calls on this chip (default: every chip, and the chip-less functions too).
    #[serde(default)]
    pub logic_id: Option<u32>,
    /// Return code to inject, e.g. -8012 (default: none, only latency).
    #[serde(default)]
    pub code: Option<i32>,
    /// First matching call (1-based) the rule applies to (default 1).
    #[serde(default = "one")]
    pub from_call: u64,
    /// Last matching call it applies to (default: no end).
    #[serde(default)]
    pub until_call: Option<u64>,
    /// `[start, end)` in seconds since `dcmi_init` (overlay rules: since the overlay was applied).
    #[serde(default)]
    pub window_s: Option<[f64; 2]>,
    /// Added latency per call in ms: `5` or a uniform random range `[2, 20]`.
    #[serde(default)]
    pub latency_ms: Option<Latency>,
    /// Block each matching call for `simulation.hang_ms` (a hung driver).
    #[serde(default)]
    pub hang: bool,
}

fn one() -> u64 {
    1
}

/// Injected latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Latency {
    /// Always this many ms.
    Fixed(u64),
    /// Uniformly random in `[min, max]` ms (seeded, deterministic per call number).
    Range([u64; 2]),
}

impl InjectionRule {
    /// The function it targets (`None` = every function).
    ///
    /// # Errors
    /// A message when `function` is neither "*" nor an exported symbol.
    pub fn target(&self) -> Result<Option<Function>, String> {
        if self.function == "*" {
            return Ok(None);
        }
        Function::from_name(&self.function)
            .map(Some)
            .ok_or_else(|| format!("`{}` is not an exported DCMI function (nor \"*\")", self.function))
    }
}

/// What to do to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Sleep this long inside the call first.
    pub delay: Duration,
    /// Then return this code instead of running the function.
    pub code: Option<i32>,
}

struct ActiveRule {
    function: Option<Function>,
    logic_id: Option<u32>,
    code: Option<i32>,
    from_call: u64,
    until_call: u64,
    window_ms: Option<(u64, u64)>,
    latency: Option<Latency>,
    hang: bool,
    calls: AtomicU64,
}

/// A compiled rule set with per-rule call counters. Immutable except for the counters.
pub struct Injector {
    rules: Vec<ActiveRule>,
    seed: u64,
    hang: Duration,
}

impl Injector {
    /// Compiles `rules` (already validated; unknown function names are dropped).
    pub fn new(rules: &[InjectionRule], seed: u64, hang: Duration) -> Injector {
        let rules = rules
            .iter()
            .filter_map(|rule| {
                let function = rule.target().ok()?;
                Some(ActiveRule {
                    function,
                    logic_id: rule.logic_id,
                    code: rule.code,
                    from_call: rule.from_call.max(1),
                    until_call: rule.until_call.unwrap_or(u64::MAX),
                    window_ms: rule.window_s.map(|[start, end]| (seconds_to_ms(start), seconds_to_ms(end))),
                    latency: rule.latency_ms,
                    hang: rule.hang,
                    calls: AtomicU64::new(0),
                })
            })
            .collect();
        Injector { rules, seed, hang }
    }

    /// An injector without rules.
    pub fn empty() -> Injector {
        Injector { rules: Vec::new(), seed: 0, hang: Duration::ZERO }
    }

    /// True when no rule exists (the hot path then skips everything).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Counts this call against every matching rule and returns the combined outcome: latencies add
    /// up, the first rule with a code decides the code.
    ///
    /// `logic_id` is `None` for functions not addressed to one chip; `elapsed_ms` is the time since the
    /// rule set became active.
    pub fn check(&self, function: Function, logic_id: Option<u32>, elapsed_ms: u64) -> Outcome {
        let mut outcome = Outcome::default();
        for rule in &self.rules {
            if rule.function.is_some_and(|wanted| wanted != function) {
                continue;
            }
            if rule.logic_id.is_some() && rule.logic_id != logic_id {
                continue;
            }
            if let Some((start, end)) = rule.window_ms {
                if elapsed_ms < start || elapsed_ms >= end {
                    continue;
                }
            }
            let call = rule.calls.fetch_add(1, Ordering::Relaxed) + 1;
            if call < rule.from_call || call > rule.until_call {
                continue;
            }
            if rule.hang {
                outcome.delay += self.hang;
            }
            outcome.delay += match rule.latency {
                None => Duration::ZERO,
                Some(Latency::Fixed(ms)) => Duration::from_millis(ms),
                Some(Latency::Range([min, max])) => Duration::from_millis(random_between(self.seed, call, min, max)),
            };
            if outcome.code.is_none() {
                outcome.code = rule.code;
            }
        }
        outcome
    }
}

fn seconds_to_ms(seconds: f64) -> u64 {
    (seconds.max(0.0) * 1000.0).round() as u64
}

fn random_between(seed: u64, call: u64, min: u64, max: u64) -> u64 {
    if max <= min {
        return min;
    }
    let mut z = seed ^ call.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    min + (z ^ (z >> 31)) % (max - min + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(function: &str) -> InjectionRule {
        InjectionRule {
            function: function.to_owned(),
            logic_id: None,
            code: None,
            from_call: 1,
            until_call: None,
            window_s: None,
            latency_ms: None,
            hang: false,
        }
    }

    #[test]
    fn code_from_call_n_until_m_on_one_chip() {
        let injector = Injector::new(
            &[InjectionRule {
                logic_id: Some(2),
                code: Some(-8012),
                from_call: 3,
                until_call: Some(4),
                ..rule("dcmi_get_device_health")
            }],
            0,
            Duration::from_secs(1),
        );
        let codes: Vec<Option<i32>> =
            (0..6).map(|_| injector.check(Function::GetDeviceHealth, Some(2), 0).code).collect();
        assert_eq!(codes, vec![None, None, Some(-8012), Some(-8012), None, None]);
        assert_eq!(injector.check(Function::GetDeviceHealth, Some(1), 0).code, None);
        assert_eq!(injector.check(Function::GetDeviceTemperature, Some(2), 0).code, None);
    }

    #[test]
    fn window_latency_and_hang() {
        let injector = Injector::new(
            &[
                InjectionRule { window_s: Some([1.0, 2.0]), code: Some(-8005), ..rule("*") },
                InjectionRule { latency_ms: Some(Latency::Range([5, 9])), ..rule("dcmi_get_device_temperature") },
                InjectionRule { hang: true, ..rule("dcmi_get_device_network_health") },
            ],
            7,
            Duration::from_secs(3600),
        );
        assert_eq!(injector.check(Function::GetCardList, None, 999).code, None);
        assert_eq!(injector.check(Function::GetCardList, None, 1000).code, Some(-8005));
        assert_eq!(injector.check(Function::GetCardList, None, 2000).code, None);
        for _ in 0..50 {
            let delay = injector.check(Function::GetDeviceTemperature, Some(0), 0).delay;
            assert!((5..=9).contains(&(delay.as_millis() as u64)), "{delay:?}");
        }
        assert_eq!(injector.check(Function::GetDeviceNetworkHealth, Some(0), 0).delay, Duration::from_secs(3600));
    }
}

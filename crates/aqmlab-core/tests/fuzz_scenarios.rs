//! Fuzzing the scenario path (issues 17, 28): text + `--set` overrides → load → parse →
//! validate → build → a run.
//!
//! Inputs are the project's own scenario files (examples, paper packs, the robustness
//! reproducers) mutated at two levels: bytes (delete, duplicate or splice in tokens from a
//! dictionary of troublesome values) and structure (replace a leaf with an extreme value of any
//! type, delete a key, duplicate an array element), then given `--set` overrides as a user
//! types them: a path to one of the scenario's own values or a new one, an extreme or a huge
//! value, now and then a key path thousands of levels deep or thousands of characters long.
//! Limits stay as the scenario has them (its own `[limits]`, else the defaults): nothing is
//! forced smaller. Every case must end in `Ok` or a `ScenarioError` — never a panic (overflow
//! checks are on in test builds) — within a time bound, and a case that is accepted must not
//! allocate more than its `limits.memory` (a counting allocator measures the peak of every
//! case; `SLACK` covers the harness). Runs are simulated for at most `RUN_WALL` of wall time
//! through the interrupt poll (default: ~40 000 events), so event handlers see the mutated
//! parameters too and queues have time to grow.
//!
//! Default: 1500 cases (a few seconds). Long runs, optimized but with overflow checks kept:
//! `AQMLAB_FUZZ_CASES=1000000 CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true cargo test --release
//! -p aqmlab-core --test fuzz_scenarios -- --nocapture` (`AQMLAB_FUZZ_SEED` picks the stream).
//! Failing inputs are written to `target/fuzz-failures/` as they are found;
//! `AQMLAB_FUZZ_FIRST=n` replays a stream from case n (earlier cases are generated, not run).

use aqmlab_core::rng::Rng;
use aqmlab_core::scenario::{BuildOptions, LoadOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A case slower than this counts as a hang.
const HANG: Duration = Duration::from_secs(20);
/// Allocations the harness itself makes around a case (the texts, the error) and estimates
/// leave out by design (below a run's fixed costs): a case may exceed its limit by this much.
const SLACK: usize = 64 << 20;

/// The system allocator, counting the bytes live now and their peak since the last reset.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const TOKENS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "-inf",
    "0.0",
    "1e-300",
    "\"\"",
    "\"0s\"",
    "\"1ns\"",
    "\"1e18ns\"",
    "\"31years\"",
    "\"0bps\"",
    "\"1bps\"",
    "\"1e30Gbps\"",
    "\"99999999999s\"",
    "\"1B\"",
    "\"0B\"",
    "\"{i}\"",
    "\"a\"",
    "\"r1\"",
    "\"s1\"",
    "\"d1\"",
    "[]",
    "{}",
    "[[flows]]",
    "[topology]",
    "[simulation]",
    "=",
    "\n",
    "\"",
    "'",
    "[",
    "]",
    "{",
    "}",
    ",",
    "#",
    "true",
    "false",
    "\"red\"",
    "\"pfifo\"",
    "\"tcp\"",
    "\"cbr\"",
    "\"dumbbell\"",
    "\"transit_stub\"",
    "\"graph\"",
    "\u{1b}[31m",
    "é",
    "\u{202e}",
];

const KEYS: &[&str] = &[
    "count",
    "limit",
    "rate",
    "delay",
    "pairs",
    "nodes",
    "links",
    "min_th",
    "max_th",
    "max_p",
    "w_q",
    "duration",
    "warmup",
    "sample_interval",
    "start",
    "stop",
    "start_jitter",
    "size",
    "packet_size",
    "loss",
    "priority",
    "quantum",
    "flows",
    "target",
    "interval",
    "bytes",
    "seed",
    "transit_domains",
    "transit_nodes",
    "stubs_per_transit",
    "mean_on",
    "mean_off",
    "cc",
    "ecn",
];

fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["scenarios", "tests/data/robustness", "tests/data/pcap"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter(|t| t.len() < 200_000)
        .collect();
    assert!(
        texts.len() >= 10,
        "scenario corpus not found under {root:?}"
    );
    texts
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> &'a T {
    &items[(rng.uniform() * items.len() as f64) as usize % items.len()]
}

fn below(rng: &mut Rng, n: usize) -> usize {
    (rng.uniform() * n as f64) as usize % n.max(1)
}

/// A byte-level mutation (kept on char boundaries).
fn mutate_text(text: &str, rng: &mut Rng) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len().max(1);
    let at = below(rng, n);
    let len = 1 + below(rng, 40);
    let end = (at + len).min(chars.len());
    let s = |a: usize, b: usize| {
        chars[a.min(chars.len())..b.min(chars.len())]
            .iter()
            .collect::<String>()
    };
    match below(rng, 4) {
        0 => s(0, at) + &s(end, chars.len()),
        1 => s(0, end) + &s(at, end) + &s(end, chars.len()),
        2 => s(0, at) + *pick(rng, TOKENS) + &s(at, chars.len()),
        _ => s(0, at) + *pick(rng, TOKENS) + &s(end, chars.len()),
    }
}

fn extreme_value(rng: &mut Rng) -> toml::Value {
    use toml::Value as V;
    match below(rng, 12) {
        0 => V::Integer(*pick(
            rng,
            &[
                0,
                -1,
                1,
                2,
                3,
                1000,
                u32::MAX as i64,
                1 << 32,
                i64::MAX,
                i64::MIN,
            ],
        )),
        1 => V::Float(*pick(
            rng,
            &[
                0.0,
                -0.5,
                0.5,
                1.0,
                1.5,
                1e308,
                -1e308,
                f64::NAN,
                f64::INFINITY,
                1e-300,
            ],
        )),
        2 => V::Boolean(rng.uniform() < 0.5),
        3 => V::Array(vec![]),
        4 => V::Table(toml::Table::new()),
        5 => V::String(
            (*pick(
                rng,
                &[
                    "0s", "1ns", "1e18ns", "0bps", "1bps", "1e30Gbps", "1B", "", "x", "{i}", "r1",
                    "-1ms", "nan s",
                ],
            ))
            .into(),
        ),
        6 => V::String(format!("{}ms", below(rng, 100_000))),
        7 => V::String(format!("{}Mbps", below(rng, 10_000))),
        8 => V::Integer(below(rng, 200) as i64),
        9 => V::Array(vec![
            V::Integer(below(rng, 10) as i64),
            V::String("a".into()),
        ]),
        10 => V::String("\u{1b}[31m[bold]x[/]".into()),
        _ => V::Float(rng.uniform() * 2.0 - 0.5),
    }
}

/// Paths to every value in the document: (table keys / array indices).
fn leaves(v: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                path.push(k.clone());
                out.push(path.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(format!("#{i}"));
                out.push(path.clone());
                leaves(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut toml::Value, path: &[String]) -> Option<&'a mut toml::Value> {
    let mut cur = v;
    for step in path {
        cur = match (cur, step.strip_prefix('#')) {
            (toml::Value::Array(a), Some(i)) => a.get_mut(i.parse::<usize>().ok()?)?,
            (toml::Value::Table(t), None) => t.get_mut(step)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A structural mutation of a parsed document.
fn mutate_doc(doc: &mut toml::Value, rng: &mut Rng) {
    let mut all = Vec::new();
    leaves(doc, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return;
    }
    let path = pick(rng, &all).clone();
    let (parent_path, last) = path.split_at(path.len() - 1);
    match below(rng, 5) {
        0 | 1 => {
            if let Some(v) = at(doc, &path) {
                *v = extreme_value(rng);
            }
        }
        2 => {
            // delete the key / element
            if let Some(parent) = at(doc, parent_path) {
                match (parent, last[0].strip_prefix('#')) {
                    (toml::Value::Table(t), None) => {
                        t.remove(&last[0]);
                    }
                    (toml::Value::Array(a), Some(i)) => {
                        if let Ok(i) = i.parse::<usize>() {
                            if i < a.len() {
                                a.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        3 => {
            // duplicate an array element (another flow, link, ...)
            if let Some(toml::Value::Array(a)) = at(doc, parent_path) {
                if let Some(x) = a.first().cloned() {
                    a.push(x);
                }
            }
        }
        _ => {
            // add a known key with an extreme value to some table
            if let Some(toml::Value::Table(t)) = at(doc, parent_path) {
                t.insert((*pick(rng, KEYS)).into(), extreme_value(rng));
            }
        }
    }
}

/// A key path in `--set` syntax to the value at `path` (from `leaves`).
fn set_path(path: &[String]) -> String {
    let mut out = String::new();
    for step in path {
        if let Some(i) = step.strip_prefix('#') {
            out.push_str(&format!("[{i}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(step);
        }
    }
    out
}

/// Some `--set` assignments as a user types them: to the scenario's own values or new keys,
/// with extreme, odd or huge values; now and then a pathological path.
fn overrides(text: &str, rng: &mut Rng) -> Vec<String> {
    let n = match below(rng, 10) {
        0..=4 => 0,
        5..=7 => 1,
        _ => 2 + below(rng, 2),
    };
    let mut all = Vec::new();
    let doc = text.parse::<toml::Table>().ok().map(toml::Value::Table);
    if let Some(d) = &doc {
        leaves(d, &mut Vec::new(), &mut all);
    }
    // half the time: one of the scenario's own numbers scaled up (a bigger queue, more flows,
    // a faster link, a longer run): what the limits are for
    if n > 0 && rng.uniform() < 0.5 {
        if let Some(d) = doc.as_ref() {
            let mut d = d.clone();
            let numbers: Vec<&Vec<String>> = all
                .iter()
                .filter(|p| {
                    matches!(at(&mut d, p), Some(toml::Value::Integer(_) | toml::Value::Float(_)))
                        || matches!(at(&mut d, p), Some(toml::Value::String(s)) if s.starts_with(|c: char| c.is_ascii_digit()))
                })
                .collect();
            if !numbers.is_empty() {
                let path = (*pick(rng, &numbers)).clone();
                let factor = *pick(rng, &[10.0, 1000.0, 1e6, 1e9]);
                let value = match at(&mut d, &path) {
                    Some(toml::Value::Integer(i)) => ((*i as f64 * factor) as i64).to_string(),
                    Some(toml::Value::Float(f)) => (*f * factor).to_string(),
                    Some(toml::Value::String(s)) => {
                        let cut = s
                            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                            .unwrap_or(s.len());
                        let x: f64 = s[..cut].parse().unwrap_or(1.0);
                        format!("\"{}{}\"", x * factor, &s[cut..])
                    }
                    _ => "1".into(),
                };
                return vec![format!("{}={value}", set_path(&path))];
            }
        }
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let path = match below(rng, 20) {
            0 => vec!["a"; 1 + below(rng, 30_000)].join("."),
            1 => "k".repeat(1 + below(rng, 5_000)),
            2 => format!("flows[{}].{}", below(rng, 5), pick(rng, KEYS)),
            3 => (*pick(
                rng,
                &[
                    "",
                    ".",
                    "a..b",
                    "[0]",
                    "a[",
                    "a]b",
                    "a[-1]",
                    "a[99999999999999999999]",
                    "a b",
                ],
            ))
            .into(),
            4 => format!(
                "{}.{}",
                pick(
                    rng,
                    &[
                        "simulation",
                        "limits",
                        "topology",
                        "pcap",
                        "topology.bottleneck"
                    ]
                ),
                pick(rng, KEYS)
            ),
            _ if !all.is_empty() => {
                let chosen: &Vec<String> = pick(rng, &all);
                set_path(chosen)
            }
            _ => "simulation.duration".into(),
        };
        let value = match below(rng, 12) {
            0 => "x".repeat(below(rng, 2_000_000)),
            1 => (*pick(rng, TOKENS)).into(),
            2 => "[".repeat(below(rng, 200)),
            3 => format!(
                "{{ kind = \"{}\" }}",
                pick(
                    rng,
                    &["red", "pie", "pfifo", "fq_codel", "htb", "cake", "x"]
                )
            ),
            _ => match extreme_value(rng) {
                toml::Value::String(s) => s,
                v => v.to_string(),
            },
        };
        out.push(format!("{path}={value}"));
    }
    out
}

/// How a case ended.
enum Outcome {
    Accepted,
    Rejected,
}

/// One case: load with `sets`, build and run for at most `wall`; Err(description) on a panic,
/// an internal error, or a peak allocation above the case's `limits.memory` (+ `SLACK`).
fn one_case(text: &str, sets: &[String], wall: Duration) -> Result<Outcome, String> {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut limit: Option<u64> = None;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let loaded = aqmlab_core::scenario::load(text, sets, &LoadOptions::default())?;
        let built = aqmlab_core::scenario::build_loaded(&loaded, &BuildOptions::default())?;
        let mut world = built.world;
        limit = world.budget.map(|(_, l)| l);
        let t0 = Instant::now();
        let mut keep_going = |_, _| t0.elapsed() < wall;
        world.run_observed(4096, &mut keep_going)
    }));
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let result = match outcome {
        Ok(Ok(_)) | Ok(Err(aqmlab_core::RunError::Interrupted)) => Ok(Outcome::Accepted),
        Ok(Err(aqmlab_core::RunError::Scenario(_))) => Ok(Outcome::Rejected),
        Ok(Err(aqmlab_core::RunError::Internal(m))) => Err(format!("internal check failed: {m}")),
        Err(p) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())),
    };
    match (result, limit) {
        (Ok(_), Some(l)) if peak as u64 > l.saturating_add(SLACK as u64) => Err(format!(
            "allocated {peak} bytes at the peak, above limits.memory = {l}"
        )),
        (r, _) => r,
    }
}

#[test]
fn mutated_scenarios_never_panic_or_hang() {
    let cases: u64 = std::env::var("AQMLAB_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    let seed: u64 = std::env::var("AQMLAB_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // AQMLAB_FUZZ_FIRST=n generates but does not run cases before n (to replay one quickly)
    let first: u64 = std::env::var("AQMLAB_FUZZ_FIRST")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // Wall time a run may simulate (AQMLAB_FUZZ_RUN_MS; default 20 ms, long enough for queues
    // and logs to grow in runs that would grow without bound)
    let wall = Duration::from_millis(
        std::env::var("AQMLAB_FUZZ_RUN_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20),
    );
    let corpus = corpus();
    let mut rng = Rng::stream(seed, "fuzz");
    let quiet_panics = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut accepted, mut failures, mut slowest) = (0u64, Vec::new(), Duration::ZERO);
    let started = Instant::now();
    for case in 0..cases {
        let mut text = pick(&mut rng, &corpus).clone();
        for _ in 0..1 + below(&mut rng, 2) {
            if rng.uniform() < 0.3 {
                text = mutate_text(&text, &mut rng);
            } else if let Ok(t) = text.parse::<toml::Table>() {
                let mut doc = toml::Value::Table(t);
                mutate_doc(&mut doc, &mut rng);
                text = toml::to_string(&doc).unwrap_or(text);
            }
        }
        let sets = overrides(&text, &mut rng);
        if case < first {
            continue;
        }
        let t0 = Instant::now();
        let result = one_case(&text, &sets, wall);
        let took = t0.elapsed();
        slowest = slowest.max(took);
        let failed = match result {
            Ok(o) => {
                accepted += u64::from(matches!(o, Outcome::Accepted));
                None
            }
            Err(msg) => Some(msg),
        };
        for msg in failed
            .into_iter()
            .chain((took > HANG).then(|| format!("took {took:?}")))
        {
            // written at once, so a long run's findings survive an interruption
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("seed{seed}-case{case}.toml"));
            let shown: Vec<String> = sets.iter().map(|x| x.chars().take(200).collect()).collect();
            let _ = std::fs::write(&file, format!("# {msg}\n# --set {shown:?}\n{text}"));
            eprintln!("fuzz: case {case} failed: {msg} ({file:?})");
            failures.push((case, msg));
        }
        if cases >= 10_000 && case % 10_000 == 0 {
            eprintln!(
                "fuzz: {case} cases, {} failures, {:?}",
                failures.len(),
                started.elapsed()
            );
        }
    }
    std::panic::set_hook(quiet_panics);
    eprintln!(
        "fuzz: seed {seed}, {cases} cases, {accepted} accepted and run, {} failures, slowest {slowest:?}, total {:?}",
        failures.len(),
        started.elapsed()
    );
    if !failures.is_empty() {
        panic!(
            "{} of {cases} cases failed; first: case {}: {} (inputs in target/fuzz-failures/)",
            failures.len(),
            failures[0].0,
            failures[0].1
        );
    }
}

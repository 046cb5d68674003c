//! The exporter under load with TLS and basic auth on and its sampler running on dcmi-sim (loopback, bounded):
//! several clients scrape over HTTPS with the right password, back to back, each scrape on a new connection (a full
//! handshake, the costlier case); an intruder alternates a wrong password over TLS and plain HTTP to the TLS port; in
//! the second half, slow-loris clients trickle bytes (some a TLS handshake, some request headers after a completed
//! handshake). Asserted: every right scrape gets a complete body; every sampler round is seen (no sample lost); the
//! intruder never gets metrics; each slow-loris connection is cut by `--web.header-read-timeout` and no scrape waits
//! behind one; memory stays flat. Prints one line of figures.
//!
//! CI runs it for 6 s; `scripts/load.sh exporter` runs it longer through these variables (docs/robustness.md quotes
//! both): `ASCEND_EXPORTER_LOAD_SECONDS` (6), `ASCEND_EXPORTER_LOAD_CLIENTS` (4), `ASCEND_EXPORTER_LOAD_LORIS` (slow-loris
//! connections held open at once per kind, 8), `ASCEND_EXPORTER_LOAD_BCRYPT_COST` (cost of the password hash, 4).

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use latency_stats::Percentiles;
use support::{basic, get, https_get, tls_client_config, tls_connect, write_topology, Exporter};

support::child_entry!();

const CHIPS: usize = 8;
/// The utilization group's interval: the rounds whose timestamps the scrapers collect.
const ROUND: Duration = Duration::from_millis(500);
/// `--web.header-read-timeout` of the exporter under test (10 s by default; shorter so the test stays short).
const HEADER_READ_TIMEOUT: Duration = Duration::from_millis(1500);
/// How often a slow-loris client sends its next byte.
const TRICKLE: Duration = Duration::from_millis(100);
const USER: &str = "prometheus";
const PASSWORD: &str = "scrape-me";

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|value| value.parse().ok()).unwrap_or(default)
}

/// What one right-password client saw.
#[derive(Default)]
struct ScrapeLog {
    /// When each scrape ended, and how long it took.
    latencies: Vec<(Instant, Duration)>,
    /// Chip 0's `ascend_npu_sample_timestamp_seconds{group="utilization"}` in each body.
    round_timestamps: Vec<f64>,
    failures: Vec<String>,
}

fn scraper(address: SocketAddr, config: Arc<rustls::ClientConfig>, until: Instant) -> ScrapeLog {
    let authorization = basic(USER, PASSWORD);
    let mut log = ScrapeLog::default();
    while Instant::now() < until {
        let started = Instant::now();
        let response = https_get(address, &config, "/metrics", &[("Authorization", &authorization)]);
        let ended = Instant::now();
        let response = match response {
            Ok(response) if response.status == 200 => response,
            Ok(response) => {
                log.failures.push(format!("status {}", response.status));
                continue;
            }
            Err(error) => {
                log.failures.push(error.to_string());
                continue;
            }
        };
        log.latencies.push((ended, ended - started));
        let timestamps: Vec<f64> = response
            .body
            .lines()
            .filter(|line| {
                line.starts_with("ascend_npu_sample_timestamp_seconds{") && line.contains("group=\"utilization\"")
            })
            .filter_map(|line| line.rsplit(' ').next()?.parse().ok())
            .collect();
        if timestamps.len() != CHIPS {
            log.failures.push(format!("{} utilization timestamps in a body, not {CHIPS}", timestamps.len()));
        }
        let chip0 = response.body.lines().find(|line| {
            line.starts_with("ascend_npu_sample_timestamp_seconds{")
                && line.contains(&format!("chip=\"{}\"", CHIPS - 1))
                && line.contains("group=\"utilization\"")
        });
        match chip0.and_then(|line| line.rsplit(' ').next()?.parse().ok()) {
            Some(timestamp) => log.round_timestamps.push(timestamp),
            None => log.failures.push("no utilization timestamp for logic 0".to_owned()),
        }
    }
    log
}

/// What the intruder got: refusals of each kind, and anything else.
#[derive(Default)]
struct IntruderLog {
    wrong_password_refused: u64,
    plain_http_refused: u64,
    failures: Vec<String>,
}

fn intruder(address: SocketAddr, config: Arc<rustls::ClientConfig>, until: Instant) -> IntruderLog {
    let wrong = basic(USER, "not-the-password");
    let right = basic(USER, PASSWORD);
    let mut log = IntruderLog::default();
    while Instant::now() < until {
        match https_get(address, &config, "/metrics", &[("Authorization", &wrong)]) {
            Ok(response) if response.status == 401 && !response.body.contains("ascend_npu_") => {
                log.wrong_password_refused += 1
            }
            Ok(response) => log.failures.push(format!("wrong password answered {}", response.status)),
            Err(error) => log.failures.push(format!("wrong password: {error}")),
        }
        // The right password in clear text to the TLS port: no answer may carry metrics.
        match get(address, "/metrics", &[("Authorization", &right)]) {
            Ok(response) if response.status == 200 || response.body.contains("ascend_npu_") => {
                log.failures.push(format!("plain HTTP to the TLS port answered {}", response.status))
            }
            _ => log.plain_http_refused += 1,
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    log
}

/// How a slow-loris client stalls.
#[derive(Clone, Copy, Debug)]
enum Loris {
    /// Announces a 512-byte TLS handshake record and sends it a byte at a time.
    Handshake,
    /// Completes the handshake, then sends the request headers a byte at a time, never ending them.
    Headers,
}

/// Whether the server closed the connection: one read that does not merely time out.
fn closed(stream: &mut impl Read) -> bool {
    let mut byte = [0u8; 64];
    !matches!(stream.read(&mut byte), Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut))
}

/// Trickles one byte per [`TRICKLE`] until the server cuts the connection; returns how long it stayed open after the
/// phase the timeout covers began, or an error if it outlived the timeout by far.
fn trickle(stream: &mut (impl Read + Write), bytes: impl Iterator<Item = u8>) -> Result<Duration, String> {
    let opened = Instant::now();
    for byte in bytes {
        if stream.write_all(&[byte]).and_then(|()| stream.flush()).is_err() || closed(stream) {
            return Ok(opened.elapsed());
        }
        if opened.elapsed() > HEADER_READ_TIMEOUT + Duration::from_secs(3) {
            break;
        }
    }
    Err(format!("still open after {:?}", opened.elapsed()))
}

fn slow_loris(
    kind: Loris,
    address: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    until: Instant,
) -> Vec<Result<Duration, String>> {
    let mut lifetimes = Vec::new();
    while Instant::now() < until {
        let lifetime = match kind {
            Loris::Handshake => TcpStream::connect(address).map_err(|error| error.to_string()).and_then(|mut tcp| {
                tcp.set_read_timeout(Some(TRICKLE)).map_err(|error| error.to_string())?;
                let record_header = [0x16u8, 0x03, 0x01, 0x02, 0x00];
                trickle(&mut tcp, record_header.into_iter().chain(std::iter::repeat(0)))
            }),
            Loris::Headers => tls_connect(address, &config).map_err(|error| error.to_string()).and_then(|mut tls| {
                tls.sock.set_read_timeout(Some(TRICKLE)).map_err(|error| error.to_string())?;
                let head = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
                trickle(&mut tls, head.bytes().chain(std::iter::repeat(b'a')))
            }),
        };
        lifetimes.push(lifetime);
    }
    lifetimes
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs_f64()
}

#[test]
fn tls_scrapes_under_load_lose_no_sample_and_shrug_off_intruders_and_slow_loris() {
    let seconds = setting("ASCEND_EXPORTER_LOAD_SECONDS", 6);
    let clients = setting("ASCEND_EXPORTER_LOAD_CLIENTS", 4);
    let loris_per_kind = setting("ASCEND_EXPORTER_LOAD_LORIS", 8);
    let bcrypt_cost = setting("ASCEND_EXPORTER_LOAD_BCRYPT_COST", 4) as u32;

    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), CHIPS, "");
    // A throwaway self-signed certificate that the clients trust directly.
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("self-signed certificate");
    std::fs::write(dir.path().join("server.crt"), certified.cert.pem()).expect("write certificate");
    std::fs::write(dir.path().join("server.key"), certified.signing_key.serialize_pem()).expect("write key");
    let hash = bcrypt::hash(PASSWORD, bcrypt_cost).expect("bcrypt");
    let web_config = dir.path().join("web.yml");
    std::fs::write(
        &web_config,
        format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: '{hash}'\n"),
    )
    .expect("write web.yml");
    let selection = dir.path().join("selection.toml");
    std::fs::write(&selection, format!("[groups.utilization]\ninterval = \"{}ms\"\n", ROUND.as_millis()))
        .expect("write selection");
    let exporter = Exporter::start(
        &topology,
        &[
            &format!("--web.config.file={}", web_config.display()),
            &format!("--metrics.selection-file={}", selection.display()),
            &format!("--web.header-read-timeout={}ms", HEADER_READ_TIMEOUT.as_millis()),
            "--pod-resources.disable",
        ],
        &[],
    );
    let config = tls_client_config(&certified.cert.pem(), None);
    let address = exporter.address;
    exporter.wait_healthy_over(|| https_get(address, &config, "/healthz", &[]).map(|response| response.status));
    // Warm up (first renders, first handshakes, the runtime's threads) before the memory baseline.
    for _ in 0..10 {
        let warm = https_get(address, &config, "/metrics", &[("Authorization", &basic(USER, PASSWORD))]);
        assert_eq!(warm.expect("warm-up scrape").status, 200);
    }
    let rss_before = exporter.rss_kib();

    let started = Instant::now();
    let started_unix = unix_now();
    let half = started + Duration::from_secs(seconds) / 2;
    let until = started + Duration::from_secs(seconds);
    let scrapers: Vec<JoinHandle<ScrapeLog>> = (0..clients)
        .map(|_| {
            let config = Arc::clone(&config);
            std::thread::spawn(move || scraper(address, config, until))
        })
        .collect();
    let intruder = {
        let config = Arc::clone(&config);
        std::thread::spawn(move || intruder(address, config, until))
    };
    let lorises: Vec<(Loris, JoinHandle<_>)> = [Loris::Handshake, Loris::Headers]
        .into_iter()
        .flat_map(|kind| std::iter::repeat_n(kind, loris_per_kind as usize))
        .map(|kind| {
            let config = Arc::clone(&config);
            let thread = std::thread::spawn(move || {
                std::thread::sleep(half.saturating_duration_since(Instant::now()));
                slow_loris(kind, address, config, until)
            });
            (kind, thread)
        })
        .collect();
    let mut rss_peak = rss_before;
    while Instant::now() < until {
        rss_peak = rss_peak.max(exporter.rss_kib());
        std::thread::sleep(Duration::from_millis(200));
    }

    let logs: Vec<ScrapeLog> = scrapers.into_iter().map(|thread| thread.join().expect("scraper thread")).collect();
    let finished_unix = unix_now();
    let intruder = intruder.join().expect("intruder thread");
    let mut loris_lifetimes = Vec::new();
    for (kind, thread) in lorises {
        for lifetime in thread.join().expect("slow-loris thread") {
            match lifetime {
                Ok(lifetime) => loris_lifetimes.push(lifetime),
                Err(error) => panic!("a {kind:?} slow-loris connection was not cut off: {error}"),
            }
        }
    }
    let rss_after = exporter.rss_kib();
    rss_peak = rss_peak.max(rss_after);

    let failures: Vec<&String> = logs.iter().flat_map(|log| &log.failures).collect();
    assert!(
        failures.is_empty(),
        "{} right scrapes failed, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(intruder.failures.is_empty(), "the intruder got through: {:?}", intruder.failures);
    assert!(intruder.wrong_password_refused > 0 && intruder.plain_http_refused > 0, "the intruder never ran");

    // Every sampler round of the run: each distinct timestamp one round (two renders of one round may differ by the
    // millisecond rounding). A round that no scrape saw leaves a gap of two rounds.
    let mut rounds: Vec<f64> = logs.iter().flat_map(|log| log.round_timestamps.iter().copied()).collect();
    rounds.sort_by(f64::total_cmp);
    rounds.dedup_by(|later, earlier| *later - *earlier < 0.05);
    let rounds: Vec<f64> = rounds.into_iter().filter(|&t| t >= started_unix).collect();
    let largest_gap = rounds.windows(2).map(|pair| pair[1] - pair[0]).fold(0.0, f64::max);
    let expected_rounds = ((finished_unix - started_unix) / ROUND.as_secs_f64()).floor() as usize;
    assert!(
        largest_gap < 1.8 * ROUND.as_secs_f64() && rounds.len() + 1 >= expected_rounds,
        "sampler rounds lost: saw {} of {expected_rounds} rounds, largest gap {:.0} ms",
        rounds.len(),
        largest_gap * 1000.0
    );

    let (mut calm, mut stormy): (Vec<Duration>, Vec<Duration>) = (Vec::new(), Vec::new());
    for &(ended, latency) in logs.iter().flat_map(|log| &log.latencies) {
        if ended < half {
            calm.push(latency)
        } else {
            stormy.push(latency)
        }
    }
    let scrapes = calm.len() + stormy.len();
    let (calm, stormy) =
        (Percentiles::of(calm).expect("calm scrapes"), Percentiles::of(stormy).expect("stormy scrapes"));
    // A scrape stuck behind a slow-loris connection would wait for its timeout.
    let slowest_stormy = stormy.max;
    assert!(
        slowest_stormy < HEADER_READ_TIMEOUT,
        "a scrape took {slowest_stormy:?} while slow-loris clients were connected"
    );
    let shortest = loris_lifetimes.iter().min().copied().unwrap_or_default();
    let longest = loris_lifetimes.iter().max().copied().unwrap_or_default();
    assert!(!loris_lifetimes.is_empty(), "no slow-loris connection ran");
    assert!(
        shortest + Duration::from_millis(300) >= HEADER_READ_TIMEOUT,
        "a slow-loris connection was cut after {shortest:?}, before the timeout: by something else"
    );
    // Memory: flat once warm. Allowance: the glibc arenas of the extra threads the slow-loris phase wakes.
    assert!(
        rss_after <= rss_before + (rss_before / 4).max(8 * 1024),
        "RSS grew from {rss_before} KiB to {rss_after} KiB"
    );

    eprintln!(
        "exporter load: {seconds} s, {clients} TLS clients (bcrypt cost {bcrypt_cost}): {scrapes} scrapes ({:.0}/s), \
         p50/p99 {:.1}/{:.1} ms, then {:.1}/{:.1} ms (max {:.1} ms) beside {} slow-loris connections per kind; \
         {} of {expected_rounds} sampler rounds seen (largest gap {:.0} ms); wrong password 401 x{}, plain HTTP refused \
         x{}; slow-loris connections cut after {:.0} to {:.0} ms ({} connections); RSS {rss_before} -> peak {rss_peak} \
         -> {rss_after} KiB",
        scrapes as f64 / seconds as f64,
        millis(calm.p50),
        millis(calm.p99),
        millis(stormy.p50),
        millis(stormy.p99),
        millis(slowest_stormy),
        loris_per_kind,
        rounds.len(),
        largest_gap * 1000.0,
        intruder.wrong_password_refused,
        intruder.plain_http_refused,
        millis(shortest),
        millis(longest),
        loris_lifetimes.len(),
    );
}

//! From the options as written to a [`TcpConfig`]: every default filled in ([`TcpParams::
//! resolved`], what the resolved scenario prints: the profile's defaults and the congestion
//! control's needs, [`Needs`]), then every range and combination checked. Errors are "key:
//! message" with the key as the current spelling (`loss.sack`); the caller renames keys
//! given through deprecated flat keys (`legacy::Aliases`). No check names a congestion
//! control: a control's needs and its recovery kind are asked.

use super::super::app::{AppConfig, Dist, MAX_TRANSFER};
use super::super::cc::{
    Cc, CcEnv, CcParams, CongestionControl, Needs, PacingNeed, Recovery, CC_NAMES,
};
use super::super::pacing::{PacingConfig, PacingMode};
use super::super::profile::{profile, ProfileDefaults};
use super::legacy::{lift, Aliases};
use super::options::*;
use super::{LossDetection, TcpConfig};
use crate::packet::Ecn;
use crate::scenario::error::ScenarioError;
use crate::units::{Bytes, Duration};

impl TcpParams {
    /// Reads a flow's TCP parameters (the flow's table without the common keys) at `base`,
    /// deprecated spellings lifted into the tables; errors name the key as written.
    pub fn read(params: &toml::Table, base: &str) -> Result<(TcpParams, Aliases), ScenarioError> {
        let (t, aliases) = lift(params).map_err(|m| ScenarioError::from_keyed(base, &m))?;
        let p: TcpParams = crate::scenario::parse::from_table(&t, base).map_err(|mut e| {
            e.path = aliases.rename_path(base, &e.path);
            e
        })?;
        Ok((p, aliases))
    }

    /// The validated settings of a flow written as TOML `text` (deprecated keys allowed);
    /// errors are "key: message".
    pub fn config_from(text: &str) -> Result<TcpConfig, String> {
        let t: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
        let (p, aliases) =
            TcpParams::read(&t, "").map_err(|e| format!("{}: {}", e.path, e.message))?;
        p.validate().map_err(|e| aliases.rename(&e))
    }

    /// The profile's defaults (errors name `profile`).
    fn profile_defaults(&self) -> Result<ProfileDefaults, String> {
        profile(self.profile.as_deref().unwrap_or("ns2"))
    }

    /// The congestion control's typed options, from `cc` as a string or a table, and whether
    /// `cc` was a table. Errors are "cc.<key>: message" or "cc: message".
    fn cc_spec(&self, d: &ProfileDefaults) -> Result<(CcParams, bool), String> {
        match &self.cc {
            Some(toml::Value::Table(t)) => {
                let kind = match t.get("kind") {
                    Some(toml::Value::String(k)) => k.clone(),
                    Some(other) => {
                        return Err(format!(
                            "cc.kind: must be a name such as \"cubic\", got {}; known: {}",
                            other.type_str(),
                            CC_NAMES.join(", ")
                        ))
                    }
                    None => {
                        return Err(format!("cc.kind: missing; known: {}", CC_NAMES.join(", ")))
                    }
                };
                let mut options = t.clone();
                options.remove("kind");
                Ok((CcParams::parse(&kind, &options)?, true))
            }
            Some(toml::Value::String(name)) => {
                Ok((CcParams::parse(name, &toml::Table::new())?, false))
            }
            None => Ok((CcParams::parse(d.cc, &toml::Table::new())?, false)),
            Some(other) => Err(format!(
                "cc: a name such as \"cubic\" or a table {{ kind = \"cubic\", ... }}, got {}",
                other.type_str()
            )),
        }
    }

    /// The parameters with every default written out (for the resolved scenario); the
    /// parameters as given if they do not validate.
    pub fn resolved(&self) -> TcpParams {
        self.settle().map_or_else(|_| self.clone(), |s| s.p)
    }

    /// Every default filled in, and the congestion control built.
    fn settle(&self) -> Result<Settled, String> {
        let d = self.profile_defaults()?;
        let (mut cct, is_table) = self.cc_spec(&d)?;
        // The profile's options for the control (CUBIC: HyStart, window update) unless the cc
        // table names them.
        let written =
            |k: &str| matches!(&self.cc, Some(toml::Value::Table(t)) if t.contains_key(k));
        cct.profile_options(&d, &written);
        let mut r = self.clone();
        r.profile.get_or_insert_with(|| "ns2".into());
        let kind = cct.kind();
        r.cc = Some(
            if is_table || super::legacy::RESOLVED_AS_TABLE.contains(&kind) {
                let mut t = toml::Table::new();
                t.insert("kind".into(), toml::Value::String(kind.into()));
                t.extend(cct.to_table());
                toml::Value::Table(t)
            } else {
                toml::Value::String(kind.into())
            },
        );
        let mss = r.mss.get_or_insert(Bytes(d.mss)).0;
        r.header.get_or_insert(Bytes(40));
        let w = &mut r.window;
        let initial_window = *w.initial.get_or_insert(d.initial_window);
        let paced = self.pacing.mode.is_some_and(|m| m != PacingMode::Off);
        let cc = cct.build(&CcEnv {
            initial_window,
            mss: mss.clamp(1, u32::MAX as u64) as u32,
            paced,
        })?;
        let needs = cc.needs();
        let (growth, whole_bytes) = d.growth_for(kind);
        w.growth.get_or_insert(growth);
        w.whole_bytes.get_or_insert(whole_bytes);
        w.cwnd_limited_growth.get_or_insert(d.cwnd_limited_growth);
        // Written into the resolved scenario only where the profile departs from the historical
        // behaviour (linux), so that other scenarios keep their resolved text and hash.
        if !d.abc_limit {
            w.abc_limit.get_or_insert(false);
        }
        // Written only where the profile sets it (linux), as abc_limit.
        if d.tso_defer {
            w.tso_defer.get_or_insert(true);
        }
        fill_app(&mut r.app);
        if r.app.kind == Some(AppKind::Transfers) {
            r.window.slow_start_after_idle.get_or_insert(false);
        }
        let l = &mut r.loss;
        let sack = *l.sack.get_or_insert(d.sack || needs.sack);
        if d.sack_rtt && sack {
            r.rtt.sack_samples.get_or_insert(true);
            if d.sack_rearm && r.rtt.sack_samples == Some(true) {
                r.rto.sack_rearm.get_or_insert(true);
            }
        }
        // Written only where the profile departs from RFC 5681 (linux), as abc_limit above.
        if d.reno_ssthresh_cwnd {
            r.compat.reno_ssthresh.get_or_insert(RenoSsthresh::Linux);
        }
        l.detection.get_or_insert(if sack {
            d.loss_detection
        } else {
            LossDetection::Dupack
        });
        l.recovery.get_or_insert(d.recovery);
        l.dupack_threshold.get_or_insert(3);
        l.limited_transmit.get_or_insert(true);
        let t = &mut r.rto;
        t.min.get_or_insert(Duration(d.min_rto));
        t.initial.get_or_insert(Duration(d.initial_rto));
        t.max.get_or_insert(Duration(d.max_rto));
        t.granularity.get_or_insert(Duration(d.timer_granularity));
        t.max_backoff.get_or_insert(64);
        r.rtt.timestamps.get_or_insert(d.timestamps);
        r.rtt.sampling.get_or_insert(RttSampling::Ack);
        let a = &mut r.ack;
        let delayed = *a.delayed.get_or_insert(d.delayed_ack);
        a.timeout.get_or_insert(Duration(d.delayed_ack_timeout));
        a.quickack
            .get_or_insert(if delayed { d.quickack } else { 0 });
        // Like abc_limit: written only where the profile sets it (linux, with SACK).
        if d.sack_compress > 0 && sack {
            a.sack_compress.get_or_insert(Duration(d.sack_compress));
        }
        // Written only where the profile sets it (linux, with delayed ACKs).
        if d.autotune_acks && delayed {
            a.autotune.get_or_insert(true);
        }
        if d.push_acks && delayed {
            a.push.get_or_insert(true);
        }
        fill_ecn(&mut r.ecn, &needs);
        let p = &mut r.pacing;
        let mode = *p.mode.get_or_insert(match needs.pacing {
            PacingNeed::None => PacingMode::Off,
            PacingNeed::Requested => PacingMode::Linux,
            PacingNeed::Own => PacingMode::Cc,
        });
        if needs.pacing == PacingNeed::Own && mode == PacingMode::Off {
            p.mode = Some(PacingMode::Cc); // such a control cannot run unpaced
        }
        if mode == PacingMode::Linux {
            p.ss_ratio.get_or_insert(2.0);
            p.ca_ratio.get_or_insert(1.2);
        }
        let c = &mut r.compat;
        c.syn.get_or_insert(true);
        c.fast_retransmit_guard
            .get_or_insert(d.fast_retransmit_guard);
        c.halving.get_or_insert(Reduction::Rfc5681);
        c.timeout_ssthresh.get_or_insert(Reduction::Rfc5681);
        r.trace.events.get_or_insert(false);
        r.trace.rtt.get_or_insert(false);
        Ok(Settled { p: r, cc, needs })
    }

    /// Checks every parameter; errors are "key: message".
    pub fn validate(&self) -> Result<TcpConfig, String> {
        let s = self.settle()?;
        let (p, cc, needs) = (&s.p, s.cc, s.needs);
        let name = cc.name();
        let mss = p.mss.unwrap_or(Bytes(1000)).0;
        let header = p.header.unwrap_or(Bytes(40)).0;
        if !(1..=65_495).contains(&mss) {
            return Err(format!("mss: must be between 1B and 65495B, got {mss}B"));
        }
        if header > 1000 {
            return Err(format!("header: at most 1000B, got {header}B"));
        }
        if header == 0 {
            return Err("header: must be at least 1B (ACKs are header-sized)".into());
        }
        if mss + header > 65_535 {
            return Err("mss: mss + header must not exceed 65535B".into());
        }
        let mss = mss as u32;
        let app = app_config(&p.app, &p.window)?;
        let total_segs = p.app.bytes.map(|b| b.0.div_ceil(mss as u64));
        let w = &p.window;
        let initial_window = w.initial.unwrap_or(2);
        if initial_window == 0 || initial_window > 1_000_000 {
            return Err("window.initial: must be between 1 and 1000000 segments".into());
        }
        let rwnd = match (w.receive_pkts, w.receive_bytes) {
            (Some(_), Some(_)) => {
                return Err(
                    "window.receive_bytes: give receive_pkts or receive_bytes, not both".into(),
                )
            }
            (Some(0), _) => return Err("window.receive_pkts: must be at least 1".into()),
            (Some(n), _) => n,
            (_, Some(b)) if b.0 < mss as u64 => {
                return Err(format!(
                    "window.receive_bytes: must hold at least one segment ({mss}B)"
                ))
            }
            (_, Some(b)) => b.0 / mss as u64,
            _ => u32::MAX as u64,
        };
        let initial_ssthresh = match w.initial_ssthresh {
            Some(s) if s < 2 => {
                return Err("window.initial_ssthresh: must be at least 2 segments".into())
            }
            Some(s) => s as f64,
            None => 1e12,
        };
        let (per_segment, abc) = match w.growth.unwrap_or(Growth::PerAck) {
            Growth::PerAck => (false, false),
            Growth::PerSegment => (true, false),
            Growth::Bytes => (true, true),
        };
        let l = &p.loss;
        let dupack_threshold = l.dupack_threshold.unwrap_or(3);
        if dupack_threshold == 0 || dupack_threshold > 1000 {
            return Err("loss.dupack_threshold: must be between 1 and 1000".into());
        }
        let t = &p.rto;
        let (min_rto, max_rto) = (t.min.unwrap_or_default().0, t.max.unwrap_or_default().0);
        let initial_rto = t.initial.unwrap_or_default().0;
        let max_backoff = t.max_backoff.unwrap_or(64);
        if min_rto > max_rto {
            return Err("rto.min: must not exceed rto.max".into());
        }
        if max_rto == 0 {
            return Err("rto.max: must be positive".into());
        }
        if initial_rto == 0 {
            return Err("rto.initial: must be positive".into());
        }
        if max_backoff == 0 || max_backoff > 1 << 20 {
            return Err("rto.max_backoff: must be between 1 and 1048576".into());
        }
        let a = &p.ack;
        let delayed_ack = a.delayed == Some(true);
        let delayed_ack_timeout = a.timeout.unwrap_or_default().0;
        if delayed_ack && delayed_ack_timeout == 0 {
            return Err("ack.timeout: must be positive with delayed ACKs".into());
        }
        let quickack = a.quickack.unwrap_or(0);
        if quickack > 0 && !delayed_ack {
            return Err("ack.quickack: only applies with delayed ACKs (ack.delayed = true)".into());
        }
        let autotune = a.autotune == Some(true);
        if autotune && !delayed_ack {
            return Err("ack.autotune: only applies with delayed ACKs (ack.delayed = true)".into());
        }
        let push = a.push == Some(true);
        if push && !delayed_ack {
            return Err("ack.push: only applies with delayed ACKs (ack.delayed = true)".into());
        }
        let sack_compress = a.sack_compress.unwrap_or_default().0;
        if sack_compress > 1_000_000_000 {
            return Err("ack.sack_compress: must be at most 1s".into());
        }
        let (ecn, ect, precise_ecn, accecn) = ecn_mode(&p.ecn, &needs, name)?;
        let sack = l.sack == Some(true);
        if sack_compress > 0 && !sack {
            return Err("ack.sack_compress: needs SACK (loss.sack = true)".into());
        }
        if p.rtt.sack_samples == Some(true) && !sack {
            return Err("rtt.sack_samples: needs SACK (loss.sack = true)".into());
        }
        if p.rto.sack_rearm == Some(true) && p.rtt.sack_samples != Some(true) {
            return Err(
                "rto.sack_rearm: needs SACK RTT samples (rtt.sack_samples = true, with SACK)"
                    .into(),
            );
        }
        if needs.sack && !sack {
            return Err(format!(
                "loss.sack: cc = {name:?} needs SACK (it reads the RFC 6675 scoreboard); \
                 leave loss.sack out or set it true"
            ));
        }
        let pacing = pacing_config(&p.pacing, &needs, name)?;
        let ns2_recover_guard = p.compat.fast_retransmit_guard == Some(Guard::Ns2);
        let detection = l.detection.unwrap_or(LossDetection::Dupack);
        if detection == LossDetection::Rack && !sack {
            return Err(
                "loss.detection: \"rack\" needs loss.sack = true (RACK reads SACK blocks)".into(),
            );
        }
        if sack && cc.recovery() != Recovery::NewReno {
            return Err(format!(
                "loss.sack: needs a congestion control whose recovery runs until the recovery \
                 point (cc = \"newreno\" or \"cubic\"); RFC 6675 loss recovery would replace the \
                 {:?} recovery of cc = {name:?}",
                cc.recovery()
            ));
        }
        let timestamps = p.rtt.timestamps == Some(true);
        let ts_opt = if timestamps { 12 } else { 0 };
        if header as u32 + ts_opt + if sack { 36 } else { 0 } > 1000 {
            return Err("header: header plus TCP options must not exceed 1000B".into());
        }
        let prr = l.recovery == Some(RecoveryRule::Prr);
        if prr && cc.recovery() != Recovery::NewReno {
            return Err(format!(
                "loss.recovery: \"prr\" needs a congestion control with NewReno-style fast \
                 recovery (cc = \"newreno\" or \"cubic\"); this flow has cc = {name:?}"
            ));
        }
        let sack_note = if sack { " with SACK" } else { "" };
        let ns2_timeout_ssthresh = p.compat.timeout_ssthresh == Some(Reduction::Ns2);
        if ns2_timeout_ssthresh && (cc.recovery() == Recovery::NewReno || sack) {
            return Err(format!(
                "compat.timeout_ssthresh: \"ns2\" applies to cc = \"reno\" or \"tahoe\" without \
                 SACK (ns-2's Agent/TCP/Reno and Agent/TCP); this flow has cc = {name:?}{sack_note}"
            ));
        }
        let ns2_halving = p.compat.halving == Some(Reduction::Ns2);
        if ns2_halving && (cc.recovery() != Recovery::Reno || sack) {
            return Err(format!(
                "compat.halving: \"ns2\" applies to cc = \"reno\" without SACK (ns-2's \
                 Agent/TCP/Reno); this flow has cc = {name:?}{sack_note}"
            ));
        }
        // A control that owns the window sets cwnd in recovery itself (Linux cong_control).
        let prr = prr && !cc.owns_window();
        Ok(TcpConfig {
            app,
            nagle: p.app.nagle == Some(true),
            cwnd_limited_growth: w.cwnd_limited_growth == Some(true),
            abc_limit: w.abc_limit != Some(false),
            tso_defer: w.tso_defer == Some(true),
            sack_rtt: p.rtt.sack_samples == Some(true),
            sack_rearm: p.rto.sack_rearm == Some(true),
            ssthresh_from_cwnd: p.compat.reno_ssthresh == Some(RenoSsthresh::Linux),
            ns2_halving,
            cc,
            prr,
            total_segs,
            total_bytes: p.app.bytes.map(|b| b.0),
            mss,
            header: header as u32,
            initial_window,
            rwnd,
            initial_ssthresh,
            dupack_threshold,
            limited_transmit: l.limited_transmit != Some(false),
            ns2_recover_guard,
            per_segment,
            abc,
            cwnd_whole_bytes: w.whole_bytes == Some(true),
            min_rto,
            initial_rto,
            max_rto,
            granularity: t.granularity.unwrap_or_default().0,
            max_backoff,
            syn: p.compat.syn != Some(false),
            delayed_ack,
            delayed_ack_timeout,
            quickack,
            sack_compress,
            autotune,
            push,
            pacing,
            trace: p.trace.events == Some(true),
            rtt_log: p.trace.rtt == Some(true),
            rtt_per_round: p.rtt.sampling == Some(RttSampling::Round),
            ns2_timeout_ssthresh,
            detection,
            ecn,
            ect,
            precise_ecn,
            accecn,
            sack,
            timestamps,
            ts_opt,
            syn_opt: if timestamps {
                12
            } else if sack {
                4
            } else {
                0
            },
            max_sack_blocks: if timestamps { 3 } else { 4 },
        })
    }
}

/// A flow's parameters with every default filled in, and its congestion control.
struct Settled {
    p: TcpParams,
    cc: Cc,
    needs: Needs,
}

/// The application's kind (from its keys when not given) and its defaults.
fn fill_app(a: &mut AppOptions) {
    let kind = *a.kind.get_or_insert(if a.bytes.is_some() {
        AppKind::File
    } else if a.size.is_some() {
        AppKind::Transfers
    } else {
        AppKind::Bulk
    });
    if kind == AppKind::Transfers {
        let dist = *a.size_dist.get_or_insert(SizeDist::Fixed);
        if dist == SizeDist::Pareto {
            a.shape.get_or_insert(1.5);
        }
        a.think.get_or_insert(Duration(0));
        a.think_dist.get_or_insert(ThinkDist::Fixed);
    }
    a.nagle.get_or_insert(false);
}

/// ECN's defaults: on for a control that needs it, with its codepoint and feedback.
fn fill_ecn(e: &mut EcnOptions, needs: &Needs) {
    let wanted = needs.precise_ecn || needs.ect1;
    if !*e.enabled.get_or_insert(wanted) {
        return;
    }
    e.codepoint.get_or_insert(if needs.ect1 {
        Codepoint::Ect1
    } else {
        Codepoint::Ect0
    });
    e.feedback.get_or_insert(if needs.accecn {
        Feedback::Accurate
    } else if needs.precise_ecn {
        Feedback::Precise
    } else {
        Feedback::Classic
    });
}

/// (ECN-capable, codepoint of new data, precise feedback, AccECN), checked against the
/// control's needs (`name` for messages).
fn ecn_mode(e: &EcnOptions, needs: &Needs, name: &str) -> Result<(bool, Ecn, bool, bool), String> {
    if e.enabled != Some(true) {
        if needs.precise_ecn || needs.ect1 {
            return Err(format!(
                "ecn.enabled: cc = {name:?} needs ECN; leave ecn.enabled out or set it true"
            ));
        }
        for (k, set) in [
            ("codepoint", e.codepoint.is_some()),
            ("feedback", e.feedback.is_some()),
        ] {
            if set {
                return Err(format!("ecn.{k}: ECN is off; set ecn.enabled = true"));
            }
        }
        return Ok((false, Ecn::NotEct, false, false));
    }
    let ect = match e.codepoint {
        Some(Codepoint::Ect1) => Ecn::Ect1,
        _ => Ecn::Ect0,
    };
    if needs.ect1 && ect != Ecn::Ect1 {
        return Err(format!(
            "ecn.codepoint: cc = {name:?} sends ECT(1) (L4S, RFC 9331); set codepoint = \
             \"ect1\" (or leave it out)"
        ));
    }
    let accecn = e.feedback == Some(Feedback::Accurate);
    let precise = accecn || e.feedback == Some(Feedback::Precise);
    if needs.precise_ecn && !precise {
        return Err(format!(
            "ecn.feedback: cc = {name:?} needs feedback of every CE mark; set feedback = \
             \"accurate\" or \"precise\" (or leave it out)"
        ));
    }
    Ok((true, ect, precise, accecn))
}

/// Pacing settings, checked against the control's need (errors name the key).
fn pacing_config(p: &PacingOptions, needs: &Needs, name: &str) -> Result<PacingConfig, String> {
    let mode = p.mode.unwrap_or(PacingMode::Off);
    match (needs.pacing, mode) {
        (PacingNeed::Own, PacingMode::Linux | PacingMode::Fixed) => {
            return Err(format!(
                "pacing.mode: cc = {name:?} paces at the rate of its own model; leave pacing \
                 out (or mode = \"cc\")"
            ))
        }
        (PacingNeed::None | PacingNeed::Requested, PacingMode::Cc) => {
            return Err(format!(
                "pacing.mode: \"cc\" paces at the congestion control's own rate, and cc = \
                 {name:?} sets none; use \"off\", \"linux\" or \"fixed\""
            ))
        }
        _ => {}
    }
    let ss = p.ss_ratio.unwrap_or(2.0);
    let ca = p.ca_ratio.unwrap_or(1.2);
    for (k, v) in [("pacing.ss_ratio", ss), ("pacing.ca_ratio", ca)] {
        if !(v.is_finite() && v > 0.0 && v <= 100.0) {
            return Err(format!("{k}: must be in (0, 100], got {v}"));
        }
    }
    let rate = p.rate.map(|r| r.bps());
    if let Some(r) = rate {
        if !(r.is_finite() && r > 0.0) {
            return Err("pacing.rate: must be positive".into());
        }
    }
    if mode == PacingMode::Fixed && rate.is_none() {
        return Err("pacing.rate: required with mode = \"fixed\" (e.g. \"10Mbps\")".into());
    }
    let stray = [
        ("pacing.rate", p.rate.is_some()),
        ("pacing.ss_ratio", p.ss_ratio.is_some()),
        ("pacing.ca_ratio", p.ca_ratio.is_some()),
    ];
    if let Some((k, _)) = stray.iter().find(|(_, s)| *s) {
        match mode {
            PacingMode::Off => {
                return Err(format!(
                    "{k}: pacing is off; set pacing.mode = \"linux\" or \"fixed\" to use it"
                ))
            }
            PacingMode::Cc => {
                return Err(format!(
                    "{k}: cc = {name:?} paces at its own rate; {k} applies to mode = \"linux\" \
                     or \"fixed\""
                ))
            }
            _ => {}
        }
    }
    Ok(PacingConfig {
        mode,
        ss_ratio: ss,
        ca_ratio: ca,
        max_rate_bps: rate,
    })
}

/// The application (None: bulk or one file), checked; errors name `app.<key>`.
fn app_config(a: &AppOptions, w: &WindowOptions) -> Result<Option<AppConfig>, String> {
    let kind = a.kind.unwrap_or(AppKind::Bulk);
    let only = |k: &str, kinds: &str| {
        Err(format!(
            "app.{k}: only applies to kind = {kinds} (this flow's app has kind = \"{}\")",
            match kind {
                AppKind::Bulk => "bulk",
                AppKind::File => "file",
                AppKind::Transfers => "transfers",
            }
        ))
    };
    if kind != AppKind::File && a.bytes.is_some() {
        return only("bytes", "\"file\"");
    }
    if kind == AppKind::File && a.bytes.is_none() {
        return Err("app.bytes: required with kind = \"file\" (e.g. \"1MB\")".into());
    }
    if a.bytes == Some(Bytes(0)) {
        return Err("app.bytes: must be at least 1B (leave app out for bulk)".into());
    }
    if kind != AppKind::Transfers {
        for (k, set) in [
            ("size", a.size.is_some()),
            ("size_dist", a.size_dist.is_some()),
            ("shape", a.shape.is_some()),
            ("think", a.think.is_some()),
            ("think_dist", a.think_dist.is_some()),
            ("max_transfers", a.max_transfers.is_some()),
        ] {
            if set {
                return only(k, "\"transfers\"");
            }
        }
        if w.slow_start_after_idle.is_some() {
            return Err(
                "window.slow_start_after_idle: only applies to repeated transfers (app = { \
                 size = \"100KB\", ... })"
                    .into(),
            );
        }
        return Ok(None);
    }
    let Some(size) = a.size else {
        return Err("app.size: required with kind = \"transfers\" (e.g. \"100KB\")".into());
    };
    if size.0 == 0 || size.0 as f64 > MAX_TRANSFER {
        return Err(format!(
            "app.size: must be between 1B and 1TB, got {}B",
            size.0
        ));
    }
    let m = size.0 as f64;
    let dist = a.size_dist.unwrap_or(SizeDist::Fixed);
    if dist != SizeDist::Pareto && a.shape.is_some() {
        return Err(format!(
            "app.shape: only applies to size_dist = \"pareto\" (this flow has {dist:?})"
        ));
    }
    let sizes = match dist {
        SizeDist::Fixed => Dist::Fixed(m),
        SizeDist::Exponential => Dist::Exponential(m),
        SizeDist::Pareto => {
            let shape = a.shape.unwrap_or(1.5);
            if !(shape.is_finite() && shape > 1.0 && shape <= 100.0) {
                return Err(format!(
                    "app.shape: must be in (1, 100] (a finite mean), got {shape}"
                ));
            }
            Dist::Pareto { mean: m, shape }
        }
    };
    let t = a.think.map_or(0, |d| d.0) as f64;
    let think = match a.think_dist.unwrap_or(ThinkDist::Fixed) {
        ThinkDist::Fixed => Dist::Fixed(t),
        ThinkDist::Exponential if t > 0.0 => Dist::Exponential(t),
        ThinkDist::Exponential => {
            return Err("app.think_dist: \"exponential\" needs a positive think".into())
        }
    };
    if a.max_transfers == Some(0) {
        return Err("app.max_transfers: must be at least 1 (omit it for no limit)".into());
    }
    Ok(Some(AppConfig {
        sizes,
        think,
        max_transfers: a.max_transfers,
        restart_after_idle: w.slow_start_after_idle == Some(true),
    }))
}

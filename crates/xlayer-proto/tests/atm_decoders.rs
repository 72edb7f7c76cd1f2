//! Fuzzing every decoder of `l2::atm`: the cell header with its HEC (detection and the
//! I.432.1 correcting receiver), the AAL5 CPCS-PDU and reassembler, and the AAL-X CPCS-PDU,
//! CP-ARQ PDU and control packet, and the ABR RM cell (TM 4.0). Inputs, from a fixed xoshiro stream:
//!
//! - random octets of a random length (lengths near the format's cell multiples);
//! - valid encodings of random values, which must round-trip (`decode(encode(x)) == x`);
//! - mutations of valid encodings: bit flips, truncation, extension, each optionally
//!   followed by a re-seal (the checksum recomputed) so that the checks behind the CRC
//!   are reached too.
//!
//! Properties: nothing panics; every failure is one of the typed error kinds (counted by
//! kind); everything a decoder accepts re-encodes to a value it decodes to the same
//! thing (and, for the canonical formats — cells, CP-ARQ PDUs — to the same octets).
//!
//! The default run draws 10,000 inputs for each of the six formats (about 80,000
//! decodes with the HEC receiver and the reassembler's frames; 0.3 s). The long
//! campaign, counts from the environment:
//!
//! `XLAYER_FUZZ_CASES=1000000 cargo test -p xlayer-proto --test atm_decoders -- --ignored --nocapture`
//!
//! (the test profile is already optimized, opt-level 2).
//!
//! Its counts are in docs/testing.md.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::fmt::Debug;
use xlayer_proto::l2::atm::aal5::{self, Aal5Reassembler, Aal5Sdu};
use xlayer_proto::l2::atm::aalx::{ControlPacket, CpArqPdu, CpcsPdu};
use xlayer_proto::l2::atm::crc::{crc10_atm_bits, crc16_x25, crc32_aal5, hec};
use xlayer_proto::l2::atm::rm::{AbrRate, RmCell, RmDir};
use xlayer_proto::l2::atm::{Cell, CellHeader, HecReceiver, Pti};

/// Outcomes of one decoder.
#[derive(Default)]
struct Tally {
    inputs: u64,
    accepted: u64,
    round_trips: u64,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn record<T, E: Debug + std::fmt::Display>(&mut self, r: &Result<T, E>) {
        self.inputs += 1;
        match r {
            Ok(_) => self.accepted += 1,
            Err(e) => {
                // Typed: the variant name, and a message that says something.
                assert!(!e.to_string().is_empty());
                let d = format!("{e:?}");
                let kind = d.split(|c: char| !c.is_alphanumeric()).next().unwrap().to_string();
                *self.errors.entry(kind).or_default() += 1;
            }
        }
    }
}

type Rng64 = Xoshiro256PlusPlus;

fn random_bytes(rng: &mut Rng64, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.random()).collect()
}

/// Random octets, dense or (half the time) mostly zero, so that zero-valued fields
/// (CPI = 0, Length = 0) turn up.
fn noise(rng: &mut Rng64, n: usize) -> Vec<u8> {
    if rng.random_bool(0.5) {
        random_bytes(rng, n)
    } else {
        (0..n).map(|_| if rng.random_bool(0.9) { 0 } else { rng.random() }).collect()
    }
}

/// A length near a multiple of 48 most of the time, anything up to `max` otherwise.
fn random_len(rng: &mut Rng64, max: usize) -> usize {
    if rng.random_bool(0.7) {
        let cells = rng.random_range(0..=max / 48);
        (cells * 48).saturating_add_signed(rng.random_range(-1i32..=1) as isize).min(max)
    } else {
        rng.random_range(0..=max)
    }
}

/// Mutate valid octets: flips, truncation or extension; then `reseal` with probability ½.
fn mutate(rng: &mut Rng64, mut b: Vec<u8>, reseal: &dyn Fn(&mut [u8])) -> Vec<u8> {
    match rng.random_range(0..4) {
        0 | 1 => {
            for _ in 0..rng.random_range(1..=4) {
                if !b.is_empty() {
                    let i = rng.random_range(0..b.len() * 8);
                    b[i / 8] ^= 0x80 >> (i % 8);
                }
            }
        }
        2 => {
            let keep = rng.random_range(0..=b.len());
            b.truncate(keep);
        }
        _ => {
            let extra = if rng.random_bool(0.5) { 48 * rng.random_range(1..=3) } else { rng.random_range(1..=100) };
            b.extend(random_bytes(rng, extra));
        }
    }
    if rng.random_bool(0.5) {
        reseal(&mut b);
    }
    b
}

fn reseal_hec(b: &mut [u8]) {
    if b.len() >= 5 {
        b[4] = hec(&[b[0], b[1], b[2], b[3]]);
    }
}

fn reseal_crc32(b: &mut [u8]) {
    let n = b.len();
    if n >= 4 {
        let c = crc32_aal5(&b[..n - 4]);
        b[n - 4..].copy_from_slice(&c.to_be_bytes());
    }
}

/// CRC-16 at `end − back .. end − back + 2` over everything before it, low octet first.
fn reseal_crc16(b: &mut [u8], back: usize) {
    let n = b.len();
    if n >= back {
        let c = crc16_x25(&b[..n - back]);
        b[n - back..n - back + 2].copy_from_slice(&c.to_le_bytes());
    }
}

/// CRC-10 in the last 10 bits of a 48-octet RM payload, over the 374 bits before it.
fn reseal_crc10(b: &mut [u8]) {
    if b.len() == 48 {
        b[46] &= 0xFC;
        b[47] = 0;
        let c = crc10_atm_bits(b, 374);
        b[46] |= (c >> 8) as u8;
        b[47] = c as u8;
    }
}

fn random_header(rng: &mut Rng64) -> CellHeader {
    CellHeader {
        gfc: rng.random_range(0..16),
        vpi: rng.random(),
        vci: rng.random(),
        pti: Pti::from_bits(rng.random_range(0..8)),
        clp: rng.random(),
    }
}

fn fuzz_cells(rng: &mut Rng64, cases: u64) -> [Tally; 2] {
    let (mut dec, mut corr) = (Tally::default(), Tally::default());
    let mut receiver = HecReceiver::new();
    for _ in 0..cases {
        let mut payload = [0u8; 48];
        rng.fill(&mut payload[..]);
        let valid = Cell { header: random_header(rng), payload };
        let enc = valid.encode().unwrap();
        let input = match rng.random_range(0..3) {
            0 => {
                assert_eq!(Cell::decode(&enc), Ok(valid));
                dec.round_trips += 1;
                enc.to_vec()
            }
            1 => mutate(rng, enc.to_vec(), &reseal_hec),
            _ => {
                let n = if rng.random_bool(0.7) { 53 } else { rng.random_range(0..=60) };
                let mut b = noise(rng, n);
                if rng.random_bool(0.5) {
                    reseal_hec(&mut b);
                }
                b
            }
        };
        let r = Cell::decode(&input);
        dec.record(&r);
        if let Ok(c) = r {
            assert_eq!(c.encode().unwrap()[..], input[..], "a cell has one encoding");
        }
        if input.len() >= 5 {
            let r = receiver.receive(&input[..5]);
            corr.record(&r);
            if let Ok(h) = r {
                let mut fixed = h.header.encode().unwrap();
                if let Some(bit) = h.corrected_bit {
                    fixed[usize::from(bit / 8)] ^= 0x80 >> (bit % 8);
                }
                assert_eq!(fixed[..], input[..5], "the correction undoes exactly one bit");
                corr.round_trips += 1;
            }
        }
    }
    [dec, corr]
}

fn fuzz_aal5(rng: &mut Rng64, cases: u64) -> [Tally; 2] {
    let (mut dec, mut rea) = (Tally::default(), Tally::default());
    let mut reassembler = Aal5Reassembler::new(aal5::MAX_SDU_BYTES);
    let max_cells = aal5::cells_for(aal5::MAX_SDU_BYTES);
    for _ in 0..cases {
        let l =
            if rng.random_bool(0.01) { rng.random_range(1..=aal5::MAX_SDU_BYTES) } else { rng.random_range(1..=2000) };
        let sdu = Aal5Sdu { payload: random_bytes(rng, l), uu: rng.random() };
        let enc = aal5::encode_pdu(&sdu.payload, sdu.uu).unwrap();
        let input = match rng.random_range(0..3) {
            0 => {
                assert_eq!(aal5::decode_pdu(&enc, aal5::MAX_SDU_BYTES).as_ref(), Ok(&sdu));
                dec.round_trips += 1;
                enc.clone()
            }
            1 => mutate(rng, enc.clone(), &reseal_crc32),
            _ => {
                let n = random_len(rng, 3000);
                let mut b = noise(rng, n);
                if rng.random_bool(0.5) {
                    reseal_crc32(&mut b);
                }
                b
            }
        };
        let max_sdu =
            if rng.random_bool(0.1) { rng.random_range(0..=aal5::MAX_SDU_BYTES) } else { aal5::MAX_SDU_BYTES };
        let r = aal5::decode_pdu(&input, max_sdu);
        dec.record(&r);
        if let Ok(s) = r {
            assert!(!s.payload.is_empty() && s.payload.len() <= max_sdu);
            let again = aal5::encode_pdu(&s.payload, s.uu).unwrap();
            assert_eq!(again.len(), input.len());
            assert_eq!(aal5::decode_pdu(&again, max_sdu), Ok(s));
        }
        // The reassembler: the valid frame's cells, some dropped, AUU sometimes flipped.
        let drop_p = [0.0, 0.0, 0.02, 0.2][rng.random_range(0..4)];
        let cells: Vec<_> = aal5::segment(&enc).collect();
        // A lossless frame into an empty reassembler must come out whole.
        let lossless = drop_p == 0.0 && reassembler.buffered_bytes() == 0;
        for (c, auu) in cells {
            if rng.random_bool(drop_p) {
                continue;
            }
            let auu = if rng.random_bool(drop_p) { !auu } else { auu };
            if let Some(r) = reassembler.push(&c, auu) {
                rea.record(&r);
                if lossless {
                    assert_eq!(r.as_ref(), Ok(&sdu));
                    rea.round_trips += 1;
                }
            }
            assert!(reassembler.buffered_bytes() <= max_cells * 48);
        }
    }
    [dec, rea]
}

fn fuzz_cpcs(rng: &mut Rng64, cases: u64) -> Tally {
    let mut t = Tally::default();
    for _ in 0..cases {
        let l = if rng.random_bool(0.01) { rng.random_range(1..=65_535) } else { rng.random_range(1..=2000) };
        let pdu = CpcsPdu { tag: rng.random(), payload: random_bytes(rng, l) };
        let enc = pdu.encode().unwrap();
        let input = match rng.random_range(0..3) {
            0 => {
                assert_eq!(CpcsPdu::decode(&enc).as_ref(), Ok(&pdu));
                t.round_trips += 1;
                enc
            }
            1 => mutate(rng, enc, &|_| {}),
            _ => {
                let n = random_len(rng, 3000);
                noise(rng, n)
            }
        };
        let r = CpcsPdu::decode(&input);
        t.record(&r);
        if let Ok(p) = r {
            assert_eq!(input[..p.wire_bytes()], p.encode().unwrap()[..]);
            assert!(input.len() - p.wire_bytes() <= 47);
        }
    }
    t
}

fn fuzz_cp_arq(rng: &mut Rng64, cases: u64) -> Tally {
    let mut t = Tally::default();
    for _ in 0..cases {
        let l = if rng.random_bool(0.5) { 48 * rng.random_range(1..=40) - 4 } else { rng.random_range(1..=2000) };
        let pdu = CpArqPdu { sn: rng.random(), payload: random_bytes(rng, l) };
        let enc = pdu.encode().unwrap();
        let input = match rng.random_range(0..3) {
            0 => {
                let got = CpArqPdu::decode(&enc).unwrap();
                assert_eq!(got.sn, pdu.sn);
                assert_eq!(got.payload[..l], pdu.payload[..]);
                assert!(got.payload[l..].iter().all(|&x| x == 0));
                assert_eq!(got.payload.len(), l + CpArqPdu::pad_len(l));
                t.round_trips += 1;
                enc
            }
            1 => mutate(rng, enc, &|b| reseal_crc16(b, 2)),
            _ => {
                let n = random_len(rng, 3000);
                let mut b = noise(rng, n);
                if rng.random_bool(0.5) {
                    reseal_crc16(&mut b, 2);
                }
                b
            }
        };
        let r = CpArqPdu::decode(&input);
        t.record(&r);
        if let Ok(p) = r {
            assert_eq!(p.encode().unwrap(), input, "a CP-ARQ PDU has one encoding");
        }
    }
    t
}

fn fuzz_control(rng: &mut Rng64, cases: u64) -> Tally {
    let mut t = Tally::default();
    for _ in 0..cases {
        let li = if rng.random_bool(0.01) { rng.random_range(0..=1 << 15) } else { rng.random_range(0..=800) };
        let pkt = ControlPacket { tag: rng.random(), msn: rng.random(), bmap: (0..li).map(|_| rng.random()).collect() };
        let enc = pkt.encode().unwrap();
        let input = match rng.random_range(0..3) {
            0 => {
                assert_eq!(ControlPacket::decode(&enc).as_ref(), Ok(&pkt));
                t.round_trips += 1;
                enc
            }
            1 => mutate(rng, enc, &|b| reseal_crc16(b, 3)),
            _ => {
                let n = random_len(rng, 300);
                let mut b = noise(rng, n);
                if rng.random_bool(0.5) {
                    reseal_crc16(&mut b, 3);
                }
                if rng.random_bool(0.5) && !b.is_empty() {
                    let n = b.len();
                    b[n - 1] = b[0];
                }
                b
            }
        };
        let r = ControlPacket::decode(&input);
        t.record(&r);
        if let Ok(p) = r {
            assert_eq!(p.wire_bytes(), input.len());
            assert_eq!(ControlPacket::decode(&p.encode().unwrap()), Ok(p));
        }
    }
    t
}

fn fuzz_rm(rng: &mut Rng64, cases: u64) -> Tally {
    let mut t = Tally::default();
    for _ in 0..cases {
        let rm = RmCell {
            dir: if rng.random() { RmDir::Backward } else { RmDir::Forward },
            bn: rng.random(),
            ci: rng.random(),
            ni: rng.random(),
            ra: rng.random(),
            er: AbrRate::from_bits(rng.random()),
            ccr: AbrRate::from_bits(rng.random()),
            mcr: AbrRate::from_bits(rng.random()),
            ql: rng.random(),
            sn: rng.random(),
        };
        let enc = rm.encode();
        let input = match rng.random_range(0..3) {
            0 => {
                assert_eq!(RmCell::decode(&enc), Ok(rm));
                t.round_trips += 1;
                enc.to_vec()
            }
            1 => mutate(rng, enc.to_vec(), &reseal_crc10),
            _ => {
                let n = if rng.random_bool(0.8) { 48 } else { rng.random_range(0..=60) };
                let mut b = noise(rng, n);
                if rng.random_bool(0.5) {
                    if rng.random_bool(0.5) && !b.is_empty() {
                        b[0] = 1; // reach the fields behind the protocol ID
                    }
                    reseal_crc10(&mut b);
                }
                b
            }
        };
        let r = RmCell::decode(&input);
        t.record(&r);
        if let Ok(c) = r {
            assert_eq!(RmCell::decode(&c.encode()), Ok(c), "an accepted RM cell re-encodes to itself");
        }
    }
    t
}

fn campaign(cases: u64, seed: u64) -> Vec<(&'static str, Tally)> {
    let mut rng = Rng64::seed_from_u64(seed);
    let [cell, hec_rx] = fuzz_cells(&mut rng, cases);
    let [aal5_pdu, aal5_rx] = fuzz_aal5(&mut rng, cases);
    vec![
        ("cell (HEC detection)", cell),
        ("cell header (HEC receiver)", hec_rx),
        ("AAL5 CPCS-PDU", aal5_pdu),
        ("AAL5 reassembler (frames)", aal5_rx),
        ("AAL-X CPCS-PDU", fuzz_cpcs(&mut rng, cases)),
        ("AAL-X CP-ARQ PDU", fuzz_cp_arq(&mut rng, cases)),
        ("AAL-X control packet", fuzz_control(&mut rng, cases)),
        ("ABR RM cell", fuzz_rm(&mut rng, cases)),
    ]
}

fn report(tallies: &[(&str, Tally)]) {
    println!("| decoder | inputs | accepted | round trips | errors by kind |");
    println!("|---|---:|---:|---:|---|");
    for (name, t) in tallies {
        let kinds: Vec<String> = t.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("| {name} | {} | {} | {} | {} |", t.inputs, t.accepted, t.round_trips, kinds.join(", "));
    }
}

/// Every decoder saw errors of more than one kind, round-tripped valid inputs, and
/// accepted some inputs that were not generated valid.
fn check_coverage(tallies: &[(&str, Tally)]) {
    for (name, t) in tallies {
        assert!(t.accepted > 0 && t.round_trips > 0, "{name}");
        assert!(!t.errors.is_empty(), "{name}: no errors drawn");
    }
}

#[test]
fn atm_decoders_default_budget() {
    let tallies = campaign(10_000, 1);
    report(&tallies);
    check_coverage(&tallies);
}

#[test]
#[ignore = "long campaign: 1M inputs per decoder; run with --ignored --nocapture"]
fn atm_decoders_long_campaign() {
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let tallies = campaign(env("XLAYER_FUZZ_CASES", 1_000_000), env("XLAYER_FUZZ_SEED", 1));
    report(&tallies);
    check_coverage(&tallies);
}

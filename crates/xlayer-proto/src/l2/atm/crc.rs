//! The three CRCs of the ATM path, from the `crc` crate's catalogue (Reveng parameters).
//!
//! | use | catalogue name | poly | init | refl. | xorout | check("123456789") |
//! |---|---|---|---|---|---|---|
//! | AAL5 CPCS-PDU trailer (I.363.5) | CRC-32/BZIP2 | 0x04C11DB7 | 0xFFFFFFFF | no | 0xFFFFFFFF | 0xFC891918 |
//! | AAL-X CP-ARQ PDU and control packet (Akyildiz & Joe §2.2) | CRC-16/IBM-SDLC (= X-25, HDLC FCS) | 0x1021 | 0xFFFF | yes | 0xFFFF | 0x906E |
//! | cell header HEC (I.432.1 §7.3.2) | CRC-8/I-432-1 | 0x07 | 0x00 | no | 0x55 | 0xA1 |
//! | RM cell (ATM Forum TM 4.0 §5.10.3.1; as OAM cells, I.610) | CRC-10/ATM | 0x233 | 0x000 | no | 0x000 | 0x199 |
//!
//! **CRC-16 choice.** Akyildiz & Joe name only "CRC-16". protocol-notes §8 proposes
//! CRC-16-CCITT (x¹⁶ + x¹² + x⁵ + 1) and the X-25 / HDLC-FCS variant when the CRC
//! protects a frame on a radio link; a CP-ARQ PDU crosses the wireless hop, so we use
//! the non-zero init detects leading zero octets and the final complement detects
//! appended zeros, which a zero-init, zero-xorout variant (XMODEM, KERMIT) misses.
//!
//! **HEC.** I.432.1 §7.3.2: the remainder of x⁸ · (header octets 1–4) divided by
//! x⁸ + x² + x + 1, XORed with the coset 01010101. Without the coset this is CRC-8/SMBUS
//! (check 0xF4); 0xF4 ⊕ 0x55 = 0xA1. The syndrome table for single-bit correction is in
//! [`hec_syndrome_bit`].

use crc::{Crc, CRC_16_IBM_SDLC, CRC_32_BZIP2, CRC_8_I_432_1};

/// x¹⁰ + x⁹ + x⁵ + x⁴ + x + 1 without its x¹⁰ term.
const CRC10_POLY: u16 = 0x233;

const AAL5: Crc<u32> = Crc::<u32>::new(&CRC_32_BZIP2);
const X25: Crc<u16> = Crc::<u16>::new(&CRC_16_IBM_SDLC);
const HEC: Crc<u8> = Crc::<u8>::new(&CRC_8_I_432_1);

/// AAL5 CRC-32 (I.363.5 CPCS-PDU trailer): over payload, PAD, CPCS-UU, CPI and Length.
pub fn crc32_aal5(bytes: &[u8]) -> u32 {
    AAL5.checksum(bytes)
}

/// AAL-X CRC-16 (X-25 / HDLC FCS; see the module docs for the choice).
pub fn crc16_x25(bytes: &[u8]) -> u16 {
    X25.checksum(bytes)
}

/// CRC-10/ATM over the first `bits` bits of `bytes` (MSB of each octet first): the
/// remainder of x¹⁰ · M(x) modulo the generator. An RM cell's CRC covers 374 bits (its
/// payload up to the CRC field), which is not a whole number of octets, hence bits.
/// Over a whole protected unit (message then CRC) the remainder is zero.
pub fn crc10_atm_bits(bytes: &[u8], bits: usize) -> u16 {
    assert!(bits <= bytes.len() * 8, "crc10: {bits} bits asked of {} octets", bytes.len());
    let mut crc: u16 = 0;
    for i in 0..bits {
        let bit = u16::from(bytes[i / 8] >> (7 - i % 8)) & 1;
        let top = (crc >> 9) & 1;
        crc = (crc << 1) & 0x3FF;
        if top ^ bit != 0 {
            crc ^= CRC10_POLY;
        }
    }
    crc
}

/// The HEC octet of a cell header's first four octets, coset included (I.432.1 §7.3.2).
pub fn hec(header: &[u8; 4]) -> u8 {
    HEC.checksum(header)
}

/// The syndrome of a received 5-octet header: `hec(octets 1–4) ⊕ octet 5`; zero means no
/// error detected. The code is linear once the coset cancels, so a single-bit error's
/// syndrome depends only on its position.
pub fn hec_syndrome(header: &[u8; 5]) -> u8 {
    hec(&[header[0], header[1], header[2], header[3]]) ^ header[4]
}

/// The bit position (0 = MSB of octet 1, … 39 = LSB of the HEC octet) whose single flip
/// produces `syndrome`, if any (I.432.1 §7.3.2, correction mode). x⁸ + x² + x + 1 =
/// (x + 1)(x⁷ + x⁶ + x⁵ + x⁴ + x³ + x² + 1) with the second factor primitive, so over 40
/// bits the 40 single-bit syndromes are distinct and odd-weight, and no double-bit error
/// shares one (tested).
pub fn hec_syndrome_bit(syndrome: u8) -> Option<u8> {
    SINGLE_BIT_SYNDROMES.iter().position(|&s| s == syndrome).map(|p| p as u8)
}

/// Syndrome of a flip of bit `i` of the 40-bit header, computed at compile time.
const SINGLE_BIT_SYNDROMES: [u8; 40] = single_bit_syndromes();

const fn single_bit_syndromes() -> [u8; 40] {
    let mut out = [0u8; 40];
    let mut i = 0;
    while i < 40 {
        let mut h = [0u8; 4];
        if i < 32 {
            h[i / 8] = 0x80 >> (i % 8);
            // Linear part only: the coset and the zero init cancel in a syndrome.
            out[i] = HEC.checksum(&h) ^ HEC.checksum(&[0, 0, 0, 0]);
        } else {
            out[i] = 0x80 >> (i - 32);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crc::CRC_8_SMBUS;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn catalogue_check_values() {
        assert_eq!(crc32_aal5(CHECK), 0xFC89_1918);
        assert_eq!(crc16_x25(CHECK), 0x906E);
        assert_eq!(Crc::<u8>::new(&CRC_8_SMBUS).checksum(CHECK), 0xF4);
        assert_eq!(HEC.checksum(CHECK), 0xA1);
        assert_eq!(0xF4 ^ 0x55, 0xA1);
    }

    #[test]
    fn crc10_matches_the_catalogue() {
        assert_eq!(crc10_atm_bits(CHECK, 72), 0x199);
        let cat = Crc::<u16>::new(&crc::CRC_10_ATM);
        let msg: Vec<u8> = (0..46u8).map(|i| i.wrapping_mul(37) ^ 0x5A).collect();
        assert_eq!(crc10_atm_bits(&msg, 46 * 8), cat.checksum(&msg));
        // Message then CRC leaves remainder zero, at a bit length that is not whole octets.
        let mut b = [0u8; 48];
        b[..46].copy_from_slice(&msg);
        b[46] = 0xA8; // 6 more message bits: 101010
        let c = crc10_atm_bits(&b, 374);
        b[46] |= (c >> 8) as u8;
        b[47] = c as u8;
        assert_eq!(crc10_atm_bits(&b, 384), 0);
    }

    #[test]
    fn aal5_crc_is_not_the_ethernet_crc() {
        assert_ne!(crc32_aal5(CHECK), 0xCBF4_3926);
    }

    /// I.432.1 appendix-style example: an idle cell header 00 00 00 01 has HEC 0x52.
    #[test]
    fn hec_of_idle_cell_header() {
        assert_eq!(hec(&[0, 0, 0, 1]), 0x52);
        assert_eq!(hec(&[0, 0, 0, 0]), 0x55);
    }

    #[test]
    fn single_bit_syndromes_are_distinct_nonzero_and_odd() {
        for (i, &s) in SINGLE_BIT_SYNDROMES.iter().enumerate() {
            assert_ne!(s, 0);
            assert_eq!(s.count_ones() % 2, 1, "bit {i}");
            assert_eq!(hec_syndrome_bit(s), Some(i as u8));
        }
    }

    #[test]
    fn syndrome_of_a_flip_matches_the_table_for_any_header() {
        let mut h = [0x12, 0x34, 0x56, 0x78, 0];
        h[4] = hec(&[h[0], h[1], h[2], h[3]]);
        assert_eq!(hec_syndrome(&h), 0);
        for bit in 0..40 {
            let mut e = h;
            e[bit / 8] ^= 0x80 >> (bit % 8);
            assert_eq!(hec_syndrome_bit(hec_syndrome(&e)), Some(bit as u8));
        }
    }

    #[test]
    fn no_double_bit_error_looks_like_a_single_bit_error() {
        for (a, &sa) in SINGLE_BIT_SYNDROMES.iter().enumerate() {
            for (b, &sb) in SINGLE_BIT_SYNDROMES.iter().enumerate().skip(a + 1) {
                let s = sa ^ sb;
                assert_ne!(s, 0);
                assert_eq!(hec_syndrome_bit(s), None, "bits {a},{b}");
            }
        }
    }
}

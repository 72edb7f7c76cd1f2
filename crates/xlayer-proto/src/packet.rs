//! The packet every model passes around: a small value type, moved, never shared.
//!
//! Headers are modelled as fields (seq, ack, window), not bytes; the pcap writer renders
//! real IPv4/TCP/UDP headers from them. Cross-layer annotations (e.g. an access point's
//! congestion price) ride in an optional pointer, so packets of protocols that ignore
//! them carry one null pointer and no allocation. The parts behind pointers (a datagram's
//! header bytes, the annotations) are reference-counted and immutable once shared, so
//! the copies a multicast tree or a broadcast radio hop makes of a packet allocate
//! nothing.

use std::collections::VecDeque;
use std::sync::Arc;

/// Network-layer address: a node, or (top bit set) a group of nodes. Rendered in
/// captures as an IPv4 unicast address, or for groups an address in 239.0.0.0/8
/// (administratively scoped multicast, RFC 2365).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr(pub u32);

impl Addr {
    const GROUP_BIT: u32 = 1 << 31;

    /// The address of group number `g`.
    pub fn group(g: u32) -> Addr {
        debug_assert!(g < Self::GROUP_BIT);
        Addr(g | Self::GROUP_BIT)
    }
    pub fn is_group(self) -> bool {
        self.0 & Self::GROUP_BIT != 0
    }
    /// The group number, for group addresses.
    pub fn group_index(self) -> Option<u32> {
        self.is_group().then_some(self.0 & !Self::GROUP_BIT)
    }
}

/// The service class a flow's packets ask of link layers that tell classes apart
/// (e.g. the W-CDMA L2 priority scheduler of Koga et al. §3.1). Set from the flow spec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrafficClass {
    /// Real-time traffic (voice, video): served first where classes are scheduled.
    RealTime,
    /// Everything else.
    #[default]
    BestEffort,
}

/// Index of a flow in the scenario (stable, dense, starting at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// IPv4 header bytes (no options).
pub const IPV4_HEADER_BYTES: u32 = 20;
/// TCP header bytes (no options).
pub const TCP_HEADER_BYTES: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;

pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

/// TCP header fields. Sequence numbers are 64-bit byte offsets from the start of the
/// stream (never wrap inside the simulator; captures render them modulo 2^32).
///
/// The only option modelled is SACK (RFC 2018). Its blocks live out of line, so a header
/// without them (every header while SACK is off) costs no allocation, and the count's
/// enum gives [`Transport`] a niche for its tag: `Packet` stays at 88 bytes. Build headers
/// with `..TcpHeader::default()` for the option fields; read and write the blocks with
/// [`TcpHeader::sack`] and [`TcpHeader::set_sack`], which keep the two fields consistent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub seq: u64,
    pub ack: u64,
    /// Advertised receive window in bytes (unscaled).
    pub window_bytes: u32,
    pub flags: u8,
    pub payload_bytes: u32,
    /// How many SACK blocks the header carries (`Zero`: no SACK option).
    pub sack_len: SackLen,
    /// The blocks; the first `sack_len` are meaningful. `None` exactly when `sack_len` is `Zero`.
    pub sack_blocks: Option<Box<[SackBlock; MAX_SACK_BLOCKS]>>,
}

/// SACK blocks per ACK. The 40-byte option space holds 4 blocks alone, 3 beside the
/// timestamp option (RFC 2018 §3); 3 is what timestamp-using stacks (Linux, ns-3) send.
pub const MAX_SACK_BLOCKS: usize = 3;

/// One RFC 2018 §3 block: the receiver holds bytes `[left, right)` above the cumulative
/// ACK ("left edge" = first byte, "right edge" = the byte after the last).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct SackBlock {
    pub left: u64,
    pub right: u64,
}

/// Number of SACK blocks in a header, 0..=[`MAX_SACK_BLOCKS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum SackLen {
    #[default]
    Zero,
    One,
    Two,
    Three,
}

impl TcpHeader {
    /// The SACK blocks carried, most recently reported first (RFC 2018 §4).
    pub fn sack(&self) -> &[SackBlock] {
        match &self.sack_blocks {
            Some(b) => &b[..self.sack_len as usize],
            None => &[],
        }
    }

    /// Replaces the SACK option: at most [`MAX_SACK_BLOCKS`] non-empty blocks (an empty
    /// slice removes the option).
    pub fn set_sack(&mut self, blocks: &[SackBlock]) {
        assert!(blocks.len() <= MAX_SACK_BLOCKS, "at most {MAX_SACK_BLOCKS} SACK blocks");
        debug_assert!(blocks.iter().all(|b| b.left < b.right), "empty SACK block");
        self.sack_len = [SackLen::Zero, SackLen::One, SackLen::Two, SackLen::Three][blocks.len()];
        self.sack_blocks = (!blocks.is_empty()).then(|| {
            let mut arr = [SackBlock::default(); MAX_SACK_BLOCKS];
            arr[..blocks.len()].copy_from_slice(blocks);
            Box::new(arr)
        });
    }

    /// Bytes of TCP options on the wire: the SACK option (kind 5, length 2 + 8n, RFC 2018
    /// §3) behind two NOPs that align it to 4 bytes, as Linux and BSD emit it.
    pub fn options_bytes(&self) -> u32 {
        match self.sack_len {
            SackLen::Zero => 0,
            n => 2 + 2 + 8 * n as u32,
        }
    }

    /// TCP header bytes on the wire, options included.
    pub fn header_bytes(&self) -> u32 {
        TCP_HEADER_BYTES + self.options_bytes()
    }
}

/// UDP datagram fields; `seq` is an application sequence number used for loss and
/// reordering accounting (it is not on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    pub seq: u64,
    pub payload_bytes: u32,
}

/// A UDP datagram whose payload starts with a header the endpoint encoded itself: the
/// way transports that run over UDP (the reliable UDP under DBP, say) put their own
/// byte format on the wire. Captures show these bytes at the start of the UDP payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    /// The transport's header, as its bytes on the wire (shared by a packet's copies).
    pub header: Arc<[u8]>,
    /// UDP payload bytes, the header included.
    pub payload_bytes: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp(TcpHeader),
    Udp(UdpHeader),
    Datagram(Datagram),
}

/// Information network elements may attach for receivers that want it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Annotations {
    /// Congestion price stamped by an access point (seconds of queueing per byte, as the
    /// stamping agent defines it), e.g. CLAMP Andrew & Hanly §IV.
    pub price: Option<f64>,
    /// Layer-2 information a radio link stamps on the packets it delivers, for the
    /// receiving host's cross-layer agents (Koga et al. §3.2): the link's nominal rate...
    pub l2_link_rate_bps: Option<f64>,
    /// ...its one-way delay (the "propagation delay" of Koga et al. eq. (1))...
    pub l2_link_delay_s: Option<f64>,
    /// ...and the most link-layer retransmissions any piece of this packet needed.
    pub l2_retransmissions: Option<u32>,
    /// The MBMS Node-B packet-loss indication (Alexiou, Bouras, Papazois §4): `true` when
    /// the Node B saw a loss of this flow's packets before this one (upstream, or in its
    /// own buffer) since the last packet it passed on. A receiver that sees a gap in
    /// sequence ending at a packet marked `false` knows the loss happened on the radio.
    pub upstream_loss: Option<bool>,
}

/// Direction of a packet within its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Source to destination (data).
    Forward,
    /// Destination to source (acknowledgements).
    Reverse,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Packet {
    /// Unique within a run; renders as the IPv4 identification field.
    pub uid: u64,
    pub flow: FlowId,
    pub dir: Dir,
    pub src: Addr,
    pub dst: Addr,
    /// Size on the wire at the IP layer, headers included.
    pub size_bytes: u32,
    /// When the transport handed the packet to the network (for one-way delay).
    pub sent_at: crate::SimTime,
    pub class: TrafficClass,
    pub transport: Transport,
    /// Shared by a packet's copies until one of them is annotated ([`Packet::notes_mut`]).
    pub notes: Option<Arc<Annotations>>,
}

impl Packet {
    pub fn tcp(&self) -> Option<&TcpHeader> {
        match &self.transport {
            Transport::Tcp(h) => Some(h),
            _ => None,
        }
    }
    /// A forward-direction UDP datagram of `size_bytes` at the IP layer (headers
    /// included) carrying application sequence number `seq`.
    pub fn udp(uid: u64, flow: FlowId, src: Addr, dst: Addr, size_bytes: u32, seq: u64) -> Packet {
        let payload = size_bytes - IPV4_HEADER_BYTES - UDP_HEADER_BYTES;
        Packet {
            uid,
            flow,
            dir: Dir::Forward,
            src,
            dst,
            size_bytes,
            sent_at: crate::SimTime::ZERO,
            class: TrafficClass::RealTime,
            transport: Transport::Udp(UdpHeader { seq, payload_bytes: payload }),
            notes: None,
        }
    }

    /// Whether the packet holds nothing on the heap (no annotations, no SACK blocks, no
    /// encoded header), so that dropping it frees nothing: most packets. Every field is
    /// named, so a field added to a packet or its headers must be considered here.
    pub fn owns_nothing(&self) -> bool {
        let Packet { uid: _, flow: _, dir: _, src: _, dst: _, size_bytes: _, sent_at: _, class: _, transport, notes } =
            self;
        notes.is_none()
            && match transport {
                Transport::Tcp(TcpHeader {
                    seq: _,
                    ack: _,
                    window_bytes: _,
                    flags: _,
                    payload_bytes: _,
                    sack_len: _,
                    sack_blocks,
                }) => sack_blocks.is_none(),
                Transport::Udp(UdpHeader { seq: _, payload_bytes: _ }) => true,
                Transport::Datagram(_) => false,
            }
    }

    /// Mutable annotations, allocated on first use, and copied first if another copy of
    /// the packet shares them.
    pub fn notes_mut(&mut self) -> &mut Annotations {
        Arc::make_mut(self.notes.get_or_insert_with(Default::default))
    }
}

/// Annotation records an element lends to the packets it annotates, each reused once
/// the packet that held it is gone, so that an element annotating every packet it
/// passes on (CLAMP's access point) does not allocate a record per packet. A packet
/// annotated from the pool carries what [`Packet::notes_mut`] would have given it; the
/// pool's own reference only makes a later [`Packet::notes_mut`] on it copy the record
/// first, as it would for a packet's copies.
#[derive(Clone, Debug, Default)]
pub struct LentNotes {
    /// Records lent, oldest first; each free again when the pool holds its only reference.
    lent: VecDeque<Arc<Annotations>>,
}

impl LentNotes {
    /// Records kept at most: beyond this a record still held by a packet is let go to it.
    const MAX: usize = 1024;

    /// `annotate` the packet's annotations: its own if it has some (as
    /// [`Packet::notes_mut`]), else a fresh record, the oldest lent one if it is free.
    /// Records lent go back in order, so with packets delivered about in the order they
    /// were annotated the pool holds about as many records as packets in flight.
    pub fn annotate(&mut self, pkt: &mut Packet, annotate: impl FnOnce(&mut Annotations)) {
        if pkt.notes.is_some() {
            return annotate(pkt.notes_mut());
        }
        let mut rec = match self.lent.pop_front() {
            Some(r) if Arc::strong_count(&r) == 1 && Arc::weak_count(&r) == 0 => r,
            Some(held) => {
                if self.lent.len() + 2 <= Self::MAX {
                    self.lent.push_back(held); // to be looked at again after the others
                }
                Arc::default()
            }
            None => Arc::default(),
        };
        let notes = Arc::get_mut(&mut rec).expect("no packet holds the record");
        *notes = Annotations::default();
        annotate(notes);
        self.lent.push_back(Arc::clone(&rec));
        pkt.notes = Some(rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exactly the packets holding an allocation (annotations, SACK blocks, an encoded
    /// header) own something.
    #[test]
    fn a_packet_owns_nothing_unless_it_holds_an_allocation() {
        let udp = Packet::udp(1, FlowId(0), Addr(0), Addr(1), 100, 1);
        let tcp = Packet { transport: Transport::Tcp(TcpHeader::default()), ..udp.clone() };
        assert!(udp.owns_nothing() && tcp.owns_nothing());
        let mut noted = udp.clone();
        noted.notes_mut().price = Some(1.0);
        let mut sack = TcpHeader::default();
        sack.set_sack(&[SackBlock { left: 1, right: 2 }]);
        let datagram = Datagram { header: Arc::from(&[1u8, 2][..]), payload_bytes: 2 };
        for owner in [
            noted,
            Packet { transport: Transport::Tcp(sack), ..udp.clone() },
            Packet { transport: Transport::Datagram(datagram), ..udp },
        ] {
            assert!(!owner.owns_nothing(), "{owner:?}");
        }
    }

    #[test]
    fn packets_without_annotations_stay_small() {
        // One pointer-sized null for the annotations; the whole packet fits in 88 bytes
        // (it is moved through the event queue on every hop).
        assert_eq!(std::mem::size_of::<Option<Arc<Annotations>>>(), 8);
        assert!(std::mem::size_of::<Packet>() <= 88, "{}", std::mem::size_of::<Packet>());
        // The SACK count's niche holds Transport's tag.
        assert_eq!(std::mem::size_of::<Transport>(), std::mem::size_of::<TcpHeader>());
    }

    fn udp(uid: u64) -> Packet {
        Packet::udp(uid, FlowId(0), Addr(0), Addr(1), 1500, uid)
    }

    #[test]
    fn lent_notes_annotate_as_notes_mut_and_reuse_records_once_free() {
        let mut pool = LentNotes::default();
        let (mut a, mut b) = (udp(1), udp(2));
        pool.annotate(&mut a, |n| n.price = Some(1.0));
        pool.annotate(&mut b, |n| n.upstream_loss = Some(true));
        let mut want = udp(1);
        want.notes_mut().price = Some(1.0);
        assert_eq!(a, want, "the same packet as notes_mut gives");
        let first = Arc::as_ptr(a.notes.as_ref().unwrap());
        // Both records are held: a third packet gets a new one.
        let mut c = udp(3);
        pool.annotate(&mut c, |n| n.price = Some(3.0));
        assert_ne!(Arc::as_ptr(c.notes.as_ref().unwrap()), first);
        drop(a);
        // The first record is free again (it was moved behind the others while held,
        // so it comes round after the second, which `b` still holds).
        let mut d = udp(4);
        pool.annotate(&mut d, |n| n.price = Some(4.0));
        let mut e = udp(5);
        pool.annotate(&mut e, |n| n.price = Some(5.0));
        assert!([&d, &e].iter().any(|p| Arc::as_ptr(p.notes.as_ref().unwrap()) == first), "reused");
        for (p, price) in [(&b, None), (&c, Some(3.0)), (&d, Some(4.0)), (&e, Some(5.0))] {
            assert_eq!(p.notes.as_ref().unwrap().price, price, "records in use untouched; reused ones reset");
        }
        assert_eq!(b.notes.as_ref().unwrap().upstream_loss, Some(true));
        // A packet's own annotations are written in place (copied first if shared).
        let mut f = b.clone();
        pool.annotate(&mut f, |n| n.price = Some(6.0));
        assert_eq!((f.notes.as_ref().unwrap().price, b.notes.as_ref().unwrap().price), (Some(6.0), None));
        // A later notes_mut on an annotated packet leaves the pool's record alone.
        d.notes_mut().price = Some(7.0);
        assert_eq!(d.notes.as_ref().unwrap().price, Some(7.0));
    }

    #[test]
    fn lent_notes_stay_bounded_when_packets_are_kept() {
        let mut pool = LentNotes::default();
        let kept: Vec<Packet> = (0..3 * LentNotes::MAX as u64)
            .map(|uid| {
                let mut p = udp(uid);
                pool.annotate(&mut p, |n| n.price = Some(uid as f64));
                p
            })
            .collect();
        assert!(pool.lent.len() <= LentNotes::MAX);
        assert!(kept.iter().enumerate().all(|(i, p)| p.notes.as_ref().unwrap().price == Some(i as f64)));
        drop(kept);
        let mut p = udp(0);
        pool.annotate(&mut p, |n| n.price = Some(0.5));
        assert!(pool.lent.len() <= LentNotes::MAX);
    }

    fn block(left: u64, right: u64) -> SackBlock {
        SackBlock { left, right }
    }

    #[test]
    fn sack_option_sizes_follow_rfc2018_with_nop_padding() {
        let mut h = TcpHeader { ack: 1000, flags: tcp_flags::ACK, ..TcpHeader::default() };
        assert_eq!((h.options_bytes(), h.header_bytes()), (0, 20));
        assert!(h.sack().is_empty() && h.sack_blocks.is_none());
        // 2 NOPs + kind + length + 8 bytes per block: 12, 20, 28 (each a multiple of 4).
        let blocks = [block(3000, 4000), block(5000, 6000), block(7000, 9000)];
        for (n, want) in [(1, 12), (2, 20), (3, 28)] {
            h.set_sack(&blocks[..n]);
            assert_eq!(h.options_bytes(), want);
            assert_eq!(h.header_bytes(), 20 + want);
            assert_eq!(h.sack(), &blocks[..n], "order kept");
        }
        h.set_sack(&[]);
        assert_eq!((h.options_bytes(), h.sack_len), (0, SackLen::Zero));
        assert!(h.sack_blocks.is_none(), "no allocation without blocks");
    }

    #[test]
    #[should_panic(expected = "at most 3 SACK blocks")]
    fn more_than_three_blocks_are_refused() {
        let b = block(1, 2);
        TcpHeader::default().set_sack(&[b, b, b, b]);
    }
}

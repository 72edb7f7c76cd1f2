//! A hint to the CPU to start loading memory the next steps will read, so that its
//! cache misses overlap the work before them instead of stalling it.
#![allow(unsafe_code)]

/// Start loading the cache lines of the first `bytes` bytes of `x` (fewer if `x` is
/// smaller) into every level of the cache. Only a hint: it changes nothing the program
/// sees and cannot fault.
#[inline(always)]
pub fn prefetch<T: ?Sized>(x: &T, bytes: usize) {
    let start = (x as *const T).cast::<u8>();
    let end = start.wrapping_add(bytes.min(std::mem::size_of_val(x)));
    // From the line holding the first byte to the one holding the last.
    let mut line = start.wrapping_sub(start as usize % 64);
    while line < end {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE is part of the x86-64 baseline, and a prefetch is defined for any
        // address (it never faults); these lines hold bytes of `x` in any case.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.cast())
        };
        line = line.wrapping_add(64);
    }
}

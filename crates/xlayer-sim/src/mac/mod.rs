//! MAC-layer schedulers: given the users' instantaneous rates and who has data, pick who
//! transmits. A scheduler keeps its own averages; the link model owns the channels and
//! the queues.

pub mod pf;
